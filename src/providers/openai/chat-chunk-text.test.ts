/**
 * The pattern (the one chunk reader's fast path) against the schema: whatever it reads, it reads
 * to the events `JSON.parse` and `chatChunkSchema` give, and the same model; whatever they refuse,
 * it leaves to them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CanonicalEvent } from '../../protocol/canonical.js';
import { sseFrameOfLines } from '../../protocol/sse-frame.js';
import { replaceModelName } from '../shared/model-name.js';
import { readPlainChunk } from './chat-chunk-text.js';
import { ChatChunkReader, readChatChunk, readChunkBySchema, type ChatChunk } from './chat-wire.js';
import { ChatFramer } from './passthrough.js';
import { fixture } from './__fixtures__/fixtures.js';

/** What the parser's path makes of `text`: the chunk the schema reads, an in-band error, or a refusal. */
type Parsed = { kind: 'chunk'; chunk: ChatChunk; value: Record<string, unknown> } | { kind: 'error' } | { kind: 'refused' };

function parse(text: string): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'refused' };
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    if (record.error !== undefined && record.error !== null) return { kind: 'error' };
    try {
      return { kind: 'chunk', chunk: readChunkBySchema(record), value: record };
    } catch {
      return { kind: 'refused' };
    }
  }
  return { kind: 'refused' };
}

/** A reader past its stream's finish chunk. */
function finishedReader(): ChatChunkReader {
  const reader = new ChatChunkReader();
  reader.read('{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}');
  return reader;
}

/** The pattern agrees with the parser's path on `text`; returns whether it read it. */
function agrees(text: string): boolean {
  const plain = readPlainChunk(text);
  if (plain === undefined) return false;
  const parsed = parse(text);
  expect(parsed.kind, text).toBe('chunk');
  if (parsed.kind !== 'chunk') return true;
  const read = readChatChunk(text);
  expect(read.parsed).toBeUndefined();
  const bySchema = { chunk: parsed.chunk, error: undefined, parsed: parsed.value, model: undefined, modelAt: -1 };
  expect(new ChatChunkReader().events(read), text).toEqual(new ChatChunkReader().events(bySchema));
  expect(finishedReader().events(read), text).toEqual(finishedReader().events(bySchema));
  // The read chunk names no more than the schema's would: no finish, no usage, no other choice.
  expect(parsed.chunk.choices?.length).toBe(1);
  expect(parsed.chunk.usage ?? undefined).toBeUndefined();
  const choice = parsed.chunk.choices?.[0];
  expect(choice?.finish_reason ?? undefined).toBeUndefined();
  expect(choice?.index ?? 0).toBe(0);
  expect(choice?.delta?.content, text).toBe(plain.content);
  for (const unread of [choice?.delta?.refusal, choice?.delta?.reasoning, choice?.delta?.reasoning_content, choice?.delta?.tool_calls]) expect(unread ?? undefined).toBeUndefined();
  expect(plain.model, text).toBe(parsed.value.model);
  expect(text.slice(plain.modelAt, plain.modelAt + plain.model.length)).toBe(plain.model);
  return true;
}

/** An object written with these members, in this order, a key perhaps twice (JSON.parse keeps the last). */
class Members {
  constructor(readonly pairs: [string, unknown][]) {}
}

/** A number as written in the text (JSON.stringify writes every number one way). */
class Raw {
  constructor(readonly text: string) {}
}

/** JSON text of `value`, with the whitespace `spaces` gives between its tokens. */
function write(value: unknown, spaces: readonly string[]): string {
  let next = 0;
  const space = (): string => spaces[next++ % spaces.length] ?? '';
  const walk = (item: unknown): string => {
    if (item instanceof Raw) return item.text;
    if (item instanceof Members) {
      const members = item.pairs.map(([key, member]) => `${JSON.stringify(key)}${space()}:${space()}${walk(member)}`);
      return `{${space()}${members.join(`${space()},${space()}`)}${space()}}`;
    }
    if (Array.isArray(item)) return item.length === 0 ? `[${space()}]` : `[${space()}${item.map(walk).join(`${space()},${space()}`)}${space()}]`;
    if (typeof item === 'object' && item !== null) {
      const members = Object.entries(item).map(([key, member]) => `${JSON.stringify(key)}${space()}:${space()}${walk(member)}`);
      return `{${space()}${members.join(`${space()},${space()}`)}${space()}}`;
    }
    return JSON.stringify(item);
  };
  return `${space()}${walk(value)}${space()}`;
}

