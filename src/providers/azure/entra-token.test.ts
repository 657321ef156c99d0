/**
 * Entra ID tokens on a clock the test moves: fetched once and reused, renewed a margin before they
 * expire, one fetch in flight however many calls wait, dropped when refused, and every failure an
 * `UpstreamError` of kind `credentials` that gives away neither the secret nor the authority.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { expectNoSecrets } from '../../../test/support/provider-test-kit.js';
import { startAzureUpstream, type AzureDouble } from '../../../test/support/azure-upstream.js';
import { UpstreamError } from '../provider.js';
import { EntraTokenSource, renewalMargin } from './entra-token.js';

const TENANT = 'contoso.onmicrosoft.com';
const CLIENT_ID = 'c0ffee00-0000-4000-8000-000000000002';
const CLIENT_SECRET = 'entra~unit~secret~51d0';
const TIMEOUTS = { connect_ms: 1_000, first_byte_ms: 2_000, idle_ms: 2_000 };

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

async function setup(options: { life?: number; secret?: string; authority?: string; timeoutMs?: number } = {}): Promise<{ double: AzureDouble; source: EntraTokenSource; clock: { now: number } }> {
  const double = await startAzureUpstream({ apiKey: 'unused', deployments: [], tenantId: TENANT, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, tokenLifeSeconds: options.life ?? 3_600 });
  opened.push(double);
  const clock = { now: 1_800_000_000_000 };
  const source = new EntraTokenSource({
    providerName: 'azure-entra',
    config: { tenant_id: TENANT, client_id: CLIENT_ID, client_secret_env: 'UNUSED', authority: options.authority ?? double.authority, scope: 'https://cognitiveservices.azure.com/.default', timeout_ms: options.timeoutMs ?? 10_000 },
    clientSecret: options.secret ?? CLIENT_SECRET,
    timeouts: TIMEOUTS,
    now: () => clock.now,
  });
  opened.push(source);
  return { double, source, clock };
}

describe('renewalMargin', () => {
  it('is a tenth of the life, at most five minutes', () => {
    expect(renewalMargin(60_000)).toBe(6_000);
    expect(renewalMargin(3_600_000)).toBe(300_000);
    expect(renewalMargin(1_000)).toBe(100);
  });
});

describe('EntraTokenSource', () => {
  it('fetches once with the client credentials, then reuses the token until the margin before expiry', async () => {
    const { double, source, clock } = await setup({ life: 3_600 });
    const first = await source.headers();
    expect(first).toEqual({ authorization: `Bearer ${double.issuedTokens[0]}` });
    expect(double.tokenRequests).toEqual([{ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET, scope: 'https://cognitiveservices.azure.com/.default' }]);

    // An hour's token: renewed five minutes before its end.
    clock.now += 3_600_000 - 300_000 - 1;
    expect(await source.headers()).toEqual(first);
    expect(double.tokenRequests).toHaveLength(1);
    clock.now += 1;
    const second = await source.headers();
    expect(double.tokenRequests).toHaveLength(2);
    expect(second).toEqual({ authorization: `Bearer ${double.issuedTokens[1]}` });
    expect(second).not.toEqual(first);
  });

  it('runs one fetch for every call waiting on it', async () => {
    const { double, source, clock } = await setup();
    const tokens = await Promise.all(Array.from({ length: 20 }, () => source.token()));
    expect(new Set(tokens).size).toBe(1);
    expect(double.tokenRequests).toHaveLength(1);
    clock.now += 3_600_000;
    const renewed = await Promise.all(Array.from({ length: 20 }, () => source.token()));
    expect(new Set(renewed).size).toBe(1);
    expect(renewed[0]).not.toBe(tokens[0]);
    expect(double.tokenRequests).toHaveLength(2);
  });

  it('fetches anew once the upstream refused the token', async () => {
    const { double, source } = await setup();
    await source.token();
    source.refused();
    await source.token();
    expect(double.tokenRequests).toHaveLength(2);
  });

  it('fails with kind credentials, the endpoint reason, and no secret when the credentials are refused', async () => {
    const { double, source } = await setup({ secret: 'entra~wrong~secret~77aa' });
    const error = await source.token().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamError);
    const failure = error as UpstreamError;
    expect(failure.kind).toBe('credentials');
    expect(failure.status).toBe(401);
    expect(failure.message).toMatch(/^azure provider "azure-entra": the Entra ID token endpoint refused the client credentials: HTTP 401 invalid_client: AADSTS7000215: Invalid client secret provided\./);
    expect(failure.message).not.toContain('Trace ID');
    expectNoSecrets(failure.message, ['entra~wrong~secret~77aa', CLIENT_SECRET, double.authority]);

    // The failure is not kept: the next call asks again.
    double.refuseTokens(false);
    await expect(source.token()).rejects.toBeInstanceOf(UpstreamError);
    expect(double.tokenRequests).toHaveLength(2);
  });

  it('fails with kind credentials when the token endpoint cannot be reached', async () => {
    const { source } = await setup({ authority: 'http://127.0.0.1:9' });
    const error = (await source.token().catch((caught: unknown) => caught)) as UpstreamError;
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error.kind).toBe('credentials');
    expect(error.message).toContain('could not reach the Entra ID token endpoint');
    expectNoSecrets(error.message, [CLIENT_SECRET]);
  });

  it('fails with kind credentials within its own timeout when the token endpoint accepts and never answers', async () => {
    // A token endpoint that takes the connection and stays silent: the provider's model-call
    // timeouts (minutes) do not apply; the token's own `timeout_ms` does.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { source } = await setup({ authority: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, timeoutMs: 300 });
      const started = Date.now();
      const error = (await source.token().catch((caught: unknown) => caught)) as UpstreamError;
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error.kind).toBe('credentials');
      expect(error.message).toContain('could not reach the Entra ID token endpoint (no answer within 300 ms)');
      expect(Date.now() - started).toBeLessThan(5_000);
      expectNoSecrets(error.message, [CLIENT_SECRET]);
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('redacts the tokens it issued from any text', async () => {
    const { source } = await setup();
    const token = await source.token();
    expect(source.redact(`echoed ${token} and ${CLIENT_SECRET}`)).toBe('echoed [redacted] and [redacted]');
  });
});
