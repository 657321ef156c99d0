/**
 * The spec's error table (docs/contract.md §7), byte for byte, through a real listening server; the
 * check order route → key → rate limit → JSON → validation → model → balance → upstream; and the
 * errors the spec does not show (validation, 413), in OpenAI's shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKeySecret, displayPrefix, generateKeySecret } from '../../src/auth/key-secret.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';

const BODIES = {
  400: '{"error":{"message":"Invalid request: invalid JSON request body.","type":"service_api_error","code":""}}',
  401: '{"error":{"message":"Invalid token.","type":"service_api_error","code":""}}',
  403: '{"error":{"message":"Insufficient balance.","type":"service_api_error","param":"","code":"insufficient_user_quota"}}',
  429: '{"error":{"message":"Rate limit exceeded.","type":"service_api_error","code":""}}',
  503: '{"error":{"message":"The requested model is currently unavailable.","type":"service_api_error","code":"model_not_found"}}',
} as const;

const notFound = (method: string, path: string) =>
  `{"error":{"message":"Invalid URL (${method} ${path})","type":"invalid_request_error","param":"","code":""}}`;

const chat = (model = 'model-5.6') => ({ model, messages: [{ role: 'user', content: 'Hello' }] });

async function expectError(response: Response, status: number, body: string): Promise<void> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.headers.get('x-request-id')).toMatch(/^req_/);
  expect(await response.text()).toBe(body);
}

describe.each(engines)('spec error table on %s', (engine) => {
  let harness: Harness;
  let secret: string;

  beforeAll(async () => {
    harness = await startHarness({ engine });
    ({ secret } = await harness.newAccount('10'));
  });
  afterAll(async () => harness?.close());

  it('400: malformed JSON, on both endpoints, and an empty body', async () => {
    await expectError(await harness.post('/v1/chat/completions', '{"model": "model-5.6", ', secret), 400, BODIES[400]);
    await expectError(await harness.post('/v1/responses', '{model: model-5.6}', secret), 400, BODIES[400]);
    await expectError(await harness.post('/v1/responses', '', secret), 400, BODIES[400]);
    // Valid JSON that is not an object is a validation error, not malformed JSON.
    const notAnObject = await harness.post('/v1/responses', 'null', secret);
    expect(notAnObject.status).toBe(400);
    expect(((await notAnObject.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
  });

  it('401: missing, unknown, malformed, disabled and expired keys', async () => {
    await expectError(await harness.post('/v1/chat/completions', chat(), null), 401, BODIES[401]);
    await expectError(await harness.post('/v1/chat/completions', chat(), 'sk-tg-doesnotexist0000000000000000000000000'), 401, BODIES[401]);
    await expectError(await harness.post('/v1/chat/completions', chat(), null, { authorization: 'Basic abc' }), 401, BODIES[401]);
    await expectError(await harness.post('/v1/responses', { model: 'model-5.6', input: 'hi' }, 'not-even-a-key'), 401, BODIES[401]);

    const disabled = await harness.newAccount('1');
    expect((await harness.post('/v1/chat/completions', chat(), disabled.secret)).status).toBe(200);
    await harness.store.setKeyDisabled(disabled.keyId, true);
    harness.gateway.authenticator.invalidate();
    await expectError(await harness.post('/v1/chat/completions', chat(), disabled.secret), 401, BODIES[401]);

    const account = await harness.newAccount('1');
    const expiredSecret = generateKeySecret();
    await harness.store.createKey({
      id: `key_expired_${Date.now()}`,
      accountId: account.accountId,
      name: null,
      prefix: displayPrefix(expiredSecret),
      hash: hashKeySecret(expiredSecret),
      models: null,
      requestsPerWindow: null,
      tokensPerMinute: null,
      expiresAt: new Date(Date.now() - 1000),
      disabled: false,
      createdAt: new Date(),
    });
    await expectError(await harness.post('/v1/chat/completions', chat(), expiredSecret), 401, BODIES[401]);
  });

  it('401 for a key disabled in another process, within a second (store revision)', async () => {
    const other = await harness.newAccount('1');
    expect((await harness.post('/v1/chat/completions', chat(), other.secret)).status).toBe(200);
    await harness.store.setKeyDisabled(other.keyId, true); // no invalidate(): as if another process did it
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await expectError(await harness.post('/v1/chat/completions', chat(), other.secret), 401, BODIES[401]);
  });

  it('403: the balance cannot cover the request', async () => {
    const poor = await harness.newAccount('0.000001');
    await expectError(await harness.post('/v1/chat/completions', chat(), poor.secret), 403, BODIES[403]);
    await expectError(await harness.post('/v1/responses', { model: 'model-5.6', input: 'hi' }, poor.secret), 403, BODIES[403]);
  });

  it('404: unknown routes and methods, path without the query string', async () => {
    const get = await fetch(`${harness.baseUrl}/v1/nothing?x=1&y=2`);
    await expectError(get, 404, notFound('GET', '/v1/nothing'));
    await expectError(await harness.post('/v1/completions', chat(), secret), 404, notFound('POST', '/v1/completions'));
    const wrongMethod = await fetch(`${harness.baseUrl}/v1/chat/completions`, { method: 'GET' });
    await expectError(wrongMethod, 404, notFound('GET', '/v1/chat/completions'));
    const deleted = await fetch(`${harness.baseUrl}/`, { method: 'DELETE' });
    await expectError(deleted, 404, notFound('DELETE', '/'));
    // Errors Fastify raises before routing come out the same way.
    await expectError(await fetch(`${harness.baseUrl}/v1/%zz`), 404, notFound('GET', '/v1/%zz'));
    const longId = `resp_${'a'.repeat(300)}`;
    const longPath = await fetch(`${harness.baseUrl}/v1/responses/${longId}`, { headers: { authorization: `Bearer ${secret}` } });
    expect(longPath.status).toBe(404);
    expect(longPath.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('429: the window is exhausted, with retry-after and the x-ratelimit headers', async () => {
    const limited = await harness.newAccount('1', { requestsPerWindow: 2 });
    for (let i = 0; i < 2; i++) {
      const ok = await harness.post('/v1/chat/completions', chat(), limited.secret);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('x-ratelimit-limit-requests')).toBe('2');
      expect(ok.headers.get('x-ratelimit-remaining-requests')).toBe(String(1 - i));
      expect(ok.headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+(ms|s|m\d+s)$/);
    }
    const refused = await harness.post('/v1/chat/completions', chat(), limited.secret);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('x-ratelimit-limit-requests')).toBe('2');
    expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    await expectError(refused, 429, BODIES[429]);
  });

  it('503: unknown, disabled, not allowed for the key, and no working target', async () => {
    await expectError(await harness.post('/v1/chat/completions', chat('model-9000'), secret), 503, BODIES[503]);
    await expectError(await harness.post('/v1/responses', { model: 'disabled-model', input: 'hi' }, secret), 503, BODIES[503]);
    const restricted = await harness.newAccount('1', { models: ['model-5.6-mini'] });
    await expectError(await harness.post('/v1/chat/completions', chat('model-5.6'), restricted.secret), 503, BODIES[503]);
    expect((await harness.post('/v1/chat/completions', chat('model-5.6-mini'), restricted.secret)).status).toBe(200);
    await expectError(await harness.post('/v1/chat/completions', chat('broken-model'), secret), 503, BODIES[503]);
  });

  describe('check order: route, key, rate limit, JSON, validation, model, balance, upstream', () => {
    it('route before key', async () => {
      await expectError(await harness.post('/v1/unknown', 'not json', null), 404, notFound('POST', '/v1/unknown'));
    });
    it('key before rate limit and JSON', async () => {
      await expectError(await harness.post('/v1/chat/completions', 'not json', 'sk-tg-nope'), 401, BODIES[401]);
    });
    it('rate limit before JSON', async () => {
      const limited = await harness.newAccount('1', { requestsPerWindow: 1 });
      await harness.post('/v1/chat/completions', chat(), limited.secret);
      await expectError(await harness.post('/v1/chat/completions', 'not json', limited.secret), 429, BODIES[429]);
    });
    it('JSON before validation and model', async () => {
      await expectError(await harness.post('/v1/chat/completions', '{"model":"nope",', secret), 400, BODIES[400]);
    });
    it('validation before model availability', async () => {
      const response = await harness.post('/v1/chat/completions', { model: 'model-9000', messages: 'hello' }, secret);
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { type: string; param: string } };
      expect(body.error.type).toBe('invalid_request_error');
      expect(body.error.param).toBe('messages');
    });
    it('model before balance, balance before upstream', async () => {
      const poor = await harness.newAccount('0');
      await expectError(await harness.post('/v1/chat/completions', chat('model-9000'), poor.secret), 503, BODIES[503]);
      await expectError(await harness.post('/v1/chat/completions', chat('broken-model'), poor.secret), 403, BODIES[403]);
    });
  });

  describe('what the spec does not show, OpenAI style', () => {
    it('valid JSON of the wrong shape: 400 naming the field', async () => {
      const cases: Array<[string, object, string]> = [
        ['/v1/chat/completions', { messages: [{ role: 'user', content: 'x' }] }, 'model'],
        ['/v1/chat/completions', { model: 'model-5.6', messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role'],
        ['/v1/chat/completions', { model: 'model-5.6', messages: [{ role: 'user', content: 42 }] }, 'messages[0].content'],
        ['/v1/chat/completions', { ...chat(), temperature: 'hot' }, 'temperature'],
        ['/v1/chat/completions', { ...chat(), surprise: true }, 'surprise'],
        ['/v1/chat/completions', { ...chat(), reasoning_effort: 'high' }, 'reasoning_effort'],
        ['/v1/chat/completions', [1, 2, 3], ''],
        ['/v1/responses', { model: 'model-5.6' }, 'input'],
        ['/v1/responses', { model: 'model-5.6', input: 7 }, 'input'],
        ['/v1/responses', { model: 'model-5.6', input: 'hi', reasoning: { effort: 'huge' } }, 'reasoning.effort'],
        ['/v1/responses', { model: 'model-5.6-mini', input: 'hi', reasoning: { effort: 'high' } }, 'reasoning.effort'],
        ['/v1/responses', { model: 'model-5.6', input: 'hi', max_output_tokens: -1 }, 'max_output_tokens'],
      ];
      for (const [path, body, param] of cases) {
        const response = await harness.post(path, body, secret);
        expect(response.status, `${path} ${JSON.stringify(body)}`).toBe(400);
        const parsed = (await response.json()) as { error: { message: string; type: string; param: string | null; code: string | null } };
        expect(parsed.error.type).toBe('invalid_request_error');
        expect(parsed.error.param ?? '').toBe(param);
        expect(parsed.error.message.length).toBeGreaterThan(10);
        expect(JSON.stringify(parsed)).not.toMatch(/at .*\.(ts|js):\d+/);
      }
    });

    it('reasoning options on chat completions point to /v1/responses', async () => {
      const response = await harness.post('/v1/chat/completions', { ...chat(), reasoning: { effort: 'low' } }, secret);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toContain('/v1/responses');
    });

    it('413 for an oversized body, in the error format', async () => {
      const huge = JSON.stringify({ model: 'model-5.6', input: 'x'.repeat(9 * 1024 * 1024) });
      const response = await harness.post('/v1/responses', huge, secret);
      expect(response.status).toBe(413);
      const body = (await response.json()) as { error: { type: string; code: string } };
      expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'request_too_large' });
      expect(body.error).not.toHaveProperty('param');
    });

    it('param is a string or absent, never null: a body that is not an object', async () => {
      for (const path of ['/v1/chat/completions', '/v1/responses']) {
        const response = await harness.post(path, '1', secret);
        expect(response.status).toBe(400);
        const body = (await response.json()) as { error: Record<string, unknown> };
        expect(body.error.code).toBe('invalid_type');
        expect(body.error.param === undefined || typeof body.error.param === 'string').toBe(true);
        expect(Object.values(body.error)).not.toContain(null);
      }
    });

    it('every answer carries x-request-id, unique per request', async () => {
      const answers = await Promise.all([
        fetch(`${harness.baseUrl}/healthz`),
        harness.post('/v1/chat/completions', chat(), secret),
        harness.post('/v1/chat/completions', chat(), null),
        fetch(`${harness.baseUrl}/nope`),
      ]);
      const ids = answers.map((answer) => answer.headers.get('x-request-id'));
      for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{24}$/);
      expect(new Set(ids).size).toBe(ids.length);
    });
  });
});