const SPECIALS = ['"', '\\', '/', '\n', '\u0000', '\u001f', '\u2028', '\ud800', '\udc00', '🦀', 'é', 'a', ' ', 'u'];
const text = fc.oneof(fc.string({ unit: fc.constantFrom(...SPECIALS), maxLength: 16 }), fc.string({ unit: 'binary', maxLength: 16 }), fc.constantFrom('Hello', 'stop', 'length', 'tool_calls', ''));
const raw = fc.constantFrom('-0', '0', '1e400', '-1e400', '1E2', '2e0', '0.0', '1.0', '9007199254740992', '9007199254740993', '4.5e1', '-5', '1e-400', '3').map((written) => new Raw(written));
const leaf = fc.oneof(text, fc.integer({ min: -2, max: 3 }), fc.double(), fc.constantFrom(2 ** 53, 2 ** 53 - 1, 1.5), raw, fc.boolean(), fc.constant(null));
const anything = fc.oneof({ weight: 3, arbitrary: leaf }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) });
const count = fc.oneof(fc.nat({ max: 100 }), raw, anything);
const details = (key: string) => fc.oneof(fc.record({ [key]: count, audio_tokens: anything }, { requiredKeys: [] }), anything);
const usage = fc.oneof(
  fc.record(
    { prompt_tokens: count, completion_tokens: count, total_tokens: anything, prompt_tokens_details: details('cached_tokens'), completion_tokens_details: details('reasoning_tokens'), prompt_cache_hit_tokens: count, queue_time: anything },
    { requiredKeys: [] },
  ),
  anything,
);
const toolCalls = fc.array(fc.record({ index: anything, id: anything, function: fc.record({ name: anything, arguments: anything }, { requiredKeys: [] }) }, { requiredKeys: [] }), { maxLength: 2 });
const delta = fc.oneof(
  fc.record({ role: anything, content: fc.oneof(text, anything), refusal: fc.oneof(text, anything), reasoning_content: fc.oneof(text, anything), reasoning: fc.oneof(text, anything), tool_calls: fc.oneof(fc.constant(null), toolCalls, anything), model: text }, { requiredKeys: [] }),
  anything,
);
const choice = fc.oneof(
  { weight: 4, arbitrary: fc.record({ index: fc.oneof(fc.integer({ min: -1, max: 2 }), raw, anything), delta, logprobs: anything, finish_reason: fc.oneof(text, anything), content_filter_results: anything, model: text }, { requiredKeys: ['delta'] }) },
  { weight: 1, arbitrary: anything },
);
const chunk = fc.record(
  {
    id: text,
    object: anything,
    created: fc.oneof(fc.nat(), raw),
    model: fc.oneof({ weight: 4, arbitrary: text }, { weight: 1, arbitrary: anything }),
    choices: fc.oneof({ weight: 4, arbitrary: fc.array(choice, { maxLength: 3 }) }, { weight: 1, arbitrary: anything }),
    usage,
    error: fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: anything }),
    obfuscation: anything,
    // Groq's extension object, with or without its usage.
    x_groq: fc.oneof(fc.record({ id: text, usage }, { requiredKeys: [] }), anything),
  },
  { requiredKeys: [] },
);
const spaces = fc.oneof({ weight: 3, arbitrary: fc.constant(['']) }, { weight: 1, arbitrary: fc.array(fc.constantFrom('', '', '', '', ' ', '\n', '\t', '\r\n', '\f'), { minLength: 1, maxLength: 5 }) });

/** Members of the plain chunk's objects, or of nearly plain ones: each perhaps left out, written twice, or odd. */
const ABSENT = Symbol('absent');
const member = (key: string, value: fc.Arbitrary<unknown>) =>
  fc.tuple(fc.constant(key), value, fc.oneof({ weight: 20, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.constantFrom(0, 2) })).map(([name, item, times]) => Array.from({ length: times }, () => [name, item] as [string, unknown]));
