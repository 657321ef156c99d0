/**
 * The provider conformance table (docs/architecture.md, "Tests"): the entries for `openai` over Chat
 * Completions, `openai` over Responses, `anthropic`, `gemini`, `azure` at its deployment
 * address over Chat and at its v1 address over Responses, `vertex` for Gemini and for Claude
 * (its bearer tokens from a token endpoint of the suite's own), `bedrock` over Converse and over
 * InvokeModel (Claude, replaying Anthropic's captures in Bedrock's chunks), and `openai` with each
 * `vendor` (docs/wire-protocols.md §20), each saying how to reach it and
 * which recorded capture of its own `__fixtures__` folder the loopback upstream double replays for
 * each case, and the helpers the cases share. The cases live in answers.test.ts and
 * transport.test.ts; every case runs against every entry with the same assertions.
 *
 * Every capture says the same thing in its own wire format: the text "Hello from the conformance
 * suite.", a `get_weather` call for Oslo, parallel `get_weather` + `get_time` calls, and usage of
 * 120 input (100 cached) and 40 output (16 reasoning) tokens, with the reasoning text where the
 * wire carries one. Where a wire format cannot say
 * something, the entry states what the provider makes of it instead.
 */
import { type ServerResponse } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { providerSchema } from '../../src/config/schema.js';
import type { CanonicalEvent, CanonicalRequest, FinishReason, Usage } from '../../src/protocol/canonical.js';
import { countTextTokens } from '../../src/protocol/tokens.js';
import { ANTHROPIC_FIXTURES } from '../../src/providers/anthropic/__fixtures__/fixtures.js';
import { AZURE_FIXTURES } from '../../src/providers/azure/__fixtures__/fixtures.js';
import { BEDROCK_FIXTURES } from '../../src/providers/bedrock/__fixtures__/fixtures.js';
import { GEMINI_FIXTURES } from '../../src/providers/gemini/__fixtures__/captures.js';
import { OPENAI_FIXTURES } from '../../src/providers/openai/__fixtures__/fixtures.js';
import { VERTEX_FIXTURES } from '../../src/providers/vertex/__fixtures__/fixtures.js';
import { UpstreamError, type Provider, type ProviderCall } from '../../src/providers/provider.js';
import { createProviders } from '../../src/providers/registry.js';
import { eventStreamOfLines, eventStreamOfSse, firstLines } from '../support/bedrock-upstream.js';
import { readCapture, type CaptureFill } from '../support/captures.js';
import { startTokenServer } from '../support/google-token-endpoint.js';
import { collect, expectNoSecrets, providerTestKit, upstreamFailure } from '../support/provider-test-kit.js';
import { firstEvents, sseThen, type Answer, type ReceivedRequest, type UpstreamDouble } from '../support/upstream-double.js';


// ---------------------------------------------------------------------------------------------
// What every capture says

export const TEXT = 'Hello from the conformance suite.';
export const TOOL_CALL: ExpectedCall = { name: 'get_weather', arguments: { city: 'Oslo' } };
export const PARALLEL_CALLS: ExpectedCall[] = [TOOL_CALL, { name: 'get_time', arguments: { zone: 'CET' } }];
export const USAGE: Usage = { inputTokens: 120, cachedInputTokens: 100, outputTokens: 40, reasoningTokens: 16 };
/** The thinking text of Anthropic's usage capture (its two `thinking_delta`s joined), and of Gemini's (its thought summary). */
export const ANTHROPIC_THINKING = 'The user says hello. I answer in one short sentence that names the suite.';
/** The reasoning text of the OpenAI-compatible vendors' usage captures (their two reasoning deltas joined). */
export const VENDOR_THINKING = 'The user says hello. I answer in one short sentence.';

