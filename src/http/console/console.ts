/**
 * The web console at /console: its built files (static-files.ts), its session routes
 * (session-routes.ts) and the key holder's read-only routes (self-routes.ts). Operators' pages call
 * the admin API (/admin/v1) with the session cookie; the console holds no logic of its own. An
 * encapsulated plugin: its hooks and headers touch no /v1 request.
 */
import type { FastifyInstance } from 'fastify';
import { isFromAdminListener } from '../admin/admin-listener.js';
import { registerSelfRoutes, type SelfRouteDeps } from './self-routes.js';
import { registerSessionRoutes } from './session-routes.js';
import { registerStaticFiles, SECURITY_HEADERS } from './static-files.js';

export interface ConsoleDeps extends SelfRouteDeps {
  /** The admin API has a listener of its own: admin tokens sign in there only. */
  separateAdminListener: boolean;
}

export function registerConsole(app: FastifyInstance, deps: ConsoleDeps): void {
  void app.register(
    async (scope) => {
      scope.addHook('onRequest', async (request, reply) => {
        reply.headers(SECURITY_HEADERS);
        // Session and account data is private: never kept by a browser's or a proxy's cache.
        if (request.url.startsWith('/console/api/')) reply.header('cache-control', 'no-store');
      });
      registerSessionRoutes(scope, { ...deps, adminSignInAllowed: (request) => !deps.separateAdminListener || isFromAdminListener(request.raw) });
      registerSelfRoutes(scope, deps);
      await registerStaticFiles(scope);
    },
    { prefix: '/console' },
  );
}
