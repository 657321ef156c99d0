/**
 * The canonical request turned into a Gemini `GenerateContentRequest` body.
 * Vendor reference: https://ai.google.dev/api/generate-content#request-body (docs/wire-protocols.md §5.2,
 * mapping §5.6).
 */
import type { CanonicalRequest, ContentPart, InputItem, ResponseFormat, ToolChoice } from '../../protocol/canonical.js';
import { isRecord, parseJson } from '../../lib/json-value.js';
import type { ProviderCall } from '../provider.js';
import type { RememberedCall } from './call-memory.js';
import { imagePart, type GeminiMediaPart } from './media-parts.js';
import { toGeminiParameters } from './schema-subset.js';
import { mappedWebSearch } from '../shared/hosted-tools.js';
import { thinkingBudgetFor } from './thinking-budget.js';

type FunctionCallPart = { functionCall: { name: string; args: Record<string, unknown>; id?: string }; thoughtSignature?: string };

export type GeminiPart =
  | { text: string }
  | GeminiMediaPart
  | FunctionCallPart
  | { functionResponse: { name: string; response: { result: string }; id?: string } };

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

export interface GeminiGenerationConfig {
  maxOutputTokens: number;
  temperature?: number;
  topP?: number;
  responseMimeType?: 'application/json';
  responseJsonSchema?: Record<string, unknown>;
  thinkingConfig?: { thinkingBudget: number; includeThoughts?: true };
}

/** The body POSTed to `models/{model}:streamGenerateContent?alt=sse`. */
export interface GeminiRequestBody {
  systemInstruction?: { parts: Array<{ text: string }> };
  contents: GeminiContent[];
  /** Function declarations, and Google Search grounding when the catalog maps `web_search` to it. */
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] } | { googleSearch: Record<string, never> }>;
  toolConfig?: { functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } };
  generationConfig: GeminiGenerationConfig;
}

/**
 * The signature Google documents for replaying a function call that Gemini did not sign (history
 * from another model, or a call whose signature this instance does not remember): it tells Gemini 3
 * to skip the signature check, and earlier models accept it as well.
 * https://ai.google.dev/gemini-api/docs/thought-signatures (FAQ).
 */
export const SKIP_SIGNATURE_CHECK = 'skip_thought_signature_validator';

/** A function_call_output whose function_call is not in the request: Gemini needs the name. */
export class UnmatchedCallOutputError extends Error {
  readonly callId: string;
  constructor(callId: string) {
    super(`No function call with call_id '${callId}' was found in the input; the function's output cannot be sent without it.`);
    this.name = 'UnmatchedCallOutputError';
    this.callId = callId;
  }
}

/**
 * Builds the Gemini body. `recall` gives back what was remembered of an earlier call of this
 * provider (its thought signature). Throws `UnmatchedCallOutputError` for an output without its call.
 */
export function toGeminiBody(
  request: CanonicalRequest,
  call: Pick<ProviderCall, 'maxOutputTokens'>,
  recall: (callId: string) => RememberedCall | undefined,
): GeminiRequestBody {
  const systemTexts: string[] = [];
  if (request.instructions !== undefined && request.instructions !== '') systemTexts.push(request.instructions);
  for (const item of request.input) {
    if (item.type === 'message' && (item.role === 'system' || item.role === 'developer')) systemTexts.push(...texts(item.content));
  }

  const body: GeminiRequestBody = { contents: toContents(request.input, recall), generationConfig: toGenerationConfig(request, call.maxOutputTokens) };
  const systemParts = systemTexts.filter((text) => text !== '').map((text) => ({ text }));
  if (systemParts.length > 0) body.systemInstruction = { parts: systemParts };
  if (request.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: request.tools.map((tool) => {
          const parameters = toGeminiParameters(tool.parameters);
          return {
            name: tool.name,
            ...(tool.description === undefined || tool.description === '' ? {} : { description: tool.description }),
            ...(parameters === undefined ? {} : { parameters }),
          };
        }),
      },
    ];
    body.toolConfig = { functionCallingConfig: toFunctionCallingConfig(request.toolChoice) };
  }
  // A Responses `web_search` tool, mapped to Google Search grounding (catalog `hosted_tools: map`).
  if (mappedWebSearch(request).length > 0) body.tools = [...(body.tools ?? []), { googleSearch: {} }];
  return body;
}