const shuffled = (members: fc.Arbitrary<[string, unknown][]>[]) => fc.tuple(...members).chain((lists) => fc.shuffledSubarray(lists.flat(), { minLength: lists.flat().length }));
const odd = fc.oneof(anything, fc.constant(ABSENT));
const extra = fc.oneof(
  { weight: 3, arbitrary: fc.constant([]) },
  { weight: 1, arbitrary: fc.array(fc.tuple(fc.oneof(fc.constantFrom('id', 'object', 'created', 'logprobs', 'role', 'obfuscation', 'content_filter_results', 'model', 'x'), text), fc.oneof(leaf, fc.jsonValue({ maxDepth: 3 }))), { maxLength: 3 }) },
);
const plainDelta = fc
  .tuple(
    shuffled([member('content', fc.oneof({ weight: 10, arbitrary: text }, { weight: 1, arbitrary: odd })), member('role', fc.constantFrom('assistant', null)), member('refusal', fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: odd })), member('reasoning_content', fc.oneof({ weight: 6, arbitrary: fc.constant(ABSENT) }, { weight: 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: odd })), member('tool_calls', fc.oneof({ weight: 6, arbitrary: fc.constant(ABSENT) }, { weight: 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: odd }, { weight: 1, arbitrary: toolCalls }))]),
    extra,
  )
  .map(([pairs, more]) => new Members([...pairs, ...more].filter(([, value]) => value !== ABSENT)));
const plainChoice = fc
  .tuple(shuffled([member('index', fc.constantFrom(0, 0, 0, 0, 0, 0, null, 1, -1, '0', ABSENT)), member('delta', fc.oneof({ weight: 12, arbitrary: plainDelta }, { weight: 1, arbitrary: odd })), member('logprobs', fc.constant(null)), member('finish_reason', fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom('stop', '', 'length') }, { weight: 1, arbitrary: odd }))]), extra)
  .map(([pairs, more]) => new Members([...pairs, ...more].filter(([, value]) => value !== ABSENT)));
const plainChunk = fc
  .tuple(
    shuffled([
      member('id', text),
      member('object', fc.constant('chat.completion.chunk')),
      member('created', fc.oneof(fc.nat(), raw)),
      member('model', fc.oneof({ weight: 10, arbitrary: text }, { weight: 1, arbitrary: odd })),
      member('choices', fc.oneof({ weight: 8, arbitrary: fc.array(plainChoice, { minLength: 1, maxLength: 1 }) }, { weight: 1, arbitrary: fc.array(plainChoice, { maxLength: 3 }) }, { weight: 1, arbitrary: odd })),
      member('usage', fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: usage })),
      member('error', fc.oneof({ weight: 4, arbitrary: fc.constant(ABSENT) }, { weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: odd })),
      member('obfuscation', text),
      member('x_groq', fc.oneof({ weight: 6, arbitrary: fc.constant(ABSENT) }, { weight: 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.record({ id: text }) }, { weight: 1, arbitrary: fc.record({ id: text, usage }, { requiredKeys: [] }) }, { weight: 1, arbitrary: odd })),
    ]),
    extra,
  )
  .map(([pairs, more]) => new Members([...pairs, ...more].filter(([, value]) => value !== ABSENT)));

