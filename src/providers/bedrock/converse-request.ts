/**
 * The canonical request turned into a Bedrock Converse body (POST /model/{modelId}/converse and
 * /converse-stream, docs/wire-protocols.md §18.3). The conversation is laid out as Anthropic's
 * Messages lays it out (anthropic/messages-request.ts: alternating user and assistant turns, tool
 * results first in a user turn), which is what Converse requires too, then each block is written
 * in Converse's form.
 *
 * Where Converse cannot say what the canonical request says:
 * - an image given by URL: Converse takes image bytes (or an S3 location), never a web address, so
 *   the request is refused with a 400 the client can read;
 * - `toolChoice: none`: Converse has no such choice; the tools are left out, unless the
 *   conversation already holds tool calls (Converse then needs their specs), when they go with `auto`;
 * - `responseFormat`: a closing system instruction, as on Anthropic;
 * - reasoning effort: Claude's extended thinking in `additionalModelRequestFields` with Anthropic's
 *   budgets (and the same cases without it), for Claude models only; other families get none.
 * - prompt-cache breakpoints: a `cachePoint` block after the block, system text or tool that
 *   carries one, placed as on Anthropic (anthropic/cache-breakpoints.ts), for the families whose
 *   Converse caches (Claude: system, messages and tools; Amazon Nova: system and messages); other
 *   families get none. Converse's cache points have no lifetime of Anthropic's: a `1h` is sent as
 *   the default.
 */
import type { CacheBreakpoint, CanonicalRequest, ContentPart, FunctionTool, ToolChoice } from '../../protocol/canonical.js';
import { UpstreamError, type ProviderCall } from '../provider.js';
import { responseFormatInstruction, thinkingBudget, toMessages, type ContentBlock, type MessageParam } from '../anthropic/messages-request.js';
import { cacheControlOf, placeCacheBreakpoints, type CacheHolder } from '../anthropic/cache-breakpoints.js';

export type ConverseBlock =
  | { text: string }
  | { image: { format: string; source: { bytes: string } } }
  | { toolUse: { toolUseId: string; name: string; input: Record<string, unknown> } }
  | { toolResult: { toolUseId: string; content: Array<{ text: string }> } }
  | CachePointBlock;

/** A prompt-cache checkpoint: the prompt up to it may be cached. */
export interface CachePointBlock {
  cachePoint: { type: 'default' };
}

type ToolSpec = { toolSpec: { name: string; description?: string; inputSchema: { json: Record<string, unknown> } } };

export interface ConverseMessage {
  role: 'user' | 'assistant';
  content: ConverseBlock[];
}

export interface ConverseBody {
  messages: ConverseMessage[];
  system?: Array<{ text: string } | CachePointBlock>;
  inferenceConfig: { maxTokens: number; temperature?: number; topP?: number };
  toolConfig?: {
    tools: Array<ToolSpec | CachePointBlock>;
    toolChoice?: { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };
  };
  additionalModelRequestFields?: Record<string, unknown>;
}

/** Whether a Bedrock model id (or inference profile: `us.anthropic.claude-…`) is one of Anthropic's Claude models. */
export function isClaudeModel(modelId: string): boolean {
  return /(^|[.:/])anthropic\.claude/.test(modelId);
}

/** Whether a Bedrock model id is one of Amazon's Nova models. */
function isNovaModel(modelId: string): boolean {
  return /(^|[.:/])amazon\.nova/.test(modelId);
}

/** Where the model's Converse takes cache points: undefined for a family that has no prompt cache. */
export function cachePointPlaces(modelId: string): { tools: boolean } | undefined {
  if (isClaudeModel(modelId)) return { tools: true };
  if (isNovaModel(modelId)) return { tools: false };
  return undefined;
}

