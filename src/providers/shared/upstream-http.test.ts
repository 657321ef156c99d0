import { describe, expect, it, vi } from 'vitest';
import { expectNoSecrets, providerTestKit, upstreamFailure } from '../../../test/support/provider-test-kit.js';
import { json, type Answer, type UpstreamDouble } from '../../../test/support/upstream-double.js';
import { readMessageErrorBody, type ErrorBodyReader } from './error-body.js';
import { UpstreamError } from '../provider.js';
import type { CallCredentials } from './call-credentials.js';
import { createUpstreamHttpClient, UpstreamHttpClient } from './upstream-http.js';

const SECRET = 'sk-shared-client-Secret-4b1d';
const kit = providerTestKit();

function clientFor(double: UpstreamDouble, options: { headers?: Record<string, string>; readErrorBody?: ErrorBodyReader; idleMs?: number } = {}): UpstreamHttpClient {
  const client = new UpstreamHttpClient({
    providerType: 'acme',
    providerName: 'acme-primary',
    baseUrl: double.baseUrl,
    secret: SECRET,
    headers: options.headers ?? { 'x-acme-key': SECRET },
    readErrorBody: options.readErrorBody ?? readMessageErrorBody,
    timeouts: { connect_ms: 1_000, first_byte_ms: 2_000, idle_ms: options.idleMs ?? 2_000 },
  });
  kit.defer(() => client.close());
  return client;
}

const post = (client: UpstreamHttpClient, stream = true) => client.post('/things?alt=1', { hello: 'world' }, { signal: new AbortController().signal, requestId: 'req_shared_1', stream });
const postForWhole = (client: UpstreamHttpClient, signal = new AbortController().signal, extraHeaders?: Record<string, string>) =>
  client.postForWhole('/things?alt=1', { hello: 'world' }, { signal, requestId: 'req_shared_2', stream: false, ...(extraHeaders === undefined ? {} : { extraHeaders }) });
/** Both ways to call: a status failure is the same whichever reads the answer. */
const calls = [
  ['post', (client: UpstreamHttpClient) => post(client)],
  ['postForWhole', (client: UpstreamHttpClient) => postForWhole(client)],
] as const;