/** Chunks of every shape the schema reads, or refuses. */
const CHUNKS: Record<string, unknown>[] = [
  {},
  { choices: null, usage: null },
  { choices: [] },
  { choices: [], usage: { prompt_tokens: 9, completion_tokens: 20, total_tokens: 29, prompt_tokens_details: { cached_tokens: 3 }, completion_tokens_details: { reasoning_tokens: 1 } } },
  { choices: [], usage: { prompt_tokens: -1, completion_tokens: 1.5, prompt_tokens_details: { cached_tokens: '3' }, completion_tokens_details: { reasoning_tokens: 2 ** 53 } } },
  { choices: [], usage: { prompt_tokens: null, completion_tokens: undefined, prompt_tokens_details: null, completion_tokens_details: 'x' } },
  { choices: [], usage: { prompt_tokens: 2 ** 53 - 1, completion_tokens: -0, prompt_tokens_details: [], completion_tokens_details: { reasoning_tokens: true } } },
  { choices: [], usage: 'x' },
  { choices: [], usage: { prompt_tokens: 120, completion_tokens: 40, prompt_cache_hit_tokens: 100, prompt_cache_miss_tokens: 20 } },
  { choices: [], usage: { prompt_tokens: 120, completion_tokens: 40, prompt_tokens_details: { cached_tokens: 90 }, prompt_cache_hit_tokens: 100 } },
  { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], x_groq: { id: 'req_1', usage: { queue_time: 0.1, prompt_tokens: 23, completion_tokens: 19, total_tokens: 42 } } },
  { choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }], x_groq: { id: 'req_1', usage: { prompt_tokens: 1, completion_tokens: 2 } } },
  { choices: [{ index: 0, delta: { content: 'Hi' } }], x_groq: { id: 'req_1' } },
  { choices: [], usage: { prompt_tokens: 5, completion_tokens: 6 }, x_groq: { usage: { prompt_tokens: 7, completion_tokens: 8 } } },
  { choices: [], x_groq: { usage: 'x' } },
  { choices: [], x_groq: 'x' },
  { choices: [{ index: 0, delta: { content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'Hm' }] }] }, finish_reason: null }] },
  { choices: [{ index: 0, delta: { content: [{ type: 'text', text: 'Hi' }] }, finish_reason: null }] },
  { choices: [{ index: 0, delta: { content: [] }, finish_reason: null }] },
  { choices: [], usage: [1] },
  { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
  { choices: [{ index: 0, delta: { content: 'Hi', refusal: null }, finish_reason: null }] },
  { choices: [{ delta: { content: 'Hi' } }] },
  { choices: [{ index: null, delta: { content: 7, refusal: 'No' }, finish_reason: 3 }] },
  { choices: [{ index: 1.5, delta: { reasoning_content: 'Hm', reasoning: 2 } }] },
  { choices: [{ index: 'zero', delta: 'x', finish_reason: 'length' }] },
  { choices: [{ index: 1, delta: { content: 'one' } }, { index: 0, delta: { content: 'zero' }, finish_reason: 'stop' }] },
  { choices: [{ index: 0, delta: null }] },
  { choices: [{ index: 0, delta: [] }] },
  { choices: [{ index: {}, delta: { content: ['x'], refusal: { a: 1 } }, finish_reason: [] }], usage: { prompt_tokens: {}, completion_tokens: [2], prompt_tokens_details: { cached_tokens: 'x' } } },
  { choices: [{ index: 0, delta: { tool_calls: null, content: '' } }] },
  { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1-mini', service_tier: 'default', system_fingerprint: 'fp', choices: [{ index: 0, delta: { content: 'a "quote", a \\ backslash,\na line, \u0001, \u2028 🦀' }, logprobs: null, finish_reason: null }], usage: null, obfuscation: 'x1' },
  { model: 'gpt-4o', choices: [{ index: 0, delta: { content: 'Hi' }, content_filter_results: { hate: { filtered: false, severity: 'safe' } }, finish_reason: null }], prompt_filter_results: [{ prompt_index: 0 }] },
];

/** Plain content chunks as upstreams write them: each read by the pattern. */
const PLAIN = [
  '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4.1-mini","service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"x1"}',
  '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4.1-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}',
  '{"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},"delta":{"content":" w\\u00f6rld \\"🦀\\"\\n"},"finish_reason":null,"index":0,"logprobs":null}],"created":1,"id":"chatcmpl-2","model":"gpt-4o-2024-08-06","object":"chat.completion.chunk","system_fingerprint":"fp_2"}',
  '{"id":"x","model":"deepseek-chat","choices":[{"index":0,"delta":{"content":"Hi","reasoning_content":null},"finish_reason":null}]}',
  '{"id":"x","model":"llama-3.3-70b-versatile","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}],"x_groq":null}',
];

/** What the parser's path alone gives: the scanner must leave each to it. */
const LEFT_TO_THE_PARSER = [
  '{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":""}}]}}]}',
  '{"choices":"x"}',
  '{"choices":[1]}',
  '{"choices":[null]}',
  '{"error":{"message":"overloaded"}}',
  '{"choices":[],"choices":[{"index":0,"delta":{"content":"second"}}]}',
  '{"model":"a","model":"b"}',
  '{"model":"a\\u0062"}',
  '{"model":7}',
  '{"cho\\u0069ces":[]}',
  '{"choices":[{"index":0,"delta":{"content":"x","model":"gpt-4.1-mini"}}]}',
  '{"choices":[{"index":0,"delta":{"content":"x"},"model":"gpt-4.1-mini"}]}',
  '{"x":{"model":"gpt-4.1-mini"},"choices":[]}',
  '{"choices":[{"index":0,"delta":{"reasoning":{"effort":"low"}}}]}',
  '{"model":"llama","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}],"x_groq":{"id":"req_1","usage":{"prompt_tokens":1,"completion_tokens":2}}}',
  '{"model":"llama","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}],"x_groq":{"id":"req_1"}}',
  '{"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"Hm"},"finish_reason":null}]}',
  '{"model":"qwen3","choices":[{"index":0,"delta":{"content":"","reasoning":"Hm"},"finish_reason":null}]}',
  '{"model":"magistral","choices":[{"index":0,"delta":{"content":[{"type":"text","text":"Hi"}]},"finish_reason":null}]}',
  '[]',
  '"text"',
  '{"choices":[]} x',
  '{"choices":[],}',
  '{"choices":[{"delta":{"content":"a\u0001b"}}]}',
  '{"choices":[{"delta":{"content":"a\\qb"}}]}',
  '{"choices":[{"delta":{"content":"a\\u00zz"}}]}',
  '{"created":01}',
  '{"created":1.}',
  '{"created":-}',
  '{"created":1e}',
  '{"created":+1}',
  '{"created":nul}',
  '{"created":truex}',
  '{"a":"b"',
  '',
  `{"x":${'['.repeat(70)}${']'.repeat(70)}}`,
];

describe('readPlainChunk', () => {
  it.each(PLAIN.map((written) => [written]))('reads %s as the schema does', (written) => {
    expect(agrees(written)).toBe(true);
  });

  it.each(CHUNKS.map((value) => [JSON.stringify(value)]))('reads %s as the schema does, or leaves it to the parser', (written) => {
    agrees(written);
    agrees(JSON.stringify(JSON.parse(written), null, 2));
  });

  it.each(LEFT_TO_THE_PARSER.map((written) => [written]))('leaves %s to the parser', (written) => {
    expect(readPlainChunk(written)).toBeUndefined();
  });

  it('reads a plain chunk, written any way, to the events the schema reads, or leaves it to the parser', () => {
    let read = 0;
    fc.assert(
      fc.property(plainChunk, spaces, (value, between) => {
        if (agrees(write(value, between))) read += 1;
      }),
      { seed: 17, numRuns: 4_000 },
    );
    // The property is not held by leaving everything to the parser.
    expect(read).toBeGreaterThan(200);
  });

  it('reads any chunk to the events the schema reads, or leaves it to the parser', () => {
    fc.assert(
      fc.property(chunk, spaces, (value, between) => {
        agrees(write(value, between));
      }),
      { seed: 18, numRuns: 2_000 },
    );
  });

  it('never reads text that is not a chunk: a plain chunk with a character deleted, inserted or replaced', () => {
    const edit = fc.record({ at: fc.nat(), length: fc.integer({ min: 0, max: 2 }), insert: fc.string({ unit: fc.constantFrom(...SPECIALS, '{', '}', '[', ']', ',', ':', '0', 'e', '-', '.'), maxLength: 2 }) });
    fc.assert(
      fc.property(fc.oneof(plainChunk.map((value) => write(value, [''])), fc.constantFrom(...PLAIN)), edit, (written, { at, length, insert }) => {
        const cut = at % (written.length + 1);
        agrees(`${written.slice(0, cut)}${insert}${written.slice(cut + length)}`);
      }),
      { seed: 19, numRuns: 4_000 },
    );
  });
});

/** Tool calls without an id get a random one: the same for the comparison. */
const sameIds = (events: CanonicalEvent[]): CanonicalEvent[] => events.map((event) => (event.type === 'tool-call-start' ? { ...event, callId: 'call' } : event));

describe('readChatChunk', () => {
  const vendors = ['openrouter', 'groq', 'mistral', 'deepseek', 'xai', 'together', 'fireworks', 'vllm', 'ollama'];
  const streams = [
    'chat-text-stream.sse',
    'chat-tool-calls-stream.sse',
    'conformance/chat-text-stream.sse',
    'conformance/chat-tool-call-stream.sse',
    'conformance/chat-parallel-tool-calls-stream.sse',
    'conformance/chat-usage-stream.sse',
    // The OpenAI-compatible vendors' captures (docs/wire-protocols.md §20): their reasoning fields, Groq's x_groq, whole tool calls.
    ...vendors.flatMap((vendor) => ['text-stream.sse', 'tool-call-stream.sse', 'parallel-tool-calls-stream.sse', 'usage-stream.sse'].map((name) => `vendors/${vendor}/${name}`)),
  ];

  it.each(streams)('reads every chunk of %s as the schema does, the content ones without parsing them', (name) => {
    const chunks = fixture(name)
      .split('\n\n')
      .filter((event) => !event.startsWith(':'))
      .map((event) => event.replace(/^data: /, ''))
      .filter((data) => data !== '' && data !== '[DONE]');
    let read = 0;
    const reader = new ChatChunkReader();
    const bySchema = new ChatChunkReader();
    for (const data of chunks) {
      if (agrees(data)) read += 1;
      const parsed = parse(data);
      if (parsed.kind !== 'chunk') continue;
      const events = reader.read(data);
      const expected = bySchema.events({ chunk: parsed.chunk, error: undefined, parsed: parsed.value, model: undefined, modelAt: -1 });
      expect(sameIds(events)).toEqual(sameIds(expected));
    }
    // Every chunk but the finish and usage ones (and Groq's first, which names its request in x_groq).
    if (name.includes('text-stream')) expect(read).toBeGreaterThanOrEqual(chunks.length - (name.includes('groq') ? 3 : 2));
  });

  it('reads an in-band error, and refuses what is not a chunk', () => {
    expect(readChatChunk('{"error":{"message":"overloaded"}}')).toMatchObject({ chunk: undefined, error: 'overloaded' });
    expect(() => readChatChunk('{"choices":')).toThrow('not JSON');
    expect(() => readChatChunk('{"choices":"x"}')).toThrow('not a chat completion chunk');
  });
});

describe('ChatFramer', () => {
  it('frames any chunk as the parser and the model renaming would: the same text out, the same events', () => {
    const clientModel = fc.constantFrom('tollgate-mini', 'gpt-4.1-mini', 'Hello', 'mo"del', 'é🦀', '\ud800');
    fc.assert(
      fc.property(fc.oneof(plainChunk, chunk), spaces, clientModel, (value, between, client) => {
        const data = write(value, between);
        const parsed = parse(data);
        if (parsed.kind !== 'chunk') return;
        const frame = new ChatFramer(true, (message) => message, client).frame(undefined, data, `data: ${data}\n\n`);
        const upstream = parsed.value.model;
        const sent = typeof upstream !== 'string' || upstream === client ? data : (replaceModelName(data, upstream, client) ?? JSON.stringify({ ...parsed.value, model: client }));
        expect(frame.sse).toBe(sent === data ? `data: ${data}\n\n` : sseFrameOfLines(undefined, sent));
        const reader = new ChatChunkReader();
        const expected = reader.events({ chunk: parsed.chunk, error: undefined, parsed: parsed.value, model: undefined, modelAt: -1 });
        expect(sameIds(frame.events)).toEqual(sameIds(expected));
      }),
      { seed: 20, numRuns: 3_000 },
    );
  });
});