/** Builds the Converse body. Throws a non-failoverable 400 `UpstreamError` for content Converse cannot take. */
export function toConverseBody(request: CanonicalRequest, call: Pick<ProviderCall, 'upstreamModel' | 'maxOutputTokens'>): ConverseBody {
  const laidOut = toMessages(request.input);
  const holdsToolBlocks = laidOut.some((message) => message.content.some((block) => block.type === 'tool_use' || block.type === 'tool_result'));
  const sendsTools = request.tools.length > 0 && (request.toolChoice !== 'none' || holdsToolBlocks);

  // Breakpoints are placed over Anthropic's layout, then each becomes a cache point after its holder.
  const places = cachePointPlaces(call.upstreamModel);
  const system = systemTexts(request).map((entry) => ({ text: entry.text, ...cacheControlOf(entry.cache) }));
  const tools = sendsTools ? request.tools.map((tool) => ({ tool, ...cacheControlOf(tool.cache) })) : [];
  if (places === undefined) for (const holder of [...system, ...tools, ...laidOut.flatMap((message) => message.content)]) delete holder.cache_control;
  else placeCacheBreakpoints({ tools: places.tools ? tools : [], system, messages: laidOut }, request.cacheMarked === true);
  if (places?.tools !== true) for (const holder of tools) delete holder.cache_control;

  const body: ConverseBody = { messages: laidOut.map(converseMessage), inferenceConfig: { maxTokens: call.maxOutputTokens } };
  if (system.length > 0) body.system = withCachePoints(system, (entry) => ({ text: entry.text }));

  if (sendsTools) {
    const choice = toolChoiceOf(request.toolChoice);
    body.toolConfig = { tools: withCachePoints(tools, (entry) => toolSpec(entry.tool)), ...(choice === undefined ? {} : { toolChoice: choice }) };
  }

  const budget = isClaudeModel(call.upstreamModel) ? thinkingBudget(request, laidOut, call.maxOutputTokens) : undefined;
  if (budget !== undefined) {
    body.additionalModelRequestFields = { thinking: { type: 'enabled', budget_tokens: budget } };
  } else {
    // Converse's range is 0–1 whatever the model.
    if (request.temperature !== undefined) body.inferenceConfig.temperature = Math.min(Math.max(request.temperature, 0), 1);
    if (request.topP !== undefined) body.inferenceConfig.topP = request.topP;
  }
  return body;
}

function systemTexts(request: CanonicalRequest): Array<{ text: string; cache?: CacheBreakpoint | undefined }> {
  const texts: Array<{ text: string; cache?: CacheBreakpoint | undefined }> = [];
  if (request.instructions !== undefined) texts.push({ text: request.instructions, cache: request.instructionsCache });
  for (const item of request.input) {
    if (item.type === 'message' && (item.role === 'system' || item.role === 'developer')) texts.push({ text: partsText(item.content) });
  }
  if (request.responseFormat !== undefined) texts.push({ text: responseFormatInstruction(request.responseFormat) });
  return texts.filter((entry) => entry.text !== '');
}

function toolSpec(tool: FunctionTool): ToolSpec {
  return { toolSpec: { name: tool.name, ...(tool.description === undefined ? {} : { description: tool.description }), inputSchema: { json: tool.parameters ?? { type: 'object', properties: {} } } } };
}

/** Each holder written by `write`, followed by a cache point where it carries a breakpoint. */
function withCachePoints<T extends CacheHolder, R>(holders: readonly T[], write: (holder: T) => R): Array<R | CachePointBlock> {
  return holders.flatMap((holder) => (holder.cache_control === undefined ? [write(holder)] : [write(holder), { cachePoint: { type: 'default' as const } }]));
}

function partsText(parts: readonly ContentPart[]): string {
  return parts.flatMap((part) => (part.type === 'text' ? [part.text] : part.type === 'refusal' ? [part.refusal] : [])).join('\n');
}

function toolChoiceOf(choice: ToolChoice): NonNullable<ConverseBody['toolConfig']>['toolChoice'] {
  if (choice === 'auto' || choice === 'none') return { auto: {} };
  if (choice === 'required') return { any: {} };
  return { tool: { name: choice.name } };
}

function converseMessage(message: MessageParam): ConverseMessage {
  return { role: message.role, content: withCachePoints(message.content, converseBlock) };
}

function converseBlock(block: ContentBlock): ConverseBlock {
  switch (block.type) {
    case 'text':
      return { text: block.text };
    case 'image':
      return converseImage(block);
    case 'tool_use':
      return { toolUse: { toolUseId: block.id, name: block.name, input: block.input } };
    case 'tool_result':
      // Converse refuses an empty text block; an empty tool output is said as such.
      return { toolResult: { toolUseId: block.tool_use_id, content: [{ text: block.content === '' ? '(empty)' : block.content }] } };
  }
}

const IMAGE_FORMATS: Readonly<Record<string, string>> = { 'image/jpeg': 'jpeg', 'image/png': 'png', 'image/gif': 'gif', 'image/webp': 'webp' };

function converseImage(block: Extract<ContentBlock, { type: 'image' }>): ConverseBlock {
  const source = block.source;
  if (source.type === 'base64') return { image: { format: IMAGE_FORMATS[source.media_type] ?? 'png', source: { bytes: source.data } } };
  const message = "An image in the input is not supported by this model's provider: it takes base64 data URLs of image/jpeg, image/png, image/gif or image/webp, not web addresses.";
  throw new UpstreamError('status', `bedrock request mapping: ${message}`, { status: 400, clientMessage: message });
}
