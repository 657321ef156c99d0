/**
 * A double of the OpenAI-compatible vendors (docs/wire-protocols.md §20): one real HTTP server on
 * loopback serving each vendor's Chat Completions at `/{vendor}/v1/chat/completions`, each with its
 * own differences, as that vendor's servers have them:
 * - what it refuses: Mistral any field it does not know (422 `extra_forbidden`, its validation body,
 *   so `stream_options`, `max_completion_tokens`, `reasoning_effort`, `store`…) and a tool-call id
 *   that is not nine letters and digits (400, its message); every vendor a `developer` message.
 *   DeepSeek and the local servers read the output cap from `max_tokens` only (they ignore
 *   `max_completion_tokens`): the double answers `length` when that cap is below the answer's tokens;
 * - where reasoning comes: `reasoning_content` (DeepSeek, xAI, Fireworks, vLLM), `reasoning`
 *   (OpenRouter, Groq, Together, Ollama), or thinking chunks in a `content` list (Mistral);
 * - where usage comes: a usage chunk when asked with `stream_options.include_usage` (most); on the
 *   finish chunk always (Mistral, Fireworks); in `x_groq` on Groq's finish chunk (and a usage chunk
 *   too when asked); never, at `/{vendor}-legacy/v1` (older vLLM and Ollama releases);
 * - DeepSeek reports its cache hits as `prompt_cache_hit_tokens`; xAI leaves reasoning tokens out of
 *   `completion_tokens` (its `total_tokens` counts them); OpenRouter sends
 *   `: OPENROUTER PROCESSING` comment lines first;
 * - tool calls: in fragments with an id on the first only (OpenAI's way), or whole in one chunk
 *   (Ollama), with ids of the vendor's own form (Mistral's nine characters).
 * A prompt holding `FAIL_MID_STREAM` makes OpenRouter end its stream with an in-band error chunk
 * after some text. Test-only code.
 */
import type { ServerResponse } from 'node:http';
import type { OpenAIVendor } from '../../src/config/schema.js';
import { startUpstreamDouble, type ReceivedRequest, type UpstreamDouble } from './upstream-double.js';

export const VENDOR_TEXT = (vendor: string): string => `Hello from ${vendor}`;
export const VENDOR_REASONING = 'The user greets me; I greet back.';
/** What every answer reports: 11 input (3 cached), 5 output (2 of them reasoning, for a reasoning answer). */
export const VENDOR_USAGE = { input: 11, cached: 3, output: 5, reasoning: 2 };

interface Style {
  /** Mistral's reasoning models write `content` as a list of thinking and text chunks. */
  reasoning: 'reasoning_content' | 'reasoning' | 'chunks';
  usage: 'when-asked' | 'on-finish' | 'x_groq';
  cache: 'details' | 'deepseek' | 'none';
  toolCalls: 'fragments' | 'whole';
  toolId: () => string;
  readsMaxTokensOnly: boolean;
  /** xAI counts reasoning apart from `completion_tokens` (in `total_tokens` only). */
  reasoningApart?: true;
}

let counter = 0;
const openaiId = (): string => `call_${(counter += 1).toString(36).padStart(24, '0')}`;
const mistralId = (): string => `T${(counter += 1).toString(36).padStart(8, '0')}`;

const STYLES: Record<OpenAIVendor, Style> = {
  openrouter: { reasoning: 'reasoning', usage: 'when-asked', cache: 'details', toolCalls: 'fragments', toolId: openaiId, readsMaxTokensOnly: false },
  groq: { reasoning: 'reasoning', usage: 'x_groq', cache: 'none', toolCalls: 'fragments', toolId: openaiId, readsMaxTokensOnly: false },
  mistral: { reasoning: 'chunks', usage: 'on-finish', cache: 'none', toolCalls: 'whole', toolId: mistralId, readsMaxTokensOnly: true },
  deepseek: { reasoning: 'reasoning_content', usage: 'when-asked', cache: 'deepseek', toolCalls: 'fragments', toolId: openaiId, readsMaxTokensOnly: true },
  xai: { reasoning: 'reasoning_content', usage: 'when-asked', cache: 'details', toolCalls: 'whole', toolId: openaiId, readsMaxTokensOnly: false, reasoningApart: true },
  together: { reasoning: 'reasoning', usage: 'when-asked', cache: 'details', toolCalls: 'fragments', toolId: openaiId, readsMaxTokensOnly: true },
  fireworks: { reasoning: 'reasoning_content', usage: 'on-finish', cache: 'details', toolCalls: 'fragments', toolId: openaiId, readsMaxTokensOnly: true },
  vllm: { reasoning: 'reasoning_content', usage: 'when-asked', cache: 'none', toolCalls: 'fragments', toolId: () => `chatcmpl-tool-${(counter += 1).toString(16)}`, readsMaxTokensOnly: true },
  ollama: { reasoning: 'reasoning', usage: 'when-asked', cache: 'none', toolCalls: 'whole', toolId: openaiId, readsMaxTokensOnly: true },
};