export interface ExpectedCall {
  name: string;
  arguments: Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------
// The providers: how to reach each, and its capture for each case

/** One recorded answer: what the double replays, as the upstream sent it. */
export interface Capture {
  status: number;
  contentType: string;
  folder: URL;
  /** Relative to `folder`; `{{BASE_URL}}` and `{{API_KEY}}` are filled in with the double's and the suite's. */
  file: string;
  /** A stream not sent as written: how its text becomes the bytes on the wire (Bedrock's event stream). */
  wire?: CaptureWire;
}

/** How a capture written as text is framed on the wire, and how its first events are cut from it. */
export interface CaptureWire {
  encode(text: string): Uint8Array;
  first(text: string, count: number): string;
}

/** The bytes the double sends for a capture. */
function wireOf(capture: Capture, text: string): string | Uint8Array {
  return capture.wire === undefined ? text : capture.wire.encode(text);
}

export type CaptureName = 'text' | 'wholeText' | 'toolCall' | 'parallelToolCalls' | 'usage' | 'error400' | 'error429' | 'error500';

export interface ProviderEntry {
  label: string;
  /** The catalog entry without name, address, key and timeouts (the suite adds those). */
  catalogEntry: Record<string, unknown>;
  /** The catalog field the upstream's address goes in: `base_url`, or Azure's and Bedrock's `endpoint`. */
  addressField?: 'endpoint';
  /** The catalog fields naming the suite's secret: `api_key_env` by default. */
  secretFields?: Record<string, unknown>;
  /** The version segment of the upstream's base address. */
  versionPath: string;
  upstreamModel: string;
  /** Where the canonical path posts (base path included). */
  path: string;
  captures: Record<CaptureName, Capture>;
  /** Events of the `text` capture sent before the double breaks or holds the stream: some text deltas. */
  headEvents: number;
  /** The usage the provider's mapping yields from its `usage` capture. */
  usage: Usage;
  /** The reasoning (thinking) text of its `usage` capture, when the wire carries one. */
  reasoningText?: string;
}

/** Builds captures of one folder, with the content types that upstream sends. */
export function capturesIn(folder: URL, types: { stream: string; json: string }, wire?: CaptureWire) {
  return {
    stream: (file: string): Capture => ({ status: 200, contentType: types.stream, folder, file, ...(wire === undefined ? {} : { wire }) }),
    json: (file: string, status = 200): Capture => ({ status, contentType: types.json, folder, file }),
  };
}

export const openai = capturesIn(OPENAI_FIXTURES, { stream: 'text/event-stream; charset=utf-8', json: 'application/json' });
export const anthropic = capturesIn(ANTHROPIC_FIXTURES, { stream: 'text/event-stream; charset=utf-8', json: 'application/json' });
export const gemini = capturesIn(GEMINI_FIXTURES, { stream: 'text/event-stream', json: 'application/json; charset=UTF-8' });
export const azure = capturesIn(AZURE_FIXTURES, { stream: 'text/event-stream; charset=utf-8', json: 'application/json' });
export const vertex = capturesIn(VERTEX_FIXTURES, { stream: 'text/event-stream', json: 'application/json; charset=UTF-8' });

/** Vertex AI's project and location in the table, and its Gemini and Claude addresses. */
const VERTEX_PROJECT = 'tollgate-conformance';
const VERTEX_LOCATION = 'us-east5';
const vertexPath = (publisher: string, model: string, method: string) => `/v1/projects/${VERTEX_PROJECT}/locations/${VERTEX_LOCATION}/publishers/${publisher}/models/${model}:${method}`;
const EVENT_STREAM = { stream: 'application/vnd.amazon.eventstream', json: 'application/json' };
/** Converse streams: one event-stream message per line of the capture. */
export const bedrock = capturesIn(BEDROCK_FIXTURES, EVENT_STREAM, { encode: eventStreamOfLines, first: firstLines });
/** Claude on InvokeModelWithResponseStream: Anthropic's own captures, each event in a Bedrock `chunk`. */
const bedrockClaude = capturesIn(ANTHROPIC_FIXTURES, EVENT_STREAM, { encode: eventStreamOfSse, first: firstEvents });
/** Bedrock's error bodies are the same for both operations (docs/wire-protocols.md §18.5). */
const BEDROCK_ERRORS = { error400: bedrock.json('conformance/error-400.json', 400), error429: bedrock.json('conformance/error-429.json', 429), error500: bedrock.json('conformance/error-500.json', 500) };
/** Bedrock's access key: the suite's one secret stands for both its id and its secret. */
const BEDROCK_SECRET_FIELDS = { credentials: { access_key_id_env: 'TOLLGATE_CONFORMANCE_KEY', secret_access_key_env: 'TOLLGATE_CONFORMANCE_KEY' } };

/** OpenAI's error envelope is the same on both endpoints (docs/wire-protocols.md §6.1). */
export const OPENAI_ERRORS = { error400: openai.json('error-400.json', 400), error429: openai.json('error-429.json', 429), error500: openai.json('error-500.json', 500) };

/** OpenAI's Responses captures, served by every upstream that speaks Responses (openai, azure's v1 form). */
const RESPONSES_CAPTURES = {
  text: openai.stream('conformance/responses-text-stream.sse'),
  wholeText: openai.json('conformance/responses-text.json'),
  toolCall: openai.stream('conformance/responses-tool-call-stream.sse'),
  parallelToolCalls: openai.stream('conformance/responses-parallel-tool-calls-stream.sse'),
  // input_tokens 120 (cached_tokens 100), output_tokens 40 (reasoning_tokens 16).
  usage: openai.stream('conformance/responses-usage-stream.sse'),
  ...OPENAI_ERRORS,
};

export const PROVIDERS: ProviderEntry[] = [
  {
    label: 'openai (chat)',
    catalogEntry: { type: 'openai', api: 'chat' },
    versionPath: '/v1',
    upstreamModel: 'gpt-4.1-mini-2025-04-14',
    path: '/v1/chat/completions',
    captures: {
      text: openai.stream('conformance/chat-text-stream.sse'),
      wholeText: openai.json('conformance/chat-text.json'),
      toolCall: openai.stream('conformance/chat-tool-call-stream.sse'),
      parallelToolCalls: openai.stream('conformance/chat-parallel-tool-calls-stream.sse'),
      // prompt_tokens 120 (cached_tokens 100), completion_tokens 40 (reasoning_tokens 16).
      usage: openai.stream('conformance/chat-usage-stream.sse'),
      ...OPENAI_ERRORS,
    },
    // The role chunk, "Hello", " from the".
    headEvents: 3,
    usage: USAGE,
  },
  {
    label: 'openai (responses)',
    catalogEntry: { type: 'openai', api: 'responses' },
    versionPath: '/v1',
    upstreamModel: 'gpt-5-mini-2025-08-07',
    path: '/v1/responses',
    captures: RESPONSES_CAPTURES,
    // created, in_progress, output_item.added, content_part.added, "Hello", " from the".
    headEvents: 6,
    usage: USAGE,
  },
  {
    label: 'anthropic',
    catalogEntry: { type: 'anthropic' },
    versionPath: '/v1',
    upstreamModel: 'claude-sonnet-4-5-20250929',
    path: '/v1/messages',
    captures: {
      text: anthropic.stream('conformance/text-stream.sse'),
      wholeText: anthropic.json('conformance/message.json'),
      toolCall: anthropic.stream('conformance/tool-use-stream.sse'),
      parallelToolCalls: anthropic.stream('conformance/parallel-tool-use-stream.sse'),
      // input_tokens 20 + cache_read_input_tokens 100 (Anthropic's input excludes cache reads), output_tokens 40.
      usage: anthropic.stream('conformance/usage-stream.sse'),
      error400: anthropic.json('conformance/error-400.json', 400),
      error429: anthropic.json('error-429.json', 429),
      error500: anthropic.json('error-500.json', 500),
    },
    // message_start, content_block_start, ping, "Hello", " from the".
    headEvents: 5,
    // Anthropic reports no reasoning count (thinking is inside output_tokens): the provider
    // estimates it by counting the thinking text with the gateway's tokenizer, capped at the
    // output tokens. The capture's thinking text is written to count 16.
    usage: { ...USAGE, reasoningTokens: Math.min(countTextTokens(ANTHROPIC_THINKING), USAGE.outputTokens) },
    reasoningText: ANTHROPIC_THINKING,
  },
  {
    label: 'gemini',
    catalogEntry: { type: 'gemini' },
    versionPath: '/v1beta',
    upstreamModel: 'gemini-2.5-flash',
    path: '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    captures: {
      text: gemini.stream('conformance/text-stream.sse'),
      // What streamGenerateContent answers without alt=sse: a JSON array of the chunks.
      wholeText: gemini.json('conformance/text.json'),
      toolCall: gemini.stream('conformance/function-call-stream.sse'),
      parallelToolCalls: gemini.stream('conformance/parallel-function-calls-stream.sse'),
      // promptTokenCount 120 (cachedContentTokenCount 100); output is candidatesTokenCount 24 +
      // thoughtsTokenCount 16, since Gemini counts thoughts apart from the candidates.
      usage: gemini.stream('conformance/usage-stream.sse'),
      error400: gemini.json('error-400.json', 400),
      error429: gemini.json('error-429.json', 429),
      error500: gemini.json('error-500.json', 500),
    },
    // "Hello", " from the" (no terminator: only a finishReason ends the answer).
    headEvents: 2,
    usage: USAGE,
    reasoningText: ANTHROPIC_THINKING,
  },
  {
    // Azure's Chat answers are OpenAI's with its filter verdicts added; its other errors are OpenAI's envelope.
    label: 'azure (deployments, chat)',
    catalogEntry: { type: 'azure', url_form: 'deployments', api_version: '2024-10-21', api: 'chat' },
    addressField: 'endpoint',
    versionPath: '',
    upstreamModel: 'gpt-4o-mini-prod',
    path: '/openai/deployments/gpt-4o-mini-prod/chat/completions?api-version=2024-10-21',
    captures: {
      text: azure.stream('conformance/chat-text-stream.sse'),
      wholeText: azure.json('conformance/chat-text.json'),
      toolCall: azure.stream('conformance/chat-tool-call-stream.sse'),
      parallelToolCalls: azure.stream('conformance/chat-parallel-tool-calls-stream.sse'),
      usage: azure.stream('conformance/chat-usage-stream.sse'),
      ...OPENAI_ERRORS,
    },
    // The prompt-filter chunk, the role chunk, "Hello", " from the".
    headEvents: 4,
    usage: USAGE,
  },
  {
    label: 'azure (v1, responses)',
    catalogEntry: { type: 'azure', url_form: 'v1', api: 'responses' },
    addressField: 'endpoint',
    versionPath: '',
    upstreamModel: 'gpt-5-mini-prod',
    path: '/openai/v1/responses',
    captures: RESPONSES_CAPTURES,
    headEvents: 6,
    usage: USAGE,
  },
  {
    // Gemini's wire at Vertex's address; its quota refusal is Vertex's own.
    label: 'vertex (gemini)',
    catalogEntry: { type: 'vertex', project: VERTEX_PROJECT, location: VERTEX_LOCATION, publisher: 'google' },
    addressField: 'endpoint',
    versionPath: '',
    upstreamModel: 'gemini-2.5-flash',
    path: vertexPath('google', 'gemini-2.5-flash', 'streamGenerateContent?alt=sse'),
    captures: {
      text: gemini.stream('conformance/text-stream.sse'),
      wholeText: gemini.json('conformance/text.json'),
      toolCall: gemini.stream('conformance/function-call-stream.sse'),
      parallelToolCalls: gemini.stream('conformance/parallel-function-calls-stream.sse'),
      usage: gemini.stream('conformance/usage-stream.sse'),
      error400: gemini.json('error-400.json', 400),
      error429: vertex.json('error-429.json', 429),
      error500: gemini.json('error-500.json', 500),
    },
    headEvents: 2,
    usage: USAGE,
    reasoningText: ANTHROPIC_THINKING,
  },
  {
    // Anthropic's Messages wire at Vertex's address (the model in the path, `anthropic_version`
    // in the body); its quota refusal is Vertex's, in Google's error object.
    label: 'vertex (claude)',
    catalogEntry: { type: 'vertex', project: VERTEX_PROJECT, location: VERTEX_LOCATION, publisher: 'anthropic' },
    addressField: 'endpoint',
    versionPath: '',
    upstreamModel: 'claude-sonnet-4-5@20250929',
    path: vertexPath('anthropic', 'claude-sonnet-4-5@20250929', 'streamRawPredict'),
    captures: {
      text: anthropic.stream('conformance/text-stream.sse'),
      wholeText: anthropic.json('conformance/message.json'),
      toolCall: anthropic.stream('conformance/tool-use-stream.sse'),
      parallelToolCalls: anthropic.stream('conformance/parallel-tool-use-stream.sse'),
      usage: anthropic.stream('conformance/usage-stream.sse'),
      error400: anthropic.json('conformance/error-400.json', 400),
      error429: vertex.json('error-429.json', 429),
      error500: anthropic.json('error-500.json', 500),
    },
    headEvents: 5,
    usage: { ...USAGE, reasoningTokens: Math.min(countTextTokens(ANTHROPIC_THINKING), USAGE.outputTokens) },
    reasoningText: ANTHROPIC_THINKING,
  },
  ...vendorEntries(),
  {
    label: 'bedrock (converse)',
    catalogEntry: { type: 'bedrock', region: 'us-east-1' },
    addressField: 'endpoint',
    secretFields: BEDROCK_SECRET_FIELDS,
    versionPath: '',
    upstreamModel: 'us.anthropic.claude-sonnet-4-20250514-v1:0',
    path: '/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream',
    captures: {
      text: bedrock.stream('conformance/text-stream.jsonl'),
      // What Converse answers; the provider reads it when a stream request gets JSON.
      wholeText: bedrock.json('conformance/converse.json'),
      toolCall: bedrock.stream('conformance/tool-use-stream.jsonl'),
      parallelToolCalls: bedrock.stream('conformance/parallel-tool-use-stream.jsonl'),
      // inputTokens 20 + cacheReadInputTokens 100 (Converse's input excludes the cache), outputTokens 40.
      usage: bedrock.stream('conformance/usage-stream.jsonl'),
      ...BEDROCK_ERRORS,
    },
    // messageStart, "Hello", " from the".
    headEvents: 3,
    // Converse reports no reasoning count: estimated from the thinking text, as on Anthropic.
    usage: { ...USAGE, reasoningTokens: Math.min(countTextTokens(ANTHROPIC_THINKING), USAGE.outputTokens) },
    reasoningText: ANTHROPIC_THINKING,
  },
  {
    label: 'bedrock (invoke, claude)',
    catalogEntry: { type: 'bedrock', region: 'us-east-1', api: 'invoke' },
    addressField: 'endpoint',
    secretFields: BEDROCK_SECRET_FIELDS,
    versionPath: '',
    upstreamModel: 'anthropic.claude-sonnet-4-5-20250929-v1:0',
    path: '/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream',
    captures: {
      text: bedrockClaude.stream('conformance/text-stream.sse'),
      wholeText: anthropic.json('conformance/message.json'),
      toolCall: bedrockClaude.stream('conformance/tool-use-stream.sse'),
      parallelToolCalls: bedrockClaude.stream('conformance/parallel-tool-use-stream.sse'),
      usage: bedrockClaude.stream('conformance/usage-stream.sse'),
      ...BEDROCK_ERRORS,
    },
    // message_start, content_block_start, ping, "Hello", " from the".
    headEvents: 5,
    usage: { ...USAGE, reasoningTokens: Math.min(countTextTokens(ANTHROPIC_THINKING), USAGE.outputTokens) },
    reasoningText: ANTHROPIC_THINKING,
  },
];

