/**
 * The OpenAI-compatible vendors' known differences from OpenAI's Chat Completions request
 * (docs/wire-protocols.md §20): one small profile per vendor, applied to the Chat body the gateway
 * sends, on the canonical path and on a pass-through alike, as the last step before it goes. What
 * the vendors answer differently (reasoning in `reasoning_content` or `reasoning`, Groq's usage in
 * `x_groq`, DeepSeek's cache counts, whole tool calls in one chunk, in-band errors) is read by the
 * one Chat chunk reader (chat-wire.ts) whatever the vendor, and their error bodies by
 * vendor-error-body.ts.
 */
import { createHash } from 'node:crypto';
import type { OpenAIVendor } from '../../config/schema.js';
import { isRecord } from '../../lib/json-value.js';

export interface VendorProfile {
  /** The vendor's public API address (a local server's default one), used when the catalog gives no `base_url`. */
  baseUrl: string;
  /**
   * The field the output cap goes in. DeepSeek ignores `max_completion_tokens` (the cap would not
   * hold), Mistral refuses it with a 422; servers of older releases know only `max_tokens`.
   */
  maxTokens: 'max_completion_tokens' | 'max_tokens';
  /**
   * Whether `stream_options` may be sent. Mistral refuses the field (a 422) and reports usage on
   * its last chunk unasked; the others need `include_usage` for a usage chunk.
   */
  streamOptions: boolean;
  /**
   * How a reasoning effort goes: as OpenAI's `reasoning_effort`, as OpenRouter's
   * `reasoning: {effort}`, or not at all (the vendor refuses the field or has no such setting).
   */
  reasoningEffort: 'reasoning_effort' | 'reasoning' | 'none';
  /** Mistral takes back only tool-call ids of exactly nine letters and digits (a 422 otherwise). */
  nineCharToolIds: boolean;
  /** Request fields of OpenAI's the vendor refuses, beyond `OPENAI_ONLY`: dropped. */
  refuses: readonly string[];
}

/**
 * Fields of OpenAI's own platform (stored completions, its tiers, its cache routing and abuse
 * identifiers) that no vendor serves: dropped for every vendor, since some refuse unknown fields.
 */
const OPENAI_ONLY = ['store', 'metadata', 'service_tier', 'prompt_cache_key', 'safety_identifier'] as const;

export const VENDOR_PROFILES: Readonly<Record<OpenAIVendor, VendorProfile>> = {
  openrouter: { baseUrl: 'https://openrouter.ai/api/v1', maxTokens: 'max_tokens', streamOptions: true, reasoningEffort: 'reasoning', nineCharToolIds: false, refuses: [] },
  groq: { baseUrl: 'https://api.groq.com/openai/v1', maxTokens: 'max_completion_tokens', streamOptions: true, reasoningEffort: 'reasoning_effort', nineCharToolIds: false, refuses: ['logprobs', 'top_logprobs', 'logit_bias'] },
  mistral: {
    baseUrl: 'https://api.mistral.ai/v1',
    maxTokens: 'max_tokens',
    streamOptions: false,
    reasoningEffort: 'none',
    nineCharToolIds: true,
    // Mistral's API forbids any field it does not know (422 `extra_forbidden`).
    refuses: ['user', 'logprobs', 'top_logprobs', 'logit_bias', 'seed', 'modalities', 'audio', 'verbosity', 'web_search_options'],
  },
  deepseek: { baseUrl: 'https://api.deepseek.com/v1', maxTokens: 'max_tokens', streamOptions: true, reasoningEffort: 'none', nineCharToolIds: false, refuses: [] },
  xai: { baseUrl: 'https://api.x.ai/v1', maxTokens: 'max_completion_tokens', streamOptions: true, reasoningEffort: 'reasoning_effort', nineCharToolIds: false, refuses: [] },
  together: { baseUrl: 'https://api.together.xyz/v1', maxTokens: 'max_tokens', streamOptions: true, reasoningEffort: 'reasoning_effort', nineCharToolIds: false, refuses: [] },
  fireworks: { baseUrl: 'https://api.fireworks.ai/inference/v1', maxTokens: 'max_tokens', streamOptions: true, reasoningEffort: 'reasoning_effort', nineCharToolIds: false, refuses: [] },
  vllm: { baseUrl: 'http://localhost:8000/v1', maxTokens: 'max_tokens', streamOptions: true, reasoningEffort: 'reasoning_effort', nineCharToolIds: false, refuses: [] },
  ollama: { baseUrl: 'http://localhost:11434/v1', maxTokens: 'max_tokens', streamOptions: true, reasoningEffort: 'reasoning_effort', nineCharToolIds: false, refuses: [] },
};

