/**
 * The lockout from behind a trusted proxy: one client flooding made-up keys through the reverse
 * proxy every client shares must lock out nobody but its own made-up keys. Another client behind
 * the same proxy is unaffected; the flooding client's own fresh key, its console sign-in and the
 * owner's admin token keep working. Without `server.trusted_proxies`, `X-Forwarded-For` is not
 * believed: a client can neither escape its own count nor charge its failures to another address.
 * A real gateway on loopback, a real HTTP proxy in front of it, clients at 127.0.0.x.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { testCatalog } from '../support/catalog.js';
import { engines } from '../support/databases.js';
import { startForwardingProxy, type ForwardingProxy } from '../support/forwarding-proxy.js';
import { startHarness, type Harness } from '../support/harness.js';
import { httpFrom, type AnswerFrom } from '../support/http-from.js';

const INVALID_TOKEN = '{"error":{"message":"Invalid token.","type":"service_api_error","code":""}}';
const RATE_LIMITED = '{"error":{"message":"Rate limit exceeded.","type":"service_api_error","code":""}}';
const FAILURES_PER_MINUTE = 5;
/** Two clients behind the proxy (their TCP peer address at the proxy). */
const CLIENT_A = '127.0.0.2';
const CLIENT_B = '127.0.0.3';

let harness: Harness | undefined;
let proxy: ForwardingProxy | undefined;

afterEach(async () => {
  await proxy?.close();
  await harness?.close();
  proxy = harness = undefined;
});

function catalogWith(server: Record<string, unknown> | undefined): unknown {
  const catalog = testCatalog() as { rate_limits: Record<string, unknown> };
  return { ...catalog, rate_limits: { ...catalog.rate_limits, auth_failures_per_minute: FAILURES_PER_MINUTE }, ...(server === undefined ? {} : { server }) };
}

const madeUpKey = () => `sk-tg-${randomUUID().replaceAll('-', '')}`;
const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

/** `GET /v1/models` with `secret`, from `from`, to `baseUrl` (the proxy or the gateway itself). */
const models = (baseUrl: string, from: string, secret: string, headers: Record<string, string> = {}) =>
  httpFrom(`${baseUrl}/v1/models`, { from, headers: { ...bearer(secret), ...headers } });