function toContents(items: InputItem[], recall: (callId: string) => RememberedCall | undefined): GeminiContent[] {
  const callNames = new Map<string, string>();
  for (const item of items) if (item.type === 'function_call') callNames.set(item.callId, item.name);

  const contents: GeminiContent[] = [];
  const append = (role: GeminiContent['role'], parts: GeminiPart[]): void => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    // Gemini wants turns to alternate; the canonical model splits a turn into several items.
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts: [...parts] });
  };

  for (const item of items) {
    if (item.type === 'function_call') {
      const remembered = recall(item.callId);
      const functionCall = { name: item.name, args: toArguments(item.arguments), ...(remembered?.upstreamId === true ? { id: item.callId } : {}) };
      append('model', [{ functionCall, ...(remembered?.signature === undefined ? {} : { thoughtSignature: remembered.signature }) }]);
      continue;
    }
    if (item.type === 'function_call_output') {
      const name = callNames.get(item.callId);
      if (name === undefined) throw new UnmatchedCallOutputError(item.callId);
      const id = recall(item.callId)?.upstreamId === true ? { id: item.callId } : {};
      append('user', [{ functionResponse: { name, response: { result: item.output }, ...id } }]);
      continue;
    }
    if (item.role === 'system' || item.role === 'developer') continue;
    append(item.role === 'assistant' ? 'model' : 'user', toParts(item.content));
  }
  for (const content of contents) if (content.role === 'model') signFirstCall(content);
  return contents;
}

/**
 * Gemini 3 checks the signature on the first function call of each model step (with parallel
 * calls, only the first carries one). A step none of whose calls has a signature gets the sentinel
 * on its first call, so that a replay this instance cannot sign is not refused.
 */
function signFirstCall(content: GeminiContent): void {
  const calls = content.parts.filter((part): part is FunctionCallPart => 'functionCall' in part);
  const [first] = calls;
  if (first === undefined || calls.some((part) => part.thoughtSignature !== undefined)) return;
  first.thoughtSignature = SKIP_SIGNATURE_CHECK;
}

function toParts(content: ContentPart[]): GeminiPart[] {
  const parts: GeminiPart[] = [];
  for (const part of content) {
    if (part.type === 'image') parts.push(imagePart(part.url));
    else {
      const text = part.type === 'text' ? part.text : part.refusal;
      // Gemini refuses an empty text part.
      if (text !== '') parts.push({ text });
    }
  }
  return parts;
}

function texts(content: ContentPart[]): string[] {
  return content.flatMap((part) => (part.type === 'text' ? [part.text] : part.type === 'refusal' ? [part.refusal] : []));
}

/**
 * A call's arguments as the object Gemini wants. The text is what the model (or client) sent; one
 * that is not a JSON object is kept readable under `arguments` rather than dropped.
 */
function toArguments(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  const parsed = parseJson(text);
  if (parsed.ok && isRecord(parsed.value)) return parsed.value;
  return { arguments: text };
}

function toFunctionCallingConfig(choice: ToolChoice): NonNullable<GeminiRequestBody['toolConfig']>['functionCallingConfig'] {
  if (choice === 'auto') return { mode: 'AUTO' };
  if (choice === 'none') return { mode: 'NONE' };
  if (choice === 'required') return { mode: 'ANY' };
  return { mode: 'ANY', allowedFunctionNames: [choice.name] };
}

function toGenerationConfig(request: CanonicalRequest, maxOutputTokens: number): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = { maxOutputTokens };
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.topP !== undefined) config.topP = request.topP;
  if (request.responseFormat !== undefined) Object.assign(config, toResponseFormat(request.responseFormat));
  const effort = request.reasoningEffort;
  // `none` turns thinking off (a budget of 0; Gemini 2.5 Pro cannot, and refuses it).
  if (effort === 'none') config.thinkingConfig = { thinkingBudget: 0 };
  else if (effort !== undefined) config.thinkingConfig = { thinkingBudget: thinkingBudgetFor(effort, maxOutputTokens), includeThoughts: true };
  return config;
}

/** json_object → JSON mode without a schema; json_schema → the schema as JSON Schema (§5.6). */
function toResponseFormat(format: ResponseFormat): Pick<GeminiGenerationConfig, 'responseMimeType' | 'responseJsonSchema'> {
  if (format.type === 'text') return {};
  if (format.type === 'json_object') return { responseMimeType: 'application/json' };
  return { responseMimeType: 'application/json', responseJsonSchema: format.schema };
}
