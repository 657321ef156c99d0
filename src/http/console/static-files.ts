/**
 * The console's built files (`npm run build` puts them in dist/console, see console/vite.config.ts),
 * served under /console with a strict Content-Security-Policy: scripts, styles and requests only
 * from this origin, nothing inline, no framing. Hashed assets are cached for good; index.html is
 * revalidated, and any other path under /console that is not a file (a page of the console, such as
 * /console/accounts/acct_…) gets index.html, whose script then shows that page.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.js';

/** dist/console beside dist/http, whether this module runs from dist/ or (in tests) from src/. */
export const CONSOLE_FILES = fileURLToPath(new URL('../../../dist/console/', import.meta.url));

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** On every /console answer, pages and API alike. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

export async function registerStaticFiles(scope: FastifyInstance): Promise<void> {
  if (!existsSync(`${CONSOLE_FILES}index.html`)) {
    scope.get('/*', async () => {
      throw new GatewayError('service_unavailable', { message: 'The console is not built: run npm run build.' });
    });
    return;
  }
  await scope.register(fastifyStatic, {
    root: CONSOLE_FILES,
    prefix: '/',
    // One route per built file, found once at start: nothing outside dist/console can be named.
    wildcard: false,
    index: 'index.html',
    decorateReply: true,
    cacheControl: false,
    setHeaders: (response, path) => {
      response.setHeader('cache-control', /[\\/]assets[\\/]/.test(path) ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
  scope.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split('?', 1)[0] ?? request.url;
    if ((request.method !== 'GET' && request.method !== 'HEAD') || path.startsWith('/console/api/') || path.startsWith('/console/assets/')) {
      throw GatewayError.routeNotFound(request.method, request.url);
    }
    return reply.header('cache-control', 'no-cache').sendFile('index.html');
  });
}