/**
 * The token endpoint of the `vertex` entries: a server of the suite's own (the replaying doubles
 * know nothing of tokens), named by the key file as its `token_uri`.
 */
const VERTEX_TOKENS = await startTokenServer(VERTEX_PROJECT, 'https://www.googleapis.com/auth/cloud-platform');

/**
 * The OpenAI-compatible vendors (docs/wire-protocols.md §20): the `openai` type with `vendor`, each
 * replaying its own captures (src/providers/openai/__fixtures__/vendors/<vendor>/). Where a vendor's
 * report leaves something out (Mistral, Together, vLLM and Ollama report no cached or reasoning
 * count; Fireworks no reasoning count), the usage says what the provider makes of it: 0.
 */
function vendorEntries(): ProviderEntry[] {
  const noDetails: Usage = { ...USAGE, cachedInputTokens: 0, reasoningTokens: 0 };
  const rows: Array<{ vendor: string; versionPath: string; model: string; usage: Usage; headEvents?: number; error429Status?: number }> = [
    // Two `: OPENROUTER PROCESSING` comments come first.
    { vendor: 'openrouter', versionPath: '/api/v1', model: 'deepseek/deepseek-r1-0528', usage: USAGE, headEvents: 5 },
    // Usage twice: in `x_groq` on the finish chunk, then in the usage chunk asked for.
    { vendor: 'groq', versionPath: '/openai/v1', model: 'qwen/qwen3-32b', usage: USAGE },
    // Usage on the finish chunk, unasked; tool calls whole, with the finish, ids of nine characters;
    // a reasoning model's content a list of thinking and text chunks.
    { vendor: 'mistral', versionPath: '/v1', model: 'magistral-medium-2509', usage: noDetails },
    // Cache hits as `prompt_cache_hit_tokens`; reasoning in `reasoning_content`.
    { vendor: 'deepseek', versionPath: '/v1', model: 'deepseek-reasoner', usage: USAGE },
    // Reasoning tokens left out of `completion_tokens` (24 + 16 = 40 output); tool calls whole.
    { vendor: 'xai', versionPath: '/v1', model: 'grok-3-mini', usage: USAGE },
    { vendor: 'together', versionPath: '/v1', model: 'deepseek-ai/DeepSeek-R1', usage: noDetails },
    { vendor: 'fireworks', versionPath: '/inference/v1', model: 'accounts/fireworks/models/qwen3-235b-a22b', usage: { ...USAGE, reasoningTokens: 0 } },
    // Tool-call fragments after the first carry neither id nor type.
    { vendor: 'vllm', versionPath: '/v1', model: 'Qwen/Qwen3-8B', usage: noDetails },
    // Each call whole in a chunk of its own, without an index; no rate limit of its own: a full
    // queue is a 503 `server busy`, which fails over as a 429 does.
    { vendor: 'ollama', versionPath: '/v1', model: 'qwen3:8b', usage: noDetails, error429Status: 503 },
  ];
  return rows.map((row) => {
    const file = (name: string) => `vendors/${row.vendor}/${name}`;
    return {
      label: `openai (vendor: ${row.vendor})`,
      catalogEntry: { type: 'openai', vendor: row.vendor },
      versionPath: row.versionPath,
      upstreamModel: row.model,
      path: `${row.versionPath}/chat/completions`,
      captures: {
        text: openai.stream(file('text-stream.sse')),
        wholeText: openai.json(file('text.json')),
        toolCall: openai.stream(file('tool-call-stream.sse')),
        parallelToolCalls: openai.stream(file('parallel-tool-calls-stream.sse')),
        usage: openai.stream(file('usage-stream.sse')),
        // Mistral refuses a field it does not know with a 422, the status of its validation errors.
        error400: openai.json(file('error-400.json'), row.vendor === 'mistral' ? 422 : 400),
        error429: openai.json(file('error-429.json'), row.error429Status ?? 429),
        error500: openai.json(file('error-500.json'), 500),
      },
      // The role chunk, "Hello", " from the" (after OpenRouter's comments).
      headEvents: row.headEvents ?? 3,
      usage: row.usage,
      reasoningText: VENDOR_THINKING,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Running a provider against its double

export const SECRET = 'sk-conformance-T0llgateUpstreamSecret-5e1f';
export const KEY_ENV = 'TOLLGATE_CONFORMANCE_KEY';
export const PROVIDER_NAME = 'conformance-upstream';
export const TIMEOUTS = { connect_ms: 1_000, first_byte_ms: 2_000, idle_ms: 2_000 };
/** An idle timeout long enough that a connection left open would outlive the test. */
export const PATIENT_TIMEOUTS = { ...TIMEOUTS, idle_ms: 60_000 };

export const REQUEST: CanonicalRequest = {
  model: 'conformance-model',
  input: [{ type: 'message', role: 'user', content: [{ type: 'text', text: 'Say hello, then check the weather in Oslo and the time in CET.' }] }],
  tools: [
    { name: 'get_weather', description: 'Current weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
    { name: 'get_time', description: 'Current time in a zone', parameters: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] } },
  ],
  toolChoice: 'auto',
  parallelToolCalls: true,
  stream: true,
};

export const kit = providerTestKit();

/** The provider's base address: the double's origin and the provider's version segment. */
export function baseUrlOf(entry: ProviderEntry, double: UpstreamDouble): string {
  return `${new URL(double.baseUrl).origin}${entry.versionPath}`;
}

export function rawEntry(entry: ProviderEntry, baseUrl: string, timeouts = TIMEOUTS): Record<string, unknown> {
  // Vertex takes no key: a service account's key file, whose tokens the suite's token endpoint issues.
  const credential = entry.catalogEntry.type === 'vertex' ? { credentials_file: VERTEX_TOKENS.account.keyFile } : (entry.secretFields ?? { api_key_env: KEY_ENV });
  return { ...entry.catalogEntry, name: PROVIDER_NAME, [entry.addressField ?? 'base_url']: baseUrl, ...credential, timeouts };
}

/** The provider, built by the registry from a catalog entry, as the gateway builds it; `double` may be a bare base address. */
export function providerFor(entry: ProviderEntry, double: UpstreamDouble | string, timeouts = TIMEOUTS): Provider {
  const baseUrl = typeof double === 'string' ? double : baseUrlOf(entry, double);
  const provider = createProviders([providerSchema.parse(rawEntry(entry, baseUrl, timeouts))], { [KEY_ENV]: SECRET }).get(PROVIDER_NAME);
  if (provider === undefined) throw new Error(`the registry built no provider for ${entry.label}`);
  return kit.track(provider);
}

export function call(entry: ProviderEntry, signal = new AbortController().signal): ProviderCall {
  return { upstreamModel: entry.upstreamModel, maxOutputTokens: 1_000, signal, requestId: 'req_conformance_0001' };
}

/**
 * A double replaying, for each request, the capture `choose` picks, as recorded: its status, its
 * content type, its bytes, with the placeholders filled with the provider's address and key.
 */
export async function doubleReplaying(entry: ProviderEntry, choose: (request: ReceivedRequest) => Capture): Promise<UpstreamDouble> {
  let fill: CaptureFill = {};
  const double = await kit.upstream((request, response) => {
    const capture = choose(request);
    response.writeHead(capture.status, { 'content-type': capture.contentType });
    // Vertex's credential is the bearer token the call carried: that is what an echo would give away.
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    response.end(wireOf(capture, readCapture(capture.folder, capture.file, bearer === undefined ? fill : { ...fill, apiKey: bearer })));
  });
  fill = { baseUrl: baseUrlOf(entry, double), apiKey: SECRET };
  return double;
}

/** A double that sends the head of the `text` capture, then does `then` with the open response. */
export async function doubleSendingHead(entry: ProviderEntry, then: (response: ServerResponse) => void): Promise<UpstreamDouble> {
  const capture = entry.captures.text;
  const text = readCapture(capture.folder, capture.file);
  if (capture.wire === undefined) return kit.upstream(sseThen(firstEvents(text, entry.headEvents), then));
  return kit.upstream(sseThen(capture.wire.encode(capture.wire.first(text, entry.headEvents)), then, capture.contentType));
}

/** The events of a stream whose upstream sends the head of the `text` capture, then does `then`. */
export async function eventsAfterHead(entry: ProviderEntry, then: (response: ServerResponse) => void, timeouts = TIMEOUTS): Promise<CanonicalEvent[]> {
  const double = await doubleSendingHead(entry, then);
  return collect(providerFor(entry, double, timeouts).stream(REQUEST, call(entry)));
}

/** A double that sends the head of the `text` capture, then keeps the stream open, as a model still generating would. */
export function doubleStillGenerating(entry: ProviderEntry): Promise<UpstreamDouble> {
  return doubleSendingHead(entry, () => {
    // keeps the stream open
  });
}

/** The upstream request's connection closes before the double finished its answer. */
export async function expectClosedEarly(double: UpstreamDouble): Promise<void> {
  const [received] = double.requests;
  await received?.connectionClosed;
  expect(received?.answerFinishedAtClose()).toBe(false);
}

/** The `UpstreamError` of a call to an upstream that answers with `answer`. */
export async function failureOf(entry: ProviderEntry, answer: Answer, timeouts = TIMEOUTS): Promise<UpstreamError> {
  const double = await kit.upstream(answer);
  return upstreamFailure(collect(providerFor(entry, double, timeouts).stream(REQUEST, call(entry))));
}

/**
 * The types of `events` as the answer shows them: `input-usage` (what an upstream says it read,
 * before answering, as Anthropic does) is for the usage meter alone.
 */
export function shownTypes(events: CanonicalEvent[]): string[] {
  return events.filter((event) => event.type !== 'input-usage').map((event) => event.type);
}

/** The events the head of every `text` capture yields, all before the last: the start, then "Hello" and " from the". */
export function expectHead(events: CanonicalEvent[], entry: ProviderEntry): void {
  expect(events[0]).toEqual({ type: 'response-start', upstreamModel: entry.upstreamModel });
  expect(shownTypes(events.slice(1, -1))).toEqual(['text-delta', 'text-delta']);
  expect(textOf(events)).toBe('Hello from the');
}

export async function streamOf(entry: ProviderEntry, name: CaptureName): Promise<CanonicalEvent[]> {
  const double = await doubleReplaying(entry, () => entry.captures[name]);
  const events = await collect(providerFor(entry, double).stream(REQUEST, call(entry)));
  expect(double.requests.map((request) => [request.method, request.path, request.headers.accept])).toEqual([['POST', entry.path, 'text/event-stream']]);
  return events;
}

// ---------------------------------------------------------------------------------------------
// Reading canonical events

export function textOf(events: CanonicalEvent[]): string {
  return events.flatMap((event) => (event.type === 'text-delta' ? [event.delta] : [])).join('');
}

export interface SeenCall {
  index: number;
  callId: string;
  name: string;
  arguments: string;
  ended: boolean;
}

/** The tool calls of a stream, in the order they started. */
export function callsOf(events: CanonicalEvent[]): SeenCall[] {
  const calls: SeenCall[] = [];
  for (const event of events) {
    if (event.type === 'tool-call-start') calls.push({ index: event.index, callId: event.callId, name: event.name, arguments: '', ended: false });
    const open = 'index' in event ? calls.find((seen) => seen.index === event.index) : undefined;
    if (event.type === 'tool-call-delta' && open !== undefined) open.arguments += event.delta;
    if (event.type === 'tool-call-end' && open !== undefined) open.ended = true;
  }
  return calls;
}

/** A whole answer: `response-start` first, then deltas, `usage` at most once, and `finish` last, with nothing after. */
export function expectWholeAnswer(events: CanonicalEvent[], entry: ProviderEntry, finish: FinishReason): void {
  expect(events[0]).toEqual({ type: 'response-start', upstreamModel: entry.upstreamModel });
  expect(events.at(-1)).toEqual({ type: 'finish', reason: finish });
  expect(events.filter((event) => event.type === 'finish' || event.type === 'response-start')).toHaveLength(2);
  expect(events.filter((event) => event.type === 'usage').length).toBeLessThanOrEqual(1);
  expect(events.some((event) => event.type === 'error')).toBe(false);
}

export function expectCalls(events: CanonicalEvent[], entry: ProviderEntry, expected: ExpectedCall[]): void {
  expectWholeAnswer(events, entry, 'tool_calls');
  const calls = callsOf(events);
  expect(calls.map((seen) => ({ name: seen.name, arguments: JSON.parse(seen.arguments) as unknown }))).toEqual(expected);
  expect(calls.map((seen) => seen.index)).toEqual(expected.map((_, index) => index));
  for (const seen of calls) {
    expect(seen.callId).toMatch(/\S/);
    expect(seen.ended).toBe(true);
  }
  expect(new Set(calls.map((seen) => seen.callId)).size).toBe(expected.length);
}

export async function expectStatusFailure(entry: ProviderEntry, name: 'error400' | 'error429' | 'error500') {
  const double = await doubleReplaying(entry, () => entry.captures[name]);
  const error = await upstreamFailure(collect(providerFor(entry, double).stream(REQUEST, call(entry))));
  expect(error.kind).toBe('status');
  expect(error.status).toBe(entry.captures[name].status);
  const secrets = [SECRET, baseUrlOf(entry, double), ...VERTEX_TOKENS.tokens.issued.keys()];
  expectNoSecrets(error.message, secrets);
  return { error, secrets };
}

// ---------------------------------------------------------------------------------------------
// The cases: the same assertions for every provider


export interface ConformanceCase {
  name: string;
  run(entry: ProviderEntry): Promise<void>;
  /**
   * The case waits out one of the provider's timeouts. undici checks its header and body timeouts
   * on a coarse tick (about half a second to a second), so each such run takes about a second
   * whatever the timeout; these runs start for every entry at once, before the rows, and each row
   * then reports its own entry's outcome (its assertions, as they passed or failed).
   */
  waitsOutATimeout?: true;
}

/** Runs every case against every provider entry. */
export function runConformance(title: string, cases: ConformanceCase[]): void {
  const early = new Map<ConformanceCase, Map<ProviderEntry, Promise<void>>>();
  beforeAll(async () => {
    for (const testCase of cases.filter((candidate) => candidate.waitsOutATimeout === true)) {
      early.set(testCase, new Map(PROVIDERS.map((entry) => [entry, testCase.run(entry)])));
    }
    // All settled before any row ends: the kit closes every double and provider after each row.
    await Promise.allSettled([...early.values()].flatMap((runs) => [...runs.values()]));
  });
  describe.each(PROVIDERS.map((entry) => [entry.label, entry] as const))(`${title}: %s`, (_label, entry) => {
    it.each(cases.map((testCase) => [testCase.name, testCase] as const))('%s', (_name, testCase) => early.get(testCase)?.get(entry) ?? testCase.run(entry));
  });
}
