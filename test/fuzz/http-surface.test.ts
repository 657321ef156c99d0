/**
 * A seeded fuzz test of the whole HTTP surface (fast-check), against the real server with the
 * simulated providers and a funded key: random methods, paths, headers (the key present, absent or
 * garbage; any content type) and bodies (malformed JSON, wrong types, unknown fields, deep nesting,
 * long strings, arrays where objects go, and valid-looking requests for both endpoints with random
 * values, streams included), plus raw request lines no HTTP client would send.
 *
 * Every answer must be: below 500, except the 503s the spec itself defines (`model_not_found` for a
 * model with no working target, `service_unavailable` for a dependency away); in the error format
 * when ≥ 400 (keys exactly message, type, [param], code; each a string); with `x-request-id`; and
 * complete (a stream is read to its end) within a per-request timeout. Models whose simulated
 * upstream fails on purpose (mid-stream, hang) are left out: their 502/504 are the upstream's
 * failure reported as designed, not a bug of the gateway. RSS must stay bounded.
 *
 * `npm test` runs a few hundred cases; `TOLLGATE_FUZZ_RUNS=20000 npx vitest run test/fuzz` runs
 * more, and `TOLLGATE_FUZZ_SEED` replays another seed. Long words (up to 300 KB without a space)
 * are in: token counting bounds them linearly (docs/architecture.md, Money).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testCatalog } from '../support/catalog.js';
import { startHarness, type Harness } from '../support/harness.js';
import { rawExchange } from '../support/raw-http.js';

const RUNS = Number(process.env.TOLLGATE_FUZZ_RUNS ?? 250);
const SEED = Number(process.env.TOLLGATE_FUZZ_SEED ?? 20_261_123);
/** Longer than any answer of the simulated providers; a request still open then is a hang. */
const REQUEST_TIMEOUT_MS = 15_000;
/** Garbage from 20,000 requests may sit uncollected; a leak or a runaway request goes past this. */
const RSS_GROWTH_LIMIT = 768 * 1024 * 1024;
/** What stays reachable after a full collection: caches and pools, not one entry per request. */
const HEAP_GROWTH_LIMIT = 128 * 1024 * 1024;

/** A full garbage collection, so that heap growth measures what is kept, not what is not collected yet. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

const MODELS = ['model-5.6', 'model-5.6-mini', 'model-5.6-luna', 'failover-model', 'broken-model', 'disabled-model', 'gpt-4o', ''];
const PATHS = ['/v1/responses', '/v1/chat/completions', '/v1/models', '/healthz', '/metrics', '/v1/responses/resp_123', '/v1/responses/resp_123/input_items', '/', '/v1', '/v1/embeddings'];

interface Case {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
}

// --- bodies ----------------------------------------------------------------------------------

/** Text with spaces (token counting stays linear), up to ~200 KB. */
const longText = fc.integer({ min: 0, max: 200_000 }).map((length) => 'lorem ipsum dolor sit amet '.repeat(Math.ceil(length / 27)).slice(0, length));
/** Short text of any characters, spaces or not (under 2 KB). */
const shortText = fc.string({ maxLength: 2_000, unit: 'binary' });
/** One "word" of up to 300 KB: a letter, a space or a punctuation mark repeated (quadratic for BPE). */
const longWord = fc.tuple(fc.constantFrom('a', ' ', '!', 'é', '7'), fc.integer({ min: 1_000, max: 300_000 })).map(([unit, length]) => unit.repeat(length));
const anyText = fc.oneof({ weight: 4, arbitrary: fc.string({ maxLength: 40 }) }, { weight: 1, arbitrary: shortText }, { weight: 1, arbitrary: longText }, { weight: 1, arbitrary: longWord });
const anyJson = fc.jsonValue({ maxDepth: 4 });