/** A 200 JSON answer written in `pieces` writes, split inside multi-byte characters. */
const piecewise =
  (text: string, pieces: number): Answer =>
  async (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    const bytes = Buffer.from(text, 'utf8');
    const size = Math.ceil(bytes.length / pieces);
    for (let offset = 0; offset < bytes.length; offset += size) {
      response.write(bytes.subarray(offset, offset + size));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    response.end();
  };

describe('UpstreamHttpClient: the request', () => {
  it('posts JSON under the base path with the provider headers, the request id and the accept of the call', async () => {
    const double = await kit.upstream(json(200, '{"ok":true}'));
    const client = clientFor(double);
    const response = await post(client);
    expect(response.status).toBe(200);
    expect(response.mediaType).toBe('application/json');
    expect(await client.readJsonObject(response, new AbortController().signal)).toEqual({ ok: true });
    await client.readJsonObject(await post(client, false), new AbortController().signal);

    const [streamed, whole] = double.requests;
    expect(streamed?.path).toBe('/v1/things?alt=1');
    expect(streamed?.body).toEqual({ hello: 'world' });
    expect(streamed?.headers).toMatchObject({ 'content-type': 'application/json', accept: 'text/event-stream', 'x-acme-key': SECRET, 'x-request-id': 'req_shared_1' });
    expect(streamed?.headers.authorization).toBeUndefined();
    expect(whole?.headers.accept).toBe('application/json');
  });

  it('refuses a 200 body that is not a JSON object as protocol', async () => {
    const double = await kit.upstream(json(200, '[1,2]'));
    const client = clientFor(double);
    const response = await post(client);
    const error = await upstreamFailure(client.readJsonObject(response, new AbortController().signal));
    expect(error.kind).toBe('protocol');
    expect(error.message).toBe('acme provider "acme-primary": the answer body is not a JSON object');
  });
});

describe('UpstreamHttpClient: whole answers', () => {
  it('reads a whole answer as the upstream wrote it, with the headers of a non-stream call', async () => {
    const text = JSON.stringify({ city: 'Tromsø', sky: '❄️'.repeat(40), note: 'ünïcødé' });
    const double = await kit.upstream(piecewise(text, 7));
    const answer = await postForWhole(clientFor(double));
    expect(answer).toEqual({ status: 200, mediaType: 'application/json', text });

    const [received] = double.requests;
    expect(received?.path).toBe('/v1/things?alt=1');
    expect(received?.body).toEqual({ hello: 'world' });
    expect(received?.headers).toMatchObject({ 'content-type': 'application/json', accept: 'application/json', 'x-acme-key': SECRET, 'x-request-id': 'req_shared_2' });
  });

  it('sends client headers under the provider headers and the request id', async () => {
    const double = await kit.upstream(json(200, '{}'));
    await postForWhole(clientFor(double), undefined, { 'x-acme-key': 'client-key', 'x-acme-beta': 'on', 'x-request-id': 'client-id' });
    expect(double.requests[0]?.headers).toMatchObject({ 'x-acme-key': SECRET, 'x-acme-beta': 'on', 'x-request-id': 'req_shared_2' });
  });

  it('rejects with the reason of an abort before the status and while the body arrives, and closes the connection', async () => {
    const double = await kit.upstream(() => undefined);
    const client = clientFor(double);
    const early = new AbortController();
    const pending = postForWhole(client, early.signal);
    await vi.waitFor(() => expect(double.requests).toHaveLength(1));
    early.abort(new Error('client gone'));
    await expect(pending).rejects.toThrow('client gone');
    await double.requests[0]?.connectionClosed;

    double.answer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"partial":');
    });
    const late = new AbortController();
    const reading = postForWhole(client, late.signal);
    await vi.waitFor(() => expect(double.requests).toHaveLength(2));
    await new Promise((resolve) => setTimeout(resolve, 30));
    late.abort(new Error('client gone too'));
    await expect(reading).rejects.toThrow('client gone too');
    await double.requests[1]?.connectionClosed;

    const already = new AbortController();
    already.abort(new Error('never sent'));
    await expect(postForWhole(client, already.signal)).rejects.toThrow('never sent');
    expect(double.requests).toHaveLength(2);
  });

  it('fails as timeout when the body stalls, and as connect when nothing listens', async () => {
    const double = await kit.upstream((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"partial":');
    });
    const stalled = await upstreamFailure(postForWhole(clientFor(double, { idleMs: 100 })));
    expect(stalled.kind).toBe('timeout');

    const closed = await kit.upstream(json(200, '{}'));
    const client = clientFor(closed);
    await closed.close();
    const refused = await upstreamFailure(postForWhole(client));
    expect(refused.kind).toBe('connect');
    expectNoSecrets(refused.message, [SECRET, closed.baseUrl]);
  });

  it('reads at most 64 KiB of an error body, and still maps the status', async () => {
    const message = 'y'.repeat(200_000);
    const double = await kit.upstream(json(400, JSON.stringify({ error: { message } })));
    let read = '';
    const reader: ErrorBodyReader = (text) => {
      read = text;
      return { message: 'too long' };
    };
    const error = await upstreamFailure(postForWhole(clientFor(double, { readErrorBody: reader })));
    expect(error.status).toBe(400);
    expect(error.clientMessage).toBe('too long');
    expect(read).toHaveLength(64 * 1024);
  });
});

