/**
 * One conformance table for every HTTP provider (ARCHITECTURE.md, "Tests"): the same cases run
 * against `openai` over Chat Completions, `openai` over Responses, `anthropic` and `gemini`, with
 * the same assertions on the canonical events of `provider.stream(request, call)`. Each provider
 * entry only says how to reach it and which recorded capture of its own `__fixtures__` folder the
 * upstream double replays for each case; the double is a real HTTP server on loopback.
 *
 * Every capture says the same thing in its own wire format: the text "Hello from the conformance
 * suite.", a `get_weather` call for Oslo, parallel `get_weather` + `get_time` calls, and usage of
 * 120 input (100 cached) and 40 output (16 reasoning) tokens. Where a wire format cannot say
 * something, the entry states what the provider makes of it instead.
 */
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { providerSchema } from '../../src/config/schema.js';
import type { CanonicalEvent, CanonicalRequest, FinishReason, Usage } from '../../src/protocol/canonical.js';
import { countTextTokens } from '../../src/protocol/tokens.js';
import { ANTHROPIC_FIXTURES } from '../../src/providers/anthropic/__fixtures__/fixtures.js';
import { GEMINI_FIXTURES } from '../../src/providers/gemini/__fixtures__/captures.js';
import { OPENAI_FIXTURES } from '../../src/providers/openai/__fixtures__/fixtures.js';
import type { Provider, ProviderCall } from '../../src/providers/provider.js';
import { createProviders } from '../../src/providers/registry.js';
import { readCapture, type CaptureFill } from '../support/captures.js';
import { startHarness } from '../support/harness.js';
import { collect, expectNoSecrets, providerTestKit, upstreamFailure } from '../support/provider-test-kit.js';
import { firstEvents, sseThen, type ReceivedRequest, type UpstreamDouble } from '../support/upstream-double.js';

// ---------------------------------------------------------------------------------------------
// What every capture says

const TEXT = 'Hello from the conformance suite.';
const TOOL_CALL: ExpectedCall = { name: 'get_weather', arguments: { city: 'Oslo' } };
const PARALLEL_CALLS: ExpectedCall[] = [TOOL_CALL, { name: 'get_time', arguments: { zone: 'CET' } }];
const USAGE: Usage = { inputTokens: 120, cachedInputTokens: 100, outputTokens: 40, reasoningTokens: 16 };
/** The thinking text of Anthropic's usage capture (its two `thinking_delta`s joined). */
const ANTHROPIC_THINKING = 'The user says hello. I answer in one short sentence that names the suite.';

interface ExpectedCall {
  name: string;
  arguments: Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------
// The providers: how to reach each, and its capture for each case

/** One recorded answer: what the double replays, as the upstream sent it. */
interface Capture {
  status: number;
  contentType: string;
  folder: URL;
  /** Relative to `folder`; `{{BASE_URL}}` and `{{API_KEY}}` are filled in with the double's and the suite's. */
  file: string;
}

type CaptureName = 'text' | 'wholeText' | 'toolCall' | 'parallelToolCalls' | 'usage' | 'error400' | 'error429' | 'error500';

interface ProviderEntry {
  label: string;
  /** The catalog entry without name, address, key and timeouts (the suite adds those). */
  catalogEntry: Record<string, unknown>;
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
}

/** Builds captures of one folder, with the content types that upstream sends. */
function capturesIn(folder: URL, types: { stream: string; json: string }) {
  return {
    stream: (file: string): Capture => ({ status: 200, contentType: types.stream, folder, file }),
    json: (file: string, status = 200): Capture => ({ status, contentType: types.json, folder, file }),
  };
}

const openai = capturesIn(OPENAI_FIXTURES, { stream: 'text/event-stream; charset=utf-8', json: 'application/json' });
const anthropic = capturesIn(ANTHROPIC_FIXTURES, { stream: 'text/event-stream; charset=utf-8', json: 'application/json' });
const gemini = capturesIn(GEMINI_FIXTURES, { stream: 'text/event-stream', json: 'application/json; charset=UTF-8' });

/** OpenAI's error envelope is the same on both endpoints (wire-formats.md §6.1). */
const OPENAI_ERRORS = { error400: openai.json('error-400.json', 400), error429: openai.json('error-429.json', 429), error500: openai.json('error-500.json', 500) };

const PROVIDERS: ProviderEntry[] = [
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
    captures: {
      text: openai.stream('conformance/responses-text-stream.sse'),
      wholeText: openai.json('conformance/responses-text.json'),
      toolCall: openai.stream('conformance/responses-tool-call-stream.sse'),
      parallelToolCalls: openai.stream('conformance/responses-parallel-tool-calls-stream.sse'),
      // input_tokens 120 (cached_tokens 100), output_tokens 40 (reasoning_tokens 16).
      usage: openai.stream('conformance/responses-usage-stream.sse'),
      ...OPENAI_ERRORS,
    },
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
  },
];

