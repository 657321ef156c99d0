/**
 * Made-up admin tokens count against the address's failed admin authentications, an allowance of
 * the size `rate_limits.auth_failures_per_minute` kept apart from the API keys' one: past it, the
 * spec's 429. Only failures count: a good admin token, and the address's API keys, keep working.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { testCatalog } from '../support/catalog.js';
import { startHarness, type Harness } from '../support/harness.js';

const RATE_LIMITED = { error: { message: 'Rate limit exceeded.', type: 'service_api_error', code: '' } };

describe('admin API failed authentications', () => {
  let harness: Harness;
  let token: string;

  beforeAll(async () => {
    harness = await startHarness({ catalog: { ...(testCatalog() as Record<string, unknown>), rate_limits: { auth_failures_per_minute: 3 } } });
    token = (await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR)).secret;
  });

  afterAll(async () => {
    await harness?.close();
  });

  const list = (secret: string) => fetch(`${harness.baseUrl}/admin/v1/accounts`, { headers: { authorization: `Bearer ${secret}` } });

  it('a good token costs nothing; 3 made-up ones get 401, the next 429 with retry-after', async () => {
    for (let index = 0; index < 5; index += 1) expect((await list(token)).status).toBe(200);
    for (let index = 0; index < 3; index += 1) expect((await list(`tg-admin-madeup${index}`)).status).toBe(401);
    const limited = await list('tg-admin-madeup-again');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await limited.json()).toEqual(RATE_LIMITED);
  });

  it('past the allowance, the good token still works, and so do API keys from the same address', async () => {
    for (let index = 0; index < 5; index += 1) await list(`tg-admin-again${index}`);
    expect((await list('tg-admin-once-more')).status).toBe(429);
    expect((await list(token)).status).toBe(200);
    const { secret } = await harness.newAccount('1');
    expect((await fetch(`${harness.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(200);
    // The API keys' allowance is their own: a made-up key is a 401 here.
    expect((await fetch(`${harness.baseUrl}/v1/models`, { headers: { authorization: 'Bearer sk-tg-madeup' } })).status).toBe(401);
  });
});
