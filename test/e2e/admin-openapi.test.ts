/**
 * The admin API's OpenAPI document: generated from the zod schemas the routes validate with, it
 * must be valid OpenAPI 3.1 and describe every /admin/v1 route the server has registered (read
 * from Fastify's own route table, so a route added without a schema shows up here).
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { startHarness, type Harness } from '../support/harness.js';

interface OpenApiDocument {
  openapi: string;
  components?: { schemas?: Record<string, unknown> };
  paths: Record<string, Record<string, { requestBody?: unknown; parameters?: Array<{ name: string; in: string }> }>>;
}

/** `METHOD /path` of every route under `prefix`, from the tree `printRoutes` draws (HEAD left out: Fastify adds it to each GET). */
function registeredRoutes(tree: string, prefix: string): string[] {
  const stack: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+)(?: \(([^)]*)\))?/.exec(line);
    if (match === null) continue;
    const depth = (match[1] ?? '').length / 4;
    stack.length = depth;
    stack.push(match[2] ?? '');
    const path = stack.join('');
    if (!path.startsWith(prefix) || match[3] === undefined) continue;
    for (const method of match[3].split(', ')) if (method !== 'HEAD') routes.push(`${method} ${path}`);
  }
  return routes.sort();
}

describe('admin OpenAPI document', () => {
  let harness: Harness;
  let document: OpenApiDocument;
  let viewer: string;

  beforeAll(async () => {
    harness = await startHarness();
    viewer = (await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR)).secret;
    const response = await fetch(`${harness.baseUrl}/admin/v1/openapi.json`, { headers: { authorization: `Bearer ${viewer}` } });
    expect(response.status).toBe(200);
    document = (await response.json()) as OpenApiDocument;
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('is valid OpenAPI 3.1', async () => {
    expect(document.openapi).toBe('3.1.0');
    const result = await new Validator().validate(document as unknown as Record<string, unknown>);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  it('describes every registered /admin/v1 route, and nothing else', () => {
    const registered = registeredRoutes(harness.gateway.app.printRoutes({ commonPrefix: false }), '/admin/v1')
      .filter((route) => route !== 'GET /admin/v1/openapi.json')
      .map((route) => route.replace(/:(\w+)/g, '{$1}'));
    expect(registered.length).toBeGreaterThanOrEqual(13);
    const documented = Object.entries(document.paths)
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    expect(documented).toEqual(registered);
  });

  it('carries the request schemas the routes validate with', () => {
    const debit = document.paths['/admin/v1/accounts/{account}/debit']?.post;
    expect(JSON.stringify(debit?.requestBody)).toContain('amount_usd');
    expect(JSON.stringify(debit?.requestBody)).toContain('reason');
    const list = document.paths['/admin/v1/accounts']?.get;
    expect(list?.parameters?.map((parameter) => `${parameter.in}:${parameter.name}`).sort()).toEqual(['query:cursor', 'query:from', 'query:limit', 'query:name', 'query:order', 'query:sort', 'query:status', 'query:to']);
  });

  it('declares every request body closed: an unknown field is refused (additionalProperties false)', () => {
    const bodies = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, operation]) => operation.requestBody !== undefined)
        .map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation.requestBody] as const),
    );
    expect(bodies.map(([route]) => route).sort()).toEqual([
      'PATCH /admin/v1/accounts/{account}',
      'PATCH /admin/v1/keys/{key}',
      'POST /admin/v1/accounts',
      'POST /admin/v1/accounts/{account}/credit',
      'POST /admin/v1/accounts/{account}/debit',
      'POST /admin/v1/admin-tokens',
      'POST /admin/v1/keys',
      'PUT /admin/v1/catalog/document',
    ]);
    for (const [route, body] of bodies) {
      const schema = (body as { content: Record<string, { schema: Record<string, unknown> }> }).content['application/json']?.schema;
      expect(schema?.additionalProperties, route).toBe(false);
    }
    // Nested objects too: a key's budget (an object or null).
    const create = document.paths['/admin/v1/keys']?.post?.requestBody as { content: Record<string, { schema: { properties: Record<string, { anyOf?: Array<Record<string, unknown>> }> } }> };
    const budget = create.content['application/json']?.schema.properties.budget?.anyOf?.find((option) => option.type === 'object');
    expect(budget?.additionalProperties).toBe(false);
  });

  it('describes the keys routes, their budget and the key-only fields', () => {
    for (const route of ['POST /admin/v1/keys', 'GET /admin/v1/keys', 'GET /admin/v1/keys/{key}', 'PATCH /admin/v1/keys/{key}', 'DELETE /admin/v1/keys/{key}', 'POST /admin/v1/keys/{key}/rotate', 'POST /admin/v1/keys/{key}/disable', 'POST /admin/v1/keys/{key}/enable']) {
      const [method = '', path = ''] = route.split(' ');
      expect(document.paths[path]?.[method.toLowerCase()], route).toBeDefined();
    }
    const create = JSON.stringify(document.paths['/admin/v1/keys']?.post?.requestBody);
    for (const field of ['account', 'models', 'requests_per_window', 'tokens_per_minute', 'expires_at', 'budget', 'limit_usd', 'week']) expect(create).toContain(field);
    const list = document.paths['/admin/v1/keys']?.get;
    expect(list?.parameters?.map((parameter) => `${parameter.in}:${parameter.name}`).sort()).toEqual(['query:account', 'query:cursor', 'query:limit', 'query:status']);
    expect(JSON.stringify(document.paths['/admin/v1/keys/{key}']?.get)).toContain('#/components/schemas/KeyDetails');
    expect(JSON.stringify(document.components?.schemas?.KeyDetails)).toContain('remaining_usd');
    // Secrets only in the create and rotate answers; hashes nowhere.
    expect(JSON.stringify(document)).not.toContain('hash');
  });

  it('needs an admin token, like every admin route', async () => {
    const response = await fetch(`${harness.baseUrl}/admin/v1/openapi.json`);
    expect(response.status).toBe(401);
  });
});
