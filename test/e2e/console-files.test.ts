/**
 * The console's files as the gateway serves them (the build of `npm run build`): a strict
 * Content-Security-Policy and no inline script or style, hashed assets cached for good, every
 * console path answered by index.html, nothing outside the built folder reachable, /v1 answers
 * untouched; and with a separate admin listener, the console on both ports.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { CONTENT_SECURITY_POLICY } from '../../src/http/console/static-files.js';
import { signIn } from '../support/console-session.js';
import { startHarness, type Harness } from '../support/harness.js';
import { rawExchange } from '../support/raw-http.js';

const STRICT_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

describe('console files', () => {
  let harness: Harness;
  let index: string;

  beforeAll(async () => {
    harness = await startHarness();
    const response = await fetch(`${harness.baseUrl}/console/`);
    expect(response.status).toBe(200);
    index = await response.text();
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('serves the page with a strict Content-Security-Policy and the other protective headers', async () => {
    expect(CONTENT_SECURITY_POLICY).toBe(STRICT_POLICY);
    for (const path of ['/console/', '/console', '/console/accounts/acct_123', '/console/api/session']) {
      const response = await fetch(`${harness.baseUrl}${path}`);
      expect(response.headers.get('content-security-policy'), path).toBe(STRICT_POLICY);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    }
  });

  it('has no inline script or style, and loads only files of its own', () => {
    const scripts = [...index.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes = '', body = ''] of scripts) {
      expect(attributes).toMatch(/\bsrc="\/console\/assets\/[\w.-]+\.js"/);
      expect(body.trim()).toBe('');
    }
    expect(index).not.toMatch(/<style\b|\sstyle=|\son\w+=|javascript:/i);
    expect(index).not.toMatch(/https?:\/\//);
  });

  it('serves hashed assets cached for good, and index.html revalidated', async () => {
    const assets = [...index.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((match) => match[1] ?? '');
    expect(assets.some((path) => path.endsWith('.js'))).toBe(true);
    expect(assets.some((path) => path.endsWith('.css'))).toBe(true);
    for (const path of assets) {
      const response = await fetch(`${harness.baseUrl}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(response.headers.get('content-type')).toMatch(path.endsWith('.js') ? /^application\/javascript/ : /^text\/css/);
      // Nothing fetched from elsewhere at run time: no CDN.
      expect(await response.text()).not.toMatch(/\bhttps?:\/\/(?!www\.w3\.org)[\w.-]+\.[a-z]{2,}\/[\w/.-]*\.(?:js|css|woff2?)\b/);
    }
    expect((await fetch(`${harness.baseUrl}/console/`)).headers.get('cache-control')).toBe('no-cache');
  });

  it("answers every page of the console's own with index.html, and unknown API paths and files with the spec 404", async () => {
    for (const path of ['/console', '/console/accounts', '/console/accounts/acct_x?name=a', '/console/models', '/console/anything/at/all']) {
      const response = await fetch(`${harness.baseUrl}${path}`);
      expect(response.status, path).toBe(200);
      expect(await response.text()).toBe(index);
    }
    for (const [method, path] of [['GET', '/console/api/nothing'], ['GET', '/console/assets/missing.js'], ['POST', '/console/accounts'], ['GET', '/consoles']]) {
      const response = await fetch(`${harness.baseUrl}${path}`, { method });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(await response.json()).toEqual({ error: { message: `Invalid URL (${method} ${path})`, type: 'invalid_request_error', param: '', code: '' } });
    }
  });

  it('reaches nothing outside the built folder, however the path is written', async () => {
    for (const path of ['/console/../package.json', '/console/%2e%2e/package.json', '/console/..%2fpackage.json', '/console/assets/../../package.json', '/console/%2e%2e/%2e%2e/src/http/app.ts']) {
      const answer = await rawExchange(harness.baseUrl, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
      // index.html (a console page by that name) or the spec 404: never the file named.
      if (answer.status === 200) expect(answer.body, path).toBe(index);
      else expect(answer.status, path).toBe(404);
    }
  });

  it('adds nothing to /v1 answers', async () => {
    const { secret } = await harness.newAccount('1');
    const response = await fetch(`${harness.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${secret}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toBeNull();
    expect(response.headers.get('set-cookie')).toBeNull();
  });
});

describe('console with the admin API on its own listener', () => {
  let harness: Harness;
  let adminBaseUrl: string;

  beforeAll(async () => {
    harness = await startHarness({ adminListener: true });
    adminBaseUrl = harness.adminBaseUrl ?? '';
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('serves the console on both ports, and still keeps /admin/v1 off the public one and /v1 off the admin one', async () => {
    for (const base of [harness.baseUrl, adminBaseUrl]) expect((await fetch(`${base}/console/`)).status).toBe(200);
    const owner = (await createAdminToken(harness.store, { role: 'owner' }, CLI_ACTOR)).secret;
    expect((await fetch(`${harness.baseUrl}/admin/v1/accounts`, { headers: { authorization: `Bearer ${owner}` } })).status).toBe(404);
    expect((await fetch(`${adminBaseUrl}/v1/models`)).status).toBe(404);
  });

  it('lets admin tokens sign in on the admin port only, and key holders on the public one', async () => {
    const owner = (await createAdminToken(harness.store, { role: 'owner' }, CLI_ACTOR)).secret;
    const onPublic = await signIn(harness.baseUrl, owner);
    expect(onPublic.status).toBe(403);
    expect(((await onPublic.json()) as { error: { message: string } }).error.message).toMatch(/own port/);
    expect(onPublic.headers.get('set-cookie')).toBeNull();
    expect((await signIn(adminBaseUrl, owner)).status).toBe(201);

    const { secret } = await harness.newAccount('4');
    const holder = await signIn(harness.baseUrl, secret);
    expect(holder.status).toBe(201);
    const cookie = /^(tollgate_session=[^;]+)/.exec(holder.headers.get('set-cookie') ?? '')?.[1] ?? '';
    const self = await fetch(`${harness.baseUrl}/console/api/self`, { headers: { cookie } });
    expect(self.status).toBe(200);
    expect(((await self.json()) as { account: { balance_usd: string } }).account.balance_usd).toBe('4');
  });
});