/** Objects or arrays nested `depth` levels, built as text (any depth, no recursion). */
const deepValue = fc.tuple(fc.oneof(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 200, max: 6_000 })), fc.boolean()).map(([depth, arrays]) => (arrays ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`));

// Valid requests with random values; `mutated` and the other bodies below break them.
const GOOD_MODELS = ['model-5.6', 'model-5.6-mini', 'model-5.6-luna', 'failover-model'];
const REASONING_MODELS = new Set(['model-5.6', 'model-5.6-luna']);
const model = fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...GOOD_MODELS) }, { weight: 1, arbitrary: fc.constantFrom(...MODELS) }, { weight: 1, arbitrary: fc.string({ maxLength: 20 }) });
const role = fc.constantFrom('user', 'system', 'developer', 'assistant');
const toolName = fc.stringMatching(/^[a-zA-Z0-9_-]{1,64}$/);
const schema = fc.constantFrom<Record<string, unknown>>(
  { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  { type: 'object', properties: { n: { $ref: '#/$defs/n' } }, $defs: { n: { type: 'integer', minimum: 1 } }, required: ['n'] },
  { type: 'object', properties: { list: { type: 'array', items: { type: 'string' }, minItems: 2 } }, required: ['list'] },
  { type: 'object', properties: {} },
  { type: 'object', properties: { many: { type: 'array', items: { type: 'string' }, minItems: 1e9 } }, required: ['many'] },
);
/** A schema of random JSON Schema keywords: the simulated provider builds tool arguments from it. */
const randomSchema = fc.dictionary(fc.constantFrom('type', 'properties', 'items', 'minItems', 'maxItems', 'required', '$ref', '$defs', 'allOf', 'anyOf', 'enum', 'const', 'minimum'), anyJson, { maxKeys: 5 });
const toolSchema = fc.oneof({ weight: 3, arbitrary: schema }, { weight: 1, arbitrary: randomSchema });
const chatTool = fc.record({ type: fc.constant('function'), function: fc.record({ name: toolName, description: anyText, parameters: toolSchema, strict: fc.boolean() }, { requiredKeys: ['name'] }) });

const chatRequest: fc.Arbitrary<Record<string, unknown>> = fc
  .record(
    {
      model,
      messages: fc.array(fc.record({ role, content: anyText }), { minLength: 1, maxLength: 3 }),
      stream: fc.boolean(),
      stream_options: fc.record({ include_usage: fc.boolean() }),
      tools: fc.array(chatTool, { minLength: 1, maxLength: 3 }),
      tool_choice: fc.constantFrom('auto', 'none', 'required'),
      temperature: fc.double({ min: 0, max: 2, noNaN: true }),
      max_tokens: fc.integer({ min: 1, max: 600 }),
      response_format: fc.oneof(fc.constant({ type: 'json_object' }), fc.record({ type: fc.constant('json_schema'), json_schema: fc.record({ name: fc.stringMatching(/^[a-z_]{1,10}$/), schema }) })),
      user: fc.string({ maxLength: 20 }),
    },
    { requiredKeys: ['model', 'messages'] },
  )
  .map((request) => {
    const valid: Record<string, unknown> = { ...request };
    if (valid.stream !== true) delete valid.stream_options;
    if (valid.tools === undefined) delete valid.tool_choice;
    return valid;
  });

const inputPart = fc.record({ type: fc.constant('input_text'), text: anyText });
const responsesInput = fc.oneof(
  anyText,
  fc.array(
    fc.oneof(
      fc.record({ role: fc.constantFrom('user', 'system', 'developer'), content: fc.oneof(anyText, fc.array(inputPart, { minLength: 1, maxLength: 3 })) }),
      fc.record({ type: fc.constant('function_call'), call_id: fc.stringMatching(/^call_[a-z0-9]{1,8}$/), name: toolName, arguments: fc.constant('{}') }),
      fc.record({ type: fc.constant('function_call_output'), call_id: fc.stringMatching(/^call_[a-z0-9]{1,8}$/), output: anyText }),
    ),
    { minLength: 1, maxLength: 4 },
  ),
);

const responsesRequest: fc.Arbitrary<Record<string, unknown>> = fc
  .record(
    {
      model,
      input: responsesInput,
      instructions: anyText,
      stream: fc.boolean(),
      store: fc.boolean(),
      reasoning: fc.record({ effort: fc.constantFrom('low', 'medium', 'high', 'xhigh', 'max') }),
      tools: fc.array(fc.record({ type: fc.constant('function'), name: toolName, parameters: toolSchema }), { minLength: 1, maxLength: 3 }),
      max_output_tokens: fc.integer({ min: 16, max: 600 }),
      metadata: fc.dictionary(fc.stringMatching(/^[a-z]{1,10}$/), fc.string({ maxLength: 20 }), { maxKeys: 3 }),
      text: fc.record({ format: fc.oneof(fc.constant({ type: 'text' }), fc.constant({ type: 'json_object' }), fc.record({ type: fc.constant('json_schema'), name: fc.stringMatching(/^[a-z_]{1,10}$/), schema })) }),
    },
    { requiredKeys: ['model', 'input'] },
  )
  .map((request) => {
    const valid: Record<string, unknown> = { ...request };
    if (typeof valid.model !== 'string' || !REASONING_MODELS.has(valid.model)) delete valid.reasoning;
    return valid;
  });
/** Now and then, a conversation continued from a response id that may not exist. */
const responsesRequestOrContinuation = fc.oneof(
  { weight: 9, arbitrary: responsesRequest },
  { weight: 1, arbitrary: fc.tuple(responsesRequest, fc.stringMatching(/^resp_[a-z0-9]{0,12}$/)).map(([request, id]) => ({ ...request, previous_response_id: id })) },
);

/** A valid-looking request with a few fields replaced by anything, removed, added, or wrapped in an array. */
function mutated(valid: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<string> {
  return fc
    .tuple(valid, fc.array(fc.tuple(fc.constantFrom('replace', 'delete', 'add', 'wrap'), fc.nat(), anyJson, fc.string({ maxLength: 12 })), { minLength: 1, maxLength: 2 }))
    .map(([base, mutations]) => {
      const body: Record<string, unknown> = { ...base };
      for (const [kind, pick, value, name] of mutations) {
        const keys = Object.keys(body);
        const key = keys[pick % Math.max(1, keys.length)] ?? 'model';
        if (kind === 'replace') body[key] = value;
        else if (kind === 'delete') delete body[key];
        else if (kind === 'add') body[name] = value;
        else body[key] = [body[key]];
      }
      return JSON.stringify(body);
    });
}

/** A body for `path`: the request of its surface (either one elsewhere), valid-looking or broken. */
function bodyFor(path: string): fc.Arbitrary<string | undefined> {
  const valid: fc.Arbitrary<Record<string, unknown>> = path.startsWith('/v1/chat/') ? chatRequest : path.startsWith('/v1/responses') ? responsesRequestOrContinuation : fc.oneof(chatRequest, responsesRequest);
  return fc.oneof(
    { weight: 10, arbitrary: valid.map((value) => JSON.stringify(value)) },
    { weight: 4, arbitrary: mutated(valid) },
    { weight: 1, arbitrary: fc.oneof(chatRequest, responsesRequest).map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: anyJson.map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: valid.chain((value) => fc.nat({ max: JSON.stringify(value).length }).map((cut) => JSON.stringify(value).slice(0, cut))) },
    { weight: 1, arbitrary: shortText },
    { weight: 1, arbitrary: deepValue.map((value) => `{"model":"model-5.6","input":"x","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","name":"f","function":{"name":"f","parameters":${value}}}],"metadata":${value}}`) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

// --- requests --------------------------------------------------------------------------------

const path = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom('/v1/responses', '/v1/chat/completions') },
  { weight: 2, arbitrary: fc.constantFrom(...PATHS) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...PATHS), fc.webQueryParameters()).map(([base, query]) => `${base}?${query}`) },
  { weight: 1, arbitrary: fc.webPath() },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('/v1/responses/', '/v1/', '/'), fc.string({ unit: 'binary', maxLength: 60 })).map(([base, tail]) => base + encodeURIComponent(tail).replace(/%2F/g, '/').replace(/%25/g, '%')) },
);
const method = fc.oneof({ weight: 16, arbitrary: fc.constant('POST') }, { weight: 2, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'FOO', 'post') });
const printable = fc.string({ maxLength: 80 }).map((text) => text.replace(/[^\x20-\x7e]/g, ''));

function caseArbitrary(secret: string): fc.Arbitrary<Case> {
  const authorization = fc.oneof(
    { weight: 12, arbitrary: fc.constant(`Bearer ${secret}`) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom('Bearer', 'Bearer ', 'Basic YTpi', `bearer ${secret}`, `Bearer ${secret}x`, 'Bearer sk-tg-0000000000000000000000000000000000000000') },
    { weight: 1, arbitrary: printable.map((text) => `Bearer ${text}`) },
  );
  const contentType = fc.oneof(
    { weight: 12, arbitrary: fc.constant('application/json') },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/json; charset=latin1', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', '*/*', ';;;') },
    { weight: 1, arbitrary: printable },
  );
  const extra = fc.dictionary(fc.constantFrom('x-custom', 'accept', 'accept-encoding', 'content-encoding', 'x-request-id', 'openai-organization', 'user-agent'), printable, { maxKeys: 3 });
  const target = path.chain((drawnPath) => bodyFor(drawnPath.split('?')[0] ?? drawnPath).map((body) => ({ path: drawnPath, body })));
  return fc.record({ method, target, authorization, contentType, extra }).map(({ target: { path: drawnPath, body }, ...drawn }) => {
    const headers: Record<string, string> = { ...drawn.extra };
    if (drawn.authorization !== undefined) headers.authorization = drawn.authorization;
    if (drawn.contentType !== undefined) headers['content-type'] = drawn.contentType;
    const bodyless = drawn.method === 'GET' || drawn.method === 'HEAD';
    return { method: drawn.method, path: drawnPath, headers, body: bodyless ? undefined : body };
  });
}

/** Request lines and headers no HTTP client would send, over a raw socket. */
const rawCase = fc
  .tuple(
    fc.oneof(fc.constantFrom('GET', 'POST', 'G T', 'GET\u0000', ''), fc.string({ maxLength: 10 })),
    fc.oneof(fc.constantFrom('/healthz', '/v1/responses', '*', ''), fc.string({ maxLength: 30 })),
    fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1 extra', ''),
    fc.array(fc.tuple(fc.string({ maxLength: 12 }), fc.string({ maxLength: 30 })), { maxLength: 4 }),
  )
  .map(([verb, target, version, headers]) => `${verb} ${target} ${version}\r\nHost: fuzz\r\n${headers.map(([name, value]) => `${name}: ${value}\r\n`).join('')}Connection: close\r\n\r\n`);

// --- checks ----------------------------------------------------------------------------------

const SPEC_503_CODES = new Set(['model_not_found', 'service_unavailable']);

/** What is wrong with one answer, or undefined when it is in order. */
function violation(status: number, requestId: string | undefined, text: string, head: boolean): string | undefined {
  if (requestId === undefined || !/^req_[0-9a-f]{24}$/.test(requestId)) return `no x-request-id (status ${status})`;
  if (status < 400 || head) return status >= 500 ? `status ${status}` : undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return `status ${status} with a body that is not JSON: ${text.slice(0, 120)}`;
  }
  const error = (parsed as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null || Object.keys(parsed as object).length !== 1) return `not in the error format: ${text.slice(0, 200)}`;
  const keys = Object.keys(error);
  const fields = error as Record<string, unknown>;
  const order = keys.join(',');
  if (order !== 'message,type,code' && order !== 'message,type,param,code') return `error keys ${order}: ${text.slice(0, 200)}`;
  for (const key of keys) if (typeof fields[key] !== 'string') return `error.${key} is ${JSON.stringify(fields[key])}: ${text.slice(0, 200)}`;
  if (status >= 500 && !(status === 503 && SPEC_503_CODES.has(fields.code as string))) return `status ${status}: ${text.slice(0, 200)}`;
  return undefined;
}

describe('fuzzing the HTTP surface', () => {
  let harness: Harness;
  let secret: string;
  const agent = new Agent({ headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS, connections: 4 });

  beforeAll(async () => {
    harness = await startHarness({ catalog: testCatalog({ requestsPerWindow: 10_000_000 }) });
    ({ secret } = await harness.newAccount('100000'));
  });
  afterAll(async () => {
    await agent.close();
    await harness?.close();
  });

  it(`answers ${RUNS} random requests (seed ${SEED}) below 500, in the error format, with x-request-id, without hanging`, async () => {
    const violations: string[] = [];
    const statuses = new Map<number, number>();
    let refusedByClient = 0;
    collectGarbage();
    const before = process.memoryUsage();
    const send = async (drawn: Case) => {
      const what = `${drawn.method} ${drawn.path} ${JSON.stringify(drawn.headers).slice(0, 120)} ${(drawn.body ?? '').slice(0, 200)}`;
      try {
        const answer = await request(`${harness.baseUrl}${drawn.path}`, { method: drawn.method, headers: drawn.headers, body: drawn.body, dispatcher: agent });
        // Streams too: read to the end.
        const text = await answer.body.text();
        statuses.set(answer.statusCode, (statuses.get(answer.statusCode) ?? 0) + 1);
        const found = violation(answer.statusCode, answer.headers['x-request-id'] as string | undefined, text, drawn.method === 'HEAD');
        if (found !== undefined) violations.push(`${found}\n    for ${what}`);
      } catch (error) {
        // undici refuses some drawn requests before sending (an invalid header value): not ours.
        if ((error as { code?: unknown }).code === 'UND_ERR_INVALID_ARG') {
          refusedByClient += 1;
          return;
        }
        violations.push(`${error instanceof Error ? error.message : String(error)}\n    for ${what}`);
      }
    };
    const sendRaw = async (payload: string) => {
      try {
        const answer = await rawExchange(harness.baseUrl, payload, REQUEST_TIMEOUT_MS);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        const found = violation(answer.status, answer.headers['x-request-id'], answer.body, payload.startsWith('HEAD '));
        if (found !== undefined) violations.push(`${found}\n    for raw ${JSON.stringify(payload.slice(0, 200))}`);
      } catch (error) {
        violations.push(`${error instanceof Error ? error.message : String(error)}\n    for raw ${JSON.stringify(payload.slice(0, 200))}`);
      }
    };
    const anyCase = fc.oneof({ weight: 9, arbitrary: caseArbitrary(secret).map((drawn) => ({ kind: 'http' as const, drawn })) }, { weight: 1, arbitrary: rawCase.map((payload) => ({ kind: 'raw' as const, payload })) });
    await fc.assert(
      fc.asyncProperty(anyCase, async (drawn) => {
        if (drawn.kind === 'http') await send(drawn.drawn);
        else await sendRaw(drawn.payload);
      }),
      { numRuns: RUNS, seed: SEED },
    );
    const rssGrowth = process.memoryUsage().rss - before.rss;
    collectGarbage();
    const heapGrowth = process.memoryUsage().heapUsed - before.heapUsed;
    const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
    console.log(
      `fuzz: ${RUNS} runs, seed ${SEED}, ${violations.length} violations, ${refusedByClient} refused by the client before sending, RSS growth ${mb(rssGrowth)} MB, heap growth after GC ${mb(heapGrowth)} MB, statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    expect(violations.slice(0, 10)).toEqual([]);
    expect(rssGrowth).toBeLessThan(RSS_GROWTH_LIMIT);
    expect(heapGrowth).toBeLessThan(HEAP_GROWTH_LIMIT);
    expect((await fetch(`${harness.baseUrl}/healthz`)).status).toBe(200);
  }, 600_000);
});
