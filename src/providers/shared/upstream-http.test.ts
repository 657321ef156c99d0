import { describe, expect, it } from 'vitest';
import { expectNoSecrets, providerTestKit, upstreamFailure } from '../../../test/support/provider-test-kit.js';
import { json, type UpstreamDouble } from '../../../test/support/upstream-double.js';
import { readMessageErrorBody, type ErrorBodyReader } from './error-body.js';
import { UpstreamHttpClient } from './upstream-http.js';

const SECRET = 'sk-shared-client-Secret-4b1d';
const kit = providerTestKit();

function clientFor(double: UpstreamDouble, options: { headers?: Record<string, string>; readErrorBody?: ErrorBodyReader } = {}): UpstreamHttpClient {
  const client = new UpstreamHttpClient({
    providerType: 'acme',
    providerName: 'acme-primary',
    baseUrl: double.baseUrl,
    secret: SECRET,
    headers: options.headers ?? { 'x-acme-key': SECRET },
    readErrorBody: options.readErrorBody ?? readMessageErrorBody,
    timeouts: { connect_ms: 1_000, first_byte_ms: 2_000, idle_ms: 2_000 },
  });
  kit.defer(() => client.close());
  return client;
}

const post = (client: UpstreamHttpClient, stream = true) => client.post('/things?alt=1', { hello: 'world' }, { signal: new AbortController().signal, requestId: 'req_shared_1', stream });

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

describe('UpstreamHttpClient: statuses', () => {
  it('names the provider, keeps the upstream reason, and strips the key and the address', async () => {
    const double = await kit.upstream(json(200, ''));
    double.answer(json(422, JSON.stringify({ error: { message: `bad field at ${double.baseUrl}/things for ${SECRET}` } })));
    const error = await upstreamFailure(post(clientFor(double)));
    expect(error.kind).toBe('status');
    expect(error.status).toBe(422);
    expect(error.failoverable).toBe(false);
    expect(error.clientMessage).toBe('bad field at [upstream]/things for [redacted]');
    expect(error.message).toBe('acme provider "acme-primary": upstream answered HTTP 422: bad field at [upstream]/things for [redacted]');
    expectNoSecrets(error.message, [SECRET, double.baseUrl]);
  });

  it.each([
    [408, true],
    [429, true],
    [500, true],
    [400, false],
  ])('gives the client the reason of a %i only when it does not fail over', async (status, failoverable) => {
    const double = await kit.upstream(json(status, '{"error":{"message":"nope"}}'));
    const error = await upstreamFailure(post(clientFor(double)));
    expect(error.failoverable).toBe(failoverable);
    expect(error.clientMessage).toBe(failoverable ? undefined : 'nope');
  });

  it('maps 401 and 403, and any body the reader says refuses our key, to credentials', async () => {
    const double = await kit.upstream(json(401, '{"error":{"message":"who are you"}}'));
    expect((await upstreamFailure(post(clientFor(double)))).kind).toBe('credentials');

    double.answer(json(400, '{"status":"KEY_REVOKED"}'));
    const reader: ErrorBodyReader = (text) => ({ message: 'revoked', statusName: 'KEY_REVOKED', refusesCredentials: text.includes('KEY_REVOKED') });
    const error = await upstreamFailure(post(clientFor(double, { readErrorBody: reader })));
    expect(error.kind).toBe('credentials');
    expect(error.status).toBe(400);
    expect(error.clientMessage).toBeUndefined();
    expect(error.message).toBe('acme provider "acme-primary": upstream answered HTTP 400 KEY_REVOKED: revoked');
  });

  it('cuts a long upstream reason to 1,000 characters', async () => {
    const double = await kit.upstream(json(400, JSON.stringify({ error: { message: 'x'.repeat(5_000) } })));
    expect((await upstreamFailure(post(clientFor(double)))).clientMessage).toHaveLength(1_000);
  });
});