describe('UpstreamHttpClient: statuses', () => {
  it.each(calls)('names the provider, keeps the upstream reason, and strips the key and the address (%s)', async (_name, call) => {
    const double = await kit.upstream(json(200, ''));
    double.answer(json(422, JSON.stringify({ error: { message: `bad field at ${double.baseUrl}/things for ${SECRET}` } })));
    const error = await upstreamFailure(call(clientFor(double)));
    expect(error.kind).toBe('status');
    expect(error.status).toBe(422);
    expect(error.failoverable).toBe(false);
    expect(error.clientMessage).toBe('bad field at [upstream]/things for [redacted]');
    expect(error.message).toBe('acme provider "acme-primary": upstream answered HTTP 422: bad field at [upstream]/things for [redacted]');
    expectNoSecrets(error.message, [SECRET, double.baseUrl]);
  });

  const failovers = [
    [408, true],
    [429, true],
    [500, true],
    [400, false],
  ] as const;
  it.each(calls.flatMap(([name, call]) => failovers.map(([status, failoverable]) => [status, failoverable, name, call] as const)))(
    'gives the client the reason of a %i only when it does not fail over (%s, %s)',
    async (status, failoverable, _name, call) => {
      const double = await kit.upstream(json(status, '{"error":{"message":"nope"}}'));
      const error = await upstreamFailure(call(clientFor(double)));
      expect(error.failoverable).toBe(failoverable);
      expect(error.clientMessage).toBe(failoverable ? undefined : 'nope');
    },
  );

  it.each(calls)('maps 401 and 403, and any body the reader says refuses our key, to credentials (%s)', async (_name, call) => {
    const double = await kit.upstream(json(401, '{"error":{"message":"who are you"}}'));
    expect((await upstreamFailure(call(clientFor(double)))).kind).toBe('credentials');

    double.answer(json(400, '{"status":"KEY_REVOKED"}'));
    const reader: ErrorBodyReader = (text) => ({ message: 'revoked', statusName: 'KEY_REVOKED', refusesCredentials: text.includes('KEY_REVOKED') });
    const error = await upstreamFailure(call(clientFor(double, { readErrorBody: reader })));
    expect(error.kind).toBe('credentials');
    expect(error.status).toBe(400);
    expect(error.clientMessage).toBeUndefined();
    expect(error.message).toBe('acme provider "acme-primary": upstream answered HTTP 400 KEY_REVOKED: revoked');
  });

  it.each(calls)('cuts a long upstream reason to 1,000 characters (%s)', async (_name, call) => {
    const double = await kit.upstream(json(400, JSON.stringify({ error: { message: 'x'.repeat(5_000) } })));
    expect((await upstreamFailure(call(clientFor(double)))).clientMessage).toHaveLength(1_000);
  });
});

describe('UpstreamHttpClient with credentials fetched per call', () => {
  /** Credentials that hand out `token-1`, `token-2`, … and record what the client told them. */
  function countingCredentials(fail?: UpstreamError) {
    let issued = 0;
    const seen = { refused: 0 };
    const credentials: CallCredentials = {
      lease: () =>
        fail === undefined
          ? Promise.resolve({
              headers: { authorization: `Bearer token-${++issued}` },
              failed: (verdict) => {
                if (verdict.outcome === 'refused') seen.refused += 1;
                return undefined;
              },
            })
          : Promise.reject(fail),
      redact: (text) => text.replaceAll(/token-\d+/g, '[redacted]'),
    };
    return { credentials, seen };
  }

  function clientWith(double: UpstreamDouble, credentials: CallCredentials): UpstreamHttpClient {
    const client = new UpstreamHttpClient({ providerType: 'acme', providerName: 'acme-primary', baseUrl: double.baseUrl, secret: undefined, headers: {}, readErrorBody: readMessageErrorBody, timeouts: { connect_ms: 1_000, first_byte_ms: 2_000, idle_ms: 2_000 }, credentials });
    kit.defer(() => client.close());
    return client;
  }

  it.each(calls)('%s sends the headers the credentials give for each call, on every path', async (_name, send) => {
    const double = await kit.upstream(json(200, '{}'));
    const client = clientWith(double, countingCredentials().credentials);
    await send(client);
    await postForWhole(client, undefined, { 'x-client': 'kept' });
    expect(double.requests.map((request) => request.headers.authorization)).toEqual(['Bearer token-1', 'Bearer token-2']);
    expect(double.requests[1]?.headers['x-client']).toBe('kept');
  });

  it.each(calls)('%s tells the credentials of a 401 and redacts what they gave away', async (_name, send) => {
    const double = await kit.upstream(json(401, '{"error":{"message":"Token token-1 is invalid"}}'));
    const { credentials, seen } = countingCredentials();
    const error = await upstreamFailure(send(clientWith(double, credentials)));
    expect(error.kind).toBe('credentials');
    expect(error.message).toContain('Token [redacted] is invalid');
    expect(seen.refused).toBe(1);
  });

  it.each(calls)('%s rejects with the credentials failure as is, and sends nothing', async (_name, send) => {
    const double = await kit.upstream(json(200, '{}'));
    const refusal = new UpstreamError('credentials', 'acme provider "acme-primary": no token');
    const error = await upstreamFailure(send(clientWith(double, countingCredentials(refusal).credentials)));
    expect(error).toBe(refusal);
    expect(double.requests).toHaveLength(0);
  });
});