const postJson = (url: string, from: string, body: unknown, headers: Record<string, string>) =>
  httpFrom(url, { from, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

/** `count` made-up keys from `from`, ten at a time. */
async function flood(baseUrl: string, from: string, count: number, headers: () => Record<string, string> = () => ({})): Promise<AnswerFrom[]> {
  const answers: AnswerFrom[] = [];
  for (let sent = 0; sent < count; sent += 10) {
    answers.push(...(await Promise.all(Array.from({ length: Math.min(10, count - sent) }, () => models(baseUrl, from, madeUpKey(), headers())))));
  }
  return answers;
}

function expectLockedOutAfterAllowance(answers: AnswerFrom[]): void {
  const refused = answers.filter((answer) => answer.status === 401);
  const limited = answers.filter((answer) => answer.status === 429);
  expect(refused).toHaveLength(FAILURES_PER_MINUTE);
  expect(limited).toHaveLength(answers.length - FAILURES_PER_MINUTE);
  for (const answer of refused) expect(answer.body).toBe(INVALID_TOKEN);
  for (const answer of limited) {
    expect(answer.body).toBe(RATE_LIMITED);
    expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  }
}

describe.each(engines)('the lockout from behind a trusted proxy on %s', (engine) => {
  it('one client flooding made-up keys through the proxy locks out neither the other clients, nor its own fresh key, console sign-in or admin token', async () => {
    harness = await startHarness({ engine, catalog: catalogWith({ trusted_proxies: ['127.0.0.1'] }) });
    // The proxy forwards from 127.0.0.1, the one trusted address.
    proxy = await startForwardingProxy(harness.baseUrl, '127.0.0.1');
    const via = proxy.baseUrl;
    const owner = (await createAdminToken(harness.store, { role: 'owner' }, CLI_ACTOR)).secret;
    // B's key exists before the flood but was never used: not cached anywhere.
    const clientB = await harness.newAccount('10');
    const accountA = await harness.newAccount('10');

    // A floods, each request with a made-up X-Forwarded-For of its own in front, which the proxy
    // keeps: the gateway believes only the address the trusted proxy appended.
    const answers = await flood(via, CLIENT_A, 40, () => ({ 'x-forwarded-for': `198.51.100.${Math.floor(Math.random() * 250)}` }));
    expectLockedOutAfterAllowance(answers);

    // B, behind the same proxy: its valid key works, and a made-up key is B's own first failure.
    expect((await models(via, CLIENT_B, clientB.secret)).status).toBe(200);
    expect(await models(via, CLIENT_B, madeUpKey())).toMatchObject({ status: 401, body: INVALID_TOKEN });

    // From A's own address: the owner's admin token works on the admin API and makes A a fresh key.
    const created = await postJson(`${via}/admin/v1/keys`, CLIENT_A, { account: accountA.accountId }, bearer(owner));
    expect(created.status).toBe(201);
    const freshKey = String((JSON.parse(created.body) as { key: unknown }).key);
    // A's fresh key (never looked up before) is served, on /v1/models and on a completion.
    expect((await models(via, CLIENT_A, freshKey)).status).toBe(200);
    const completion = await postJson(`${via}/v1/chat/completions`, CLIENT_A, { model: 'model-5.6-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }, bearer(freshKey));
    expect(completion.status).toBe(200);
    // Console sign-ins from A: with a valid key, and with the owner's admin token.
    const consoleHeaders = { 'x-tollgate-console': '1' };
    expect((await postJson(`${via}/console/api/session`, CLIENT_A, { token: accountA.secret }, consoleHeaders)).status).toBe(201);
    expect((await postJson(`${via}/console/api/session`, CLIENT_A, { token: owner }, consoleHeaders)).status).toBe(201);
    expect((await httpFrom(`${via}/admin/v1/accounts`, { from: CLIENT_A, headers: bearer(owner) })).status).toBe(200);
    // Admin tokens have a count of their own: a made-up one from A is a 401, not locked out by the keys.
    expect(await httpFrom(`${via}/admin/v1/accounts`, { from: CLIENT_A, headers: bearer(`tg-admin-${randomUUID()}`) })).toMatchObject({ status: 401, body: INVALID_TOKEN });

    // A's made-up keys are still refused with 429: its failures were counted.
    expect(await models(via, CLIENT_A, madeUpKey())).toMatchObject({ status: 429, body: RATE_LIMITED });
    // A client that reaches the gateway directly (not through the trusted proxy) is its own TCP
    // peer whatever it claims: A cannot escape its count by naming B.
    expect(await models(harness.baseUrl, CLIENT_A, madeUpKey(), { 'x-forwarded-for': CLIENT_B })).toMatchObject({ status: 429, body: RATE_LIMITED });
    expect(await models(via, CLIENT_B, madeUpKey())).toMatchObject({ status: 401, body: INVALID_TOKEN });
  }, 60_000);

  it('the admin listener (TOLLGATE_ADMIN_PORT) behind the trusted proxy counts each client apart too', async () => {
    harness = await startHarness({ engine, adminListener: true, catalog: catalogWith({ trusted_proxies: ['127.0.0.1'] }) });
    proxy = await startForwardingProxy(harness.adminBaseUrl ?? '', '127.0.0.1');
    const owner = (await createAdminToken(harness.store, { role: 'owner' }, CLI_ACTOR)).secret;
    const accounts = (from: string, secret: string) => httpFrom(`${proxy!.baseUrl}/admin/v1/accounts`, { from, headers: bearer(secret) });
    const statuses: number[] = [];
    for (let index = 0; index < FAILURES_PER_MINUTE + 2; index += 1) statuses.push((await accounts(CLIENT_A, `tg-admin-${randomUUID()}`)).status);
    expect(statuses).toEqual([...Array<number>(FAILURES_PER_MINUTE).fill(401), 429, 429]);
    expect((await accounts(CLIENT_A, owner)).status).toBe(200);
    expect(await accounts(CLIENT_B, `tg-admin-${randomUUID()}`)).toMatchObject({ status: 401, body: INVALID_TOKEN });
  }, 60_000);

  it('without server.trusted_proxies, X-Forwarded-For is ignored: no escape, no framing, and valid keys behind the proxy still work', async () => {
    harness = await startHarness({ engine, catalog: catalogWith(undefined) });
    // Sent from 127.0.0.4, claiming to be 127.0.0.5.
    expectLockedOutAfterAllowance(await flood(harness.baseUrl, '127.0.0.4', 15, () => ({ 'x-forwarded-for': '127.0.0.5' })));
    // The flooder cannot escape by claiming another address ...
    expect(await models(harness.baseUrl, '127.0.0.4', madeUpKey(), { 'x-forwarded-for': '203.0.113.9' })).toMatchObject({ status: 429, body: RATE_LIMITED });
    // ... nor has it framed the address it named.
    expect(await models(harness.baseUrl, '127.0.0.5', madeUpKey())).toMatchObject({ status: 401, body: INVALID_TOKEN });

    // Behind an untrusted proxy every client shares the proxy's address, and one client's flood
    // uses up its allowance of failures; a valid key (fresh, never looked up) is still served.
    proxy = await startForwardingProxy(harness.baseUrl, '127.0.0.6');
    expectLockedOutAfterAllowance(await flood(proxy.baseUrl, CLIENT_A, 15));
    const clientB = await harness.newAccount('10');
    expect((await models(proxy.baseUrl, CLIENT_B, clientB.secret)).status).toBe(200);
    expect(await models(proxy.baseUrl, CLIENT_B, madeUpKey())).toMatchObject({ status: 429, body: RATE_LIMITED });
  }, 60_000);
});