/** Fields Mistral's chat endpoint knows; any other is a 422. */
const MISTRAL_FIELDS = new Set(['model', 'messages', 'temperature', 'top_p', 'max_tokens', 'stream', 'stop', 'random_seed', 'response_format', 'tools', 'tool_choice', 'presence_penalty', 'frequency_penalty', 'n', 'prediction', 'parallel_tool_calls', 'safe_prompt', 'prompt_mode']);

export interface VendorDouble {
  /** `/{vendor}/v1` (or `/{vendor}-legacy/v1`, a release that never reports usage) on the double. */
  baseUrl(vendor: OpenAIVendor, legacy?: boolean): string;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

export async function startVendorUpstream(): Promise<VendorDouble> {
  const double: UpstreamDouble = await startUpstreamDouble((request, response) => answer(request, response));
  const origin = new URL(double.baseUrl).origin;
  return { baseUrl: (vendor, legacy = false) => `${origin}/${vendor}${legacy ? '-legacy' : ''}/v1`, requests: double.requests, close: () => double.close() };
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

function answer(request: ReceivedRequest, response: ServerResponse): void {
  const match = /^\/([a-z]+?)(-legacy)?\/v1\/chat\/completions$/.exec(request.path);
  const vendor = match?.[1] as OpenAIVendor | undefined;
  if (match === null || vendor === undefined || !(vendor in STYLES)) {
    send(response, 404, { detail: 'Not Found' });
    return;
  }
  const refusal = refusalOf(vendor, request.body);
  if (refusal !== undefined) {
    send(response, refusal.status, refusal.body);
    return;
  }
  const style = STYLES[vendor];
  const body = request.body;
  const messages = body.messages as Array<Record<string, unknown>>;
  const last = messages.at(-1);
  const prompt = JSON.stringify(messages);
  const tools = Array.isArray(body.tools) && body.tools.length > 0;
  const wantsReasoning = prompt.includes('Think');
  const plan: Plan =
    last?.role === 'tool'
      ? { kind: 'text', text: `The tool said: ${String(last.content)}`, reasoning: false }
      : tools && prompt.includes('Weather')
        ? { kind: 'tool', id: style.toolId(), name: 'get_weather', arguments: '{"city":"Oslo"}' }
        : { kind: 'text', text: VENDOR_TEXT(vendor), reasoning: wantsReasoning };
  const cap = style.readsMaxTokensOnly ? body.max_tokens : (body.max_completion_tokens ?? body.max_tokens);
  const truncated = typeof cap === 'number' && cap < VENDOR_USAGE.output;
  const model = String(body.model);
  const legacy = match[2] !== undefined;
  const usage = usageOf(vendor, style, plan);
  if (body.stream !== true) {
    const message =
      plan.kind === 'tool'
        ? { role: 'assistant', content: null, tool_calls: [{ id: plan.id, type: 'function', function: { name: plan.name, arguments: plan.arguments } }] }
        : style.reasoning === 'chunks' && plan.reasoning
          ? { role: 'assistant', content: [{ type: 'thinking', thinking: [{ type: 'text', text: VENDOR_REASONING }] }, { type: 'text', text: plan.text }] }
          : { role: 'assistant', content: plan.text, ...(plan.reasoning ? { [style.reasoning]: VENDOR_REASONING } : {}) };
    send(response, 200, { id: 'cmpl-1', object: 'chat.completion', created: 1767225600, model, choices: [{ index: 0, message, finish_reason: truncated ? 'length' : plan.kind === 'tool' ? 'tool_calls' : 'stop' }], usage });
    return;
  }
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): string => `data: ${JSON.stringify({ id: 'cmpl-1', object: 'chat.completion.chunk', created: 1767225600, model, choices, ...extra })}\n\n`;
  const delta = (value: Record<string, unknown>): unknown[] => [{ index: 0, delta: value, finish_reason: null }];
  let text = vendor === 'openrouter' ? ': OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\n' : '';
  text += chunk(delta({ role: 'assistant', content: '' }), vendor === 'groq' ? { x_groq: { id: 'req_01vendordouble' } } : {});
  if (plan.kind === 'text') {
    for (const piece of plan.reasoning ? ['The user greets me;', ' I greet back.'] : []) {
      if (style.reasoning === 'chunks') text += chunk(delta({ content: [{ type: 'thinking', thinking: [{ type: 'text', text: piece }] }] }));
      else text += chunk(delta({ content: vendor === 'deepseek' ? null : '', [style.reasoning]: piece }));
    }
    for (const piece of plan.text.split(/(?= )/)) text += chunk(delta({ content: piece }));
    if (prompt.includes('FAIL_MID_STREAM') && vendor === 'openrouter') {
      text += chunk([{ index: 0, delta: { content: '' }, finish_reason: 'error' }], { error: { code: 502, message: 'Provider disconnected', metadata: { provider_name: 'Together' } } });
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(`${text}data: [DONE]\n\n`);
      return;
    }
  } else if (style.toolCalls === 'whole') {
    text += chunk(delta({ content: '', tool_calls: [{ id: plan.id, type: 'function', index: 0, function: { name: plan.name, arguments: plan.arguments } }] }));
  } else {
    text += chunk(delta({ tool_calls: [{ index: 0, id: plan.id, type: 'function', function: { name: plan.name, arguments: '' } }] }));
    for (const piece of ['{"city":', '"Oslo"}']) text += chunk(delta({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
  }
  const finish = truncated ? 'length' : plan.kind === 'tool' ? 'tool_calls' : 'stop';
  const asked = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
  const finishChoice = [{ index: 0, delta: {}, finish_reason: finish }];
  if (legacy) text += chunk(finishChoice);
  else if (style.usage === 'on-finish') text += chunk(finishChoice, { usage });
  else if (style.usage === 'x_groq') text += chunk(finishChoice, { x_groq: { id: 'req_01vendordouble', usage: { queue_time: 0.02, ...usage, prompt_time: 0.001, completion_time: 0.01, total_time: 0.011 } } });
  else text += chunk(finishChoice);
  if (!legacy && asked && style.usage !== 'on-finish') text += chunk([], { usage });
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.end(`${text}data: [DONE]\n\n`);
}

type Plan = { kind: 'text'; text: string; reasoning: boolean } | { kind: 'tool'; id: string; name: string; arguments: string };

/** Whether the vendor's usage reports count reasoning tokens (`completion_tokens_details.reasoning_tokens`). */
export function reportsReasoningCount(vendor: OpenAIVendor): boolean {
  return ['openrouter', 'groq', 'deepseek', 'xai'].includes(vendor);
}

function usageOf(vendor: OpenAIVendor, style: Style, plan: Plan): Record<string, unknown> {
  const reasoning = plan.kind === 'text' && plan.reasoning && reportsReasoningCount(vendor) ? VENDOR_USAGE.reasoning : 0;
  const completion = style.reasoningApart === true ? VENDOR_USAGE.output - reasoning : VENDOR_USAGE.output;
  const base: Record<string, unknown> = { prompt_tokens: VENDOR_USAGE.input, completion_tokens: completion, total_tokens: VENDOR_USAGE.input + VENDOR_USAGE.output };
  if (style.cache === 'details') base.prompt_tokens_details = { cached_tokens: VENDOR_USAGE.cached };
  if (style.cache === 'deepseek') Object.assign(base, { prompt_cache_hit_tokens: VENDOR_USAGE.cached, prompt_cache_miss_tokens: VENDOR_USAGE.input - VENDOR_USAGE.cached });
  if (reasoning > 0) base.completion_tokens_details = { reasoning_tokens: reasoning };
  return base;
}

/** What the vendor refuses in this body, as it says it; undefined when it takes it. */
function refusalOf(vendor: OpenAIVendor, body: Record<string, unknown>): { status: number; body: unknown } | undefined {
  const messages = Array.isArray(body.messages) ? (body.messages as Array<Record<string, unknown>>) : [];
  if (messages.some((message) => message.role === 'developer')) {
    return { status: 400, body: { error: { message: "Invalid role 'developer': expected system, user, assistant or tool", type: 'invalid_request_error' } } };
  }
  if (vendor !== 'mistral') return undefined;
  const extra = Object.keys(body).find((key) => !MISTRAL_FIELDS.has(key));
  if (extra !== undefined) {
    return { status: 422, body: { object: 'error', message: { detail: [{ type: 'extra_forbidden', loc: ['body', extra], msg: 'Extra inputs are not permitted', input: body[extra] }] }, type: 'invalid_request_error', param: null, code: null } };
  }
  const ids = messages.flatMap((message) => [
    ...(typeof message.tool_call_id === 'string' ? [message.tool_call_id] : []),
    ...(Array.isArray(message.tool_calls) ? (message.tool_calls as Array<{ id?: unknown }>).map((call) => String(call.id)) : []),
  ]);
  const bad = ids.find((id) => !/^[a-zA-Z0-9]{9}$/.test(id));
  if (bad !== undefined) {
    return { status: 400, body: { object: 'error', message: `Tool call id was ${bad} but must be a-z, A-Z, 0-9, with a length of 9.`, type: 'invalid_request_message_error', param: null, code: '3280' } };
  }
  return undefined;
}