describe('UpstreamHttpClient with a pool of keys', () => {
  const KEYS = { POOL_A: 'sk-pool-a-1111', POOL_B: 'sk-pool-b-2222' };

  /** A client over keys `a` and `b`; the double answers by the bearer key. */
  function pooledClient(double: UpstreamDouble): UpstreamHttpClient {
    const config = { name: 'acme-pool', base_url: double.baseUrl, api_keys: [{ name: 'a', env: 'POOL_A' }, { name: 'b', env: 'POOL_B' }], timeouts: { connect_ms: 1_000, first_byte_ms: 2_000, idle_ms: 2_000 } };
    const client = createUpstreamHttpClient('acme', config, KEYS, { authHeaders: (secret) => ({ authorization: `Bearer ${secret}` }), readErrorBody: readMessageErrorBody });
    kit.defer(() => client.close());
    return client;
  }

  it.each(calls)('%s sends a call the first key\'s 429 ended again with the second, and cools the first for its retry-after-ms', async (_name, send) => {
    const double = await kit.upstream((request, response) => {
      if (request.headers.authorization === `Bearer ${KEYS.POOL_A}`) {
        response.writeHead(429, { 'content-type': 'application/json', 'retry-after-ms': '60000' });
        response.end(`{"error":{"message":"slow down ${KEYS.POOL_A}"}}`);
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
    const client = pooledClient(double);
    await send(client);
    await send(client);
    expect(double.requests.map((request) => request.headers.authorization)).toEqual([`Bearer ${KEYS.POOL_A}`, `Bearer ${KEYS.POOL_B}`, `Bearer ${KEYS.POOL_B}`]);
    const [first, second] = client.keys?.list() ?? [];
    expect(first).toMatchObject({ name: 'a', state: 'cooling', calls: 1 });
    expect((first?.coolingUntil ?? 0) - Date.now()).toBeGreaterThan(55_000);
    expect(second).toMatchObject({ name: 'b', state: 'ok', calls: 2 });
  });

  it.each(calls)('%s fails with the last key\'s refusal once every key refused, redacting each key', async (_name, send) => {
    const double = await kit.upstream((request, response) => {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(`{"error":{"message":"Incorrect API key provided: ${String(request.headers.authorization).slice(7)}"}}`);
    });
    const client = pooledClient(double);
    const error = await upstreamFailure(send(client));
    expect(error.kind).toBe('credentials');
    expect(error.message).toContain('Incorrect API key provided: [redacted]');
    expectNoSecrets(error.message, Object.values(KEYS));
    expect(double.requests).toHaveLength(2);
    expect(client.keys?.list().map((key) => key.state)).toEqual(['refused', 'refused']);
    const next = await upstreamFailure(send(client));
    expect(next.message).toBe('acme provider "acme-pool": the upstream refused every key of the pool (a, b)');
    expect(double.requests).toHaveLength(2);
  });

  it('refuses a pool beside another credential', () => {
    const config = { name: 'acme-pool', base_url: 'http://127.0.0.1:9', api_key_env: 'POOL_A', api_keys: [{ name: 'a', env: 'POOL_B' }], timeouts: { connect_ms: 1, first_byte_ms: 1, idle_ms: 1 } };
    expect(() => createUpstreamHttpClient('acme', config, KEYS, { authHeaders: () => ({}), readErrorBody: readMessageErrorBody })).toThrow('acme provider "acme-pool": api_keys is given beside another credential');
  });
});