// ---------------------------------------------------------------------------------------------
// Running a provider against its double

const SECRET = 'sk-conformance-T0llgateUpstreamSecret-5e1f';
const KEY_ENV = 'TOLLGATE_CONFORMANCE_KEY';
const PROVIDER_NAME = 'conformance-upstream';
const TIMEOUTS = { connect_ms: 1_000, first_byte_ms: 2_000, idle_ms: 2_000 };
/** An idle timeout long enough that a connection left open would outlive the test. */
const PATIENT_TIMEOUTS = { ...TIMEOUTS, idle_ms: 60_000 };

const REQUEST: CanonicalRequest = {
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

const kit = providerTestKit();

/** The provider's base address: the double's origin and the provider's version segment. */
function baseUrlOf(entry: ProviderEntry, double: UpstreamDouble): string {
  return `${new URL(double.baseUrl).origin}${entry.versionPath}`;
}

function rawEntry(entry: ProviderEntry, double: UpstreamDouble, timeouts = TIMEOUTS): Record<string, unknown> {
  return { ...entry.catalogEntry, name: PROVIDER_NAME, base_url: baseUrlOf(entry, double), api_key_env: KEY_ENV, timeouts };
}

/** The provider, built by the registry from a catalog entry, as the gateway builds it. */
function providerFor(entry: ProviderEntry, double: UpstreamDouble, timeouts = TIMEOUTS): Provider {
  const provider = createProviders([providerSchema.parse(rawEntry(entry, double, timeouts))], { [KEY_ENV]: SECRET }).get(PROVIDER_NAME);
  if (provider === undefined) throw new Error(`the registry built no provider for ${entry.label}`);
  return kit.track(provider);
}

function call(entry: ProviderEntry): ProviderCall {
  return { upstreamModel: entry.upstreamModel, maxOutputTokens: 1_000, signal: new AbortController().signal, requestId: 'req_conformance_0001' };
}

/**
 * A double replaying, for each request, the capture `choose` picks, as recorded: its status, its
 * content type, its bytes, with the placeholders filled with the provider's address and key.
 */
async function doubleReplaying(entry: ProviderEntry, choose: (request: ReceivedRequest) => Capture): Promise<UpstreamDouble> {
  let fill: CaptureFill = {};
  const double = await kit.upstream((request, response) => {
    const capture = choose(request);
    response.writeHead(capture.status, { 'content-type': capture.contentType });
    response.end(readCapture(capture.folder, capture.file, fill));
  });
  fill = { baseUrl: baseUrlOf(entry, double), apiKey: SECRET };
  return double;
}

/** A double that sends the head of the `text` capture, then does `then` with the open response. */
async function doubleSendingHead(entry: ProviderEntry, then: (response: ServerResponse) => void): Promise<UpstreamDouble> {
  const head = firstEvents(readCapture(entry.captures.text.folder, entry.captures.text.file), entry.headEvents);
  return kit.upstream(sseThen(head, then));
}

async function streamOf(entry: ProviderEntry, name: CaptureName): Promise<CanonicalEvent[]> {
  const double = await doubleReplaying(entry, () => entry.captures[name]);
  const events = await collect(providerFor(entry, double).stream(REQUEST, call(entry)));
  expect(double.requests.map((request) => [request.method, request.path, request.headers.accept])).toEqual([['POST', entry.path, 'text/event-stream']]);
  return events;
}

// ---------------------------------------------------------------------------------------------
// Reading canonical events

function textOf(events: CanonicalEvent[]): string {
  return events.flatMap((event) => (event.type === 'text-delta' ? [event.delta] : [])).join('');
}

interface SeenCall {
  index: number;
  callId: string;
  name: string;
  arguments: string;
  ended: boolean;
}

/** The tool calls of a stream, in the order they started. */
function callsOf(events: CanonicalEvent[]): SeenCall[] {
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
function expectWholeAnswer(events: CanonicalEvent[], entry: ProviderEntry, finish: FinishReason): void {
  expect(events[0]).toEqual({ type: 'response-start', upstreamModel: entry.upstreamModel });
  expect(events.at(-1)).toEqual({ type: 'finish', reason: finish });
  expect(events.filter((event) => event.type === 'finish' || event.type === 'response-start')).toHaveLength(2);
  expect(events.filter((event) => event.type === 'usage').length).toBeLessThanOrEqual(1);
  expect(events.some((event) => event.type === 'error')).toBe(false);
}

function expectCalls(events: CanonicalEvent[], entry: ProviderEntry, expected: ExpectedCall[]): void {
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

async function expectStatusFailure(entry: ProviderEntry, name: 'error400' | 'error429' | 'error500') {
  const double = await doubleReplaying(entry, () => entry.captures[name]);
  const error = await upstreamFailure(collect(providerFor(entry, double).stream(REQUEST, call(entry))));
  expect(error.kind).toBe('status');
  expect(error.status).toBe(entry.captures[name].status);
  const secrets = [SECRET, baseUrlOf(entry, double)];
  expectNoSecrets(error.message, secrets);
  return { error, secrets };
}

// ---------------------------------------------------------------------------------------------
// The cases: the same assertions for every provider

interface ConformanceCase {
  name: string;
  run(entry: ProviderEntry): Promise<void>;
}

const CASES: ConformanceCase[] = [
  {
    name: 'text, streamed',
    async run(entry) {
      const events = await streamOf(entry, 'text');
      expectWholeAnswer(events, entry, 'stop');
      expect(textOf(events)).toBe(TEXT);
      expect(events.filter((event) => event.type === 'text-delta').length).toBeGreaterThan(1);
    },
  },
  {
    name: 'text, a whole JSON body from an upstream that ignores stream: true',
    async run(entry) {
      const events = await streamOf(entry, 'wholeText');
      expectWholeAnswer(events, entry, 'stop');
      expect(textOf(events)).toBe(TEXT);
    },
  },
  {
    name: 'text, not streamed, through the gateway with the official openai client',
    async run(entry) {
      // A non-streamed chat call is passed through to an upstream that speaks Chat (it then asks
      // for JSON) and streamed from the others; the double answers what it is asked for.
      const double = await doubleReplaying(entry, (request) => (request.headers.accept === 'text/event-stream' ? entry.captures.text : entry.captures.wholeText));
      const harness = await startHarness({
        catalog: {
          providers: [rawEntry(entry, double)],
          models: [{ id: 'conformance-model', prices: { input: '1', output: '4' }, max_output_tokens: 512, targets: [{ provider: PROVIDER_NAME, model: entry.upstreamModel }] }],
        },
        env: { [KEY_ENV]: SECRET },
      });
      try {
        const account = await harness.newAccount('5');
        const completion = await harness.client(account.secret).chat.completions.create({ model: 'conformance-model', messages: [{ role: 'user', content: 'Say hello.' }] });
        expect(completion.choices[0]?.message.content).toBe(TEXT);
        expect(completion.choices[0]?.finish_reason).toBe('stop');
        expect(double.requests).toHaveLength(1);
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: 'tool call',
    async run(entry) {
      const events = await streamOf(entry, 'toolCall');
      expectCalls(events, entry, [TOOL_CALL]);
      expect(events.filter((event) => event.type === 'tool-call-start')).toHaveLength(1);
    },
  },
  {
    name: 'parallel tool calls, distinct ids, in order',
    async run(entry) {
      expectCalls(await streamOf(entry, 'parallelToolCalls'), entry, PARALLEL_CALLS);
    },
  },
  {
    name: 'usage with cached and reasoning tokens',
    async run(entry) {
      const events = await streamOf(entry, 'usage');
      expectWholeAnswer(events, entry, 'stop');
      expect(textOf(events)).toBe(TEXT);
      expect(events.filter((event) => event.type === 'usage')).toEqual([{ type: 'usage', usage: entry.usage }]);
      // The usage comes before the finish, so that a client codec can put it in its last frame.
      expect(events.at(-2)).toEqual({ type: 'usage', usage: entry.usage });
    },
  },
  {
    name: 'upstream 400: the request is refused, with a reason free of the address and key',
    async run(entry) {
      const { error, secrets } = await expectStatusFailure(entry, 'error400');
      expect(error.failoverable).toBe(false);
      // Every 400 capture echoes the address and key, as upstreams do: the reason stays, they go.
      expect(error.clientMessage).toContain('[redacted]');
      expectNoSecrets(error.clientMessage, secrets);
    },
  },
  {
    name: 'upstream 429: another target may succeed',
    async run(entry) {
      expect((await expectStatusFailure(entry, 'error429')).error.failoverable).toBe(true);
    },
  },
  {
    name: 'upstream 500: another target may succeed',
    async run(entry) {
      expect((await expectStatusFailure(entry, 'error500')).error.failoverable).toBe(true);
    },
  },
  {
    name: 'a stream that breaks mid-way: some deltas, then exactly one error event, nothing after',
    async run(entry) {
      const double = await doubleSendingHead(entry, (response) => response.destroy());
      const events = await collect(providerFor(entry, double).stream(REQUEST, call(entry)));
      expect(events[0]).toEqual({ type: 'response-start', upstreamModel: entry.upstreamModel });
      const text = textOf(events);
      expect(text.length).toBeGreaterThan(0);
      expect(TEXT.startsWith(text)).toBe(true);
      expect(events.filter((event) => event.type === 'error')).toHaveLength(1);
      expect(events.at(-1)).toMatchObject({ type: 'error', code: 'upstream_error', message: expect.stringMatching(/\S/) });
      expect(events.some((event) => event.type === 'finish' || event.type === 'usage')).toBe(false);
    },
  },
  {
    name: 'a client abort: leaving after the first delta closes the upstream request before its answer is done',
    async run(entry) {
      const double = await doubleSendingHead(entry, () => {
        // keeps the stream open, as a model still generating would
      });
      const seen: CanonicalEvent[] = [];
      for await (const event of providerFor(entry, double, PATIENT_TIMEOUTS).stream(REQUEST, call(entry))) {
        seen.push(event);
        if (event.type === 'text-delta') break;
      }
      expect(seen.map((event) => event.type)).toEqual(['response-start', 'text-delta']);
      const [received] = double.requests;
      await received?.connectionClosed;
      expect(received?.answerFinishedAtClose()).toBe(false);
    },
  },
];

describe.each(PROVIDERS.map((entry) => [entry.label, entry] as const))('provider conformance: %s', (_label, entry) => {
  it.each(CASES.map((testCase) => [testCase.name, testCase] as const))('%s', (_name, testCase) => testCase.run(entry));
});