/** The Chat body `body` as `profile`'s vendor accepts it; `body` is left as it was. */
export function toVendorBody(profile: VendorProfile, body: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const sent: Record<string, unknown> = { ...body };
  for (const field of [...OPENAI_ONLY, ...profile.refuses]) delete sent[field];
  if (profile.maxTokens === 'max_tokens' && sent.max_completion_tokens !== undefined) {
    // Both may have been given (a pass-through keeps the client's choice): the smaller cap holds.
    const caps = [sent.max_tokens, sent.max_completion_tokens].filter((cap): cap is number => typeof cap === 'number');
    delete sent.max_completion_tokens;
    if (caps.length > 0) sent.max_tokens = Math.min(...caps);
  }
  if (!profile.streamOptions) delete sent.stream_options;
  if (sent.reasoning_effort !== undefined && profile.reasoningEffort !== 'reasoning_effort') {
    const effort = sent.reasoning_effort;
    delete sent.reasoning_effort;
    if (profile.reasoningEffort === 'reasoning' && typeof effort === 'string' && sent.reasoning === undefined) sent.reasoning = { effort };
  }
  if (Array.isArray(sent.messages)) sent.messages = toVendorMessages(profile, sent.messages);
  return sent;
}

/**
 * The messages with `developer` turned into `system` (OpenAI's newer name for it, which the vendors'
 * servers do not all know), and, for Mistral, every tool-call id in its nine-character form.
 */
function toVendorMessages(profile: VendorProfile, messages: readonly unknown[]): unknown[] {
  const ids = profile.nineCharToolIds ? new NineCharIds() : undefined;
  return messages.map((message) => {
    if (!isRecord(message)) return message;
    let sent = message;
    if (sent.role === 'developer') sent = { ...sent, role: 'system' };
    if (ids === undefined) return sent;
    if (typeof sent.tool_call_id === 'string') sent = { ...sent, tool_call_id: ids.of(sent.tool_call_id) };
    if (Array.isArray(sent.tool_calls)) {
      sent = { ...sent, tool_calls: sent.tool_calls.map((call: unknown) => (isRecord(call) && typeof call.id === 'string' ? { ...call, id: ids.of(call.id) } : call)) };
    }
    return sent;
  });
}

const NINE_CHARS = /^[A-Za-z0-9]{9}$/;
const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * Mistral's form of the tool-call ids of one request: an id already of nine letters and digits (as
 * Mistral makes them) stays; any other (`call_…` of another model, a client's own) becomes nine
 * characters derived from it, the same for the same id, so a call and its result still match, and
 * the same in every request, so a conversation resent turn by turn keeps them. Two ids never share
 * one form within a request.
 */
export class NineCharIds {
  readonly #forms = new Map<string, string>();
  readonly #taken = new Set<string>();

  of(id: string): string {
    const known = this.#forms.get(id);
    if (known !== undefined) return known;
    let form = NINE_CHARS.test(id) && !this.#taken.has(id) ? id : derived(id, 0);
    for (let attempt = 1; this.#taken.has(form); attempt += 1) form = derived(id, attempt);
    this.#forms.set(id, form);
    this.#taken.add(form);
    return form;
  }
}

function derived(id: string, attempt: number): string {
  const digest = createHash('sha256').update(`${attempt}:${id}`).digest();
  let form = '';
  for (let at = 0; at < 9; at += 1) form += ALPHANUMERIC[(digest[at] ?? 0) % ALPHANUMERIC.length];
  return form;
}
