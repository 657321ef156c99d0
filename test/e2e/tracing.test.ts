/**
 * OpenTelemetry traces of a real `tollgate serve` (the built gateway), turned on by the standard
 * OTEL_* environment and exported over OTLP/HTTP JSON to a collector double on loopback: one
 * server span per /v1 request, one client span per upstream attempt as its child, with model,
 * target, tokens and cost, and never a key, a secret, a prompt or an answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/admin/accounts.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { createKey } from '../../src/admin/keys.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { testCatalog } from '../support/catalog.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { startGatewayProcess, writeCatalog, type GatewayProcess } from '../support/gateway-process.js';
import { startOpenAIUpstream, type UpstreamDouble } from '../support/openai-upstream.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';

const UPSTREAM_SECRET = 'sk-upstream-secret-never-traced';
const PROMPT_MARKER = 'prompt-text-that-must-stay-private';
const ANSWER_TEXT = 'answer-text-that-must-stay-private';
const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

describe('OpenTelemetry traces (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, http/json)', () => {
  let database: TestDatabase;
  let store: Store;
  let upstream: UpstreamDouble;
  let receiver: OtlpReceiver;
  let gateway: GatewayProcess;
  let secret: string;
  let accountId: string;

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    store = await openStore(database.url);
    const account = await createAccount(store, { name: 'traced', balanceUsd: '10' }, CLI_ACTOR);
    accountId = account.id;
    secret = (await createKey(store, { accountRef: account.id }, CLI_ACTOR)).secret;
    upstream = await startOpenAIUpstream({ reply: () => ({ content: ANSWER_TEXT }) });
    receiver = await startOtlpReceiver();
    gateway = await startGatewayProcess({
      TOLLGATE_DATABASE_URL: database.url,
      TOLLGATE_CONFIG: writeCatalog(testCatalog({ upstreamBaseUrl: upstream.baseUrl })),
      TEST_UPSTREAM_KEY: UPSTREAM_SECRET,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.tracesUrl,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_SERVICE_NAME: 'tollgate-under-test',
    });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await receiver?.close();
    await upstream?.close();
    await store?.close();
    await database?.drop();
  }, 30_000);

  async function post(body: object): Promise<{ requestId: string; text: string; status: number }> {
    const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { requestId: response.headers.get('x-request-id') ?? '', text: await response.text(), status: response.status };
  }

  /** The request's server span and its children, once the request span has been exported. */
  async function spansOf(requestId: string, children: number): Promise<{ request: ReceivedSpan; upstream: ReceivedSpan[] }> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const request = receiver.spans.find((span) => span.attributes['tollgate.request_id'] === requestId);
      const upstreamSpans = request === undefined ? [] : receiver.spans.filter((span) => span.parentSpanId === request.spanId);
      if (request !== undefined && upstreamSpans.length >= children) return { request, upstream: upstreamSpans };
      if (Date.now() > deadline) throw new Error(`no exported spans for ${requestId}:\n${gateway.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  it('a server span per request, with the upstream call as its child span: model, target, tokens and cost', async () => {
    const answer = await post({ model: 'relay-model', messages: [{ role: 'user', content: PROMPT_MARKER }] });
    expect(answer.status).toBe(200);
    const { request, upstream: [call, ...others] } = await spansOf(answer.requestId, 1);
    expect(others).toEqual([]);
    const [charge] = (await store.listLedger(accountId)).filter((entry) => entry.kind === 'charge' && entry.requestId === answer.requestId);
    expect(charge).toBeDefined();

    expect(request).toMatchObject({ name: 'POST /v1/chat/completions', kind: SERVER, parentSpanId: '', status: { code: 0 } });
    expect(request.resource['service.name']).toBe('tollgate-under-test');
    expect(request.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/chat/completions',
      'http.response.status_code': 200,
      'tollgate.model': 'relay-model',
      'tollgate.target': 'upstream/upstream-model',
      'tollgate.stream': false,
      'gen_ai.usage.input_tokens': charge!.inputTokens,
      'gen_ai.usage.output_tokens': charge!.outputTokens,
      'tollgate.cost_nanos': Number(charge!.amountNanos),
    });

    expect(call!.traceId).toBe(request.traceId);
    expect(call).toMatchObject({ name: 'upstream upstream', kind: CLIENT, status: { code: 0 } });
    expect(call!.attributes).toMatchObject({
      'tollgate.target': 'upstream/upstream-model',
      'tollgate.provider': 'upstream',
      'tollgate.model': 'relay-model',
      'gen_ai.request.model': 'upstream-model',
      'gen_ai.usage.input_tokens': charge!.inputTokens,
      'gen_ai.usage.output_tokens': charge!.outputTokens,
      'tollgate.cost_nanos': Number(charge!.amountNanos),
    });
    expect(Number(charge!.amountNanos)).toBeGreaterThan(0);
  });

  it('a failover shows each attempt as a child span, the failed one as an error with its kind', async () => {
    const answer = await post({ model: 'failover-model', messages: [{ role: 'user', content: 'x' }], max_tokens: 20 });
    expect(answer.status).toBe(200);
    const { request, upstream: calls } = await spansOf(answer.requestId, 2);
    expect(calls).toHaveLength(2);
    const failed = calls.find((span) => span.attributes['tollgate.target'] === 'sim-fail-before/failover-model');
    const answered = calls.find((span) => span.attributes['tollgate.target'] === 'sim/failover-model');
    expect(failed).toMatchObject({ status: { code: ERROR, message: 'status' }, attributes: { 'error.type': 'status', 'http.response.status_code': 500 } });
    expect(answered?.status.code).toBe(0);
    expect(answered?.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    expect(request.attributes['tollgate.target']).toBe('sim/failover-model');
  });

  it('a streamed answer: its upstream span carries the billed usage', async () => {
    const answer = await post({ model: 'relay-model', messages: [{ role: 'user', content: PROMPT_MARKER }], stream: true, stream_options: { include_usage: true } });
    expect(answer.status).toBe(200);
    expect(answer.text).toContain(ANSWER_TEXT);
    const { request, upstream: [call] } = await spansOf(answer.requestId, 1);
    expect(request.attributes['tollgate.stream']).toBe(true);
    expect(call!.attributes['tollgate.stream']).toBe(true);
    expect(call!.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
  });

  it('a request refused before routing still has its span, as the client\'s error (not the server\'s)', async () => {
    const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer sk-tg-made-up', 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(401);
    const { request, upstream: calls } = await spansOf(response.headers.get('x-request-id') ?? '', 0);
    expect(calls).toEqual([]);
    expect(request.status.code).toBe(0);
    expect(request.attributes).toMatchObject({ 'http.response.status_code': 401, 'error.type': 'invalid_token' });
  });

  it('gives probes, /metrics and unknown routes no span', async () => {
    for (const path of ['/healthz', '/metrics', '/nowhere']) await (await fetch(`${gateway.baseUrl}${path}`)).text();
    // Spans of a later /v1 request arrive after whatever these would have exported.
    const answer = await post({ model: 'model-5.6-mini', messages: [{ role: 'user', content: 'x' }], max_tokens: 5 });
    await spansOf(answer.requestId, 1);
    expect(receiver.spans.filter((span) => span.kind === SERVER).map((span) => span.attributes['http.route'])).not.toContainEqual(expect.not.stringMatching(/^\/v1\//));
  });

  it('never exports a key, a secret, a prompt or an answer', () => {
    expect(receiver.rawBodies.length).toBeGreaterThan(0);
    const everything = receiver.rawBodies.join('\n');
    for (const forbidden of [secret, secret.slice(0, 16), UPSTREAM_SECRET, 'Bearer', PROMPT_MARKER, ANSWER_TEXT]) expect(everything).not.toContain(forbidden);
  });
});

describe('OpenTelemetry traces over the default protocol (OTLP/HTTP protobuf)', () => {
  it('exports the request and upstream spans as protobuf, still without secrets or text', async () => {
    const database = await createTestDatabase('sqlite');
    const store = await openStore(database.url);
    const receiver = await startOtlpReceiver();
    let gateway: GatewayProcess | undefined;
    try {
      const account = await createAccount(store, { name: 'traced-protobuf', balanceUsd: '1' }, CLI_ACTOR);
      const { secret } = await createKey(store, { accountRef: account.id }, CLI_ACTOR);
      gateway = await startGatewayProcess({
        TOLLGATE_DATABASE_URL: database.url,
        TOLLGATE_CONFIG: writeCatalog(testCatalog()),
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.tracesUrl.replace(/\/v1\/traces$/, ''),
      });
      const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'model-5.6-mini', messages: [{ role: 'user', content: PROMPT_MARKER }], max_tokens: 5 }),
      });
      expect(response.status).toBe(200);
      const requestId = response.headers.get('x-request-id') ?? '';
      // The batch goes out at the latest when the process drains on SIGTERM.
      expect(await gateway.stop()).toBe(0);
      expect(receiver.protobufExports()).toBeGreaterThan(0);
      const everything = receiver.rawBodies.join('\n');
      for (const expected of [requestId, 'POST /v1/chat/completions', 'upstream sim', 'sim/model-5.6-mini', 'gen_ai.usage.output_tokens']) expect(everything).toContain(expected);
      for (const forbidden of [secret, 'Bearer', PROMPT_MARKER]) expect(everything).not.toContain(forbidden);
    } finally {
      await gateway?.kill();
      await receiver.close();
      await store.close();
      await database.drop();
    }
  }, 60_000);
});
