/**
 * The admin API under `/admin/v1`: an encapsulated Fastify plugin with its own authentication
 * (admin tokens, see auth.ts), zod validation and the OpenAPI document generated from the same
 * schemas. One file per resource registers its routes; later resources (keys, usage, catalog,
 * request log) slot in beside them. Errors become GatewayErrors here and are rendered, like every
 * other answer, by the app's one error handler.
 */
import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors, jsonSchemaTransform, jsonSchemaTransformObject, serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { AdminError } from '../../admin/admin-error.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { parseJsonBody } from '../body.js';
import { invalidInputError } from '../input-errors.js';
import { registerAccountRoutes } from './accounts.js';
import { registerAdminTokenRoutes } from './admin-tokens.js';
import { registerAlertRoutes } from './alerts.js';
import { registerAuditRoutes } from './audit.js';
import { registerHealthRoutes } from './health.js';
import { registerRequestLogRoutes } from './requests.js';
import { registerCatalogRoutes } from './catalog.js';
import { registerCatalogVersionRoutes } from './catalog-versions.js';
import { registerKeyRoutes } from './keys.js';
import { createAdminAuthentication, requireRole } from './auth.js';
import { ADMIN_PATH_PREFIX, listenerGate } from './admin-listener.js';
import type { AdminRouteDeps } from './context.js';
import { SESSION_COOKIE } from '../session/session-cookie.js';

export interface AdminApiDeps extends AdminRouteDeps {
  /** The admin API has a listener of its own (admin-listener.ts): refuse it here and /v1 there. */
  separateListener: boolean;
}

export function registerAdminApi(app: FastifyInstance, deps: AdminApiDeps): void {
  app.decorateRequest('adminToken', null);
  app.decorateRequest('consoleKeyHolder', null);
  // Root-level, so it also keeps /v1 off the admin listener.
  if (deps.separateListener) app.addHook('onRequest', listenerGate);
  // Loaded with the app's other plugins when it starts (ready or listen).
  void app.register(
    async (scope) => {
      // The app keeps bodies as text for the /v1 decoders; here the schemas want the parsed JSON
      // (with the same depth bound). An empty body is no body: routes without one ignore it.
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => {
        try {
          done(null, body === '' ? undefined : parseJsonBody(body));
        } catch (error) {
          done(error instanceof Error ? error : new Error(String(error)), undefined);
        }
      });
      scope.setValidatorCompiler(validatorCompiler);
      scope.setSerializerCompiler(serializerCompiler);
      await scope.register(fastifySwagger, {
        openapi: {
          openapi: '3.1.0',
          info: {
            title: 'Tollgate admin API',
            version: '1',
            description:
              "Accounts, keys and their budgets, credit, usage, the request log, admin tokens, the audit log, the catalog, alert deliveries and outages (request figures by model and target, target rotations). Authenticate with `Authorization: Bearer tg-admin-…`, or with the web console's session cookie (changes then need `x-tollgate-console: 1`).",
          },
          components: {
            securitySchemes: {
              adminToken: { type: 'http', scheme: 'bearer' },
              consoleSession: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE },
            },
          },
          security: [{ adminToken: [] }, { consoleSession: [] }],
        },
        transform: jsonSchemaTransform,
        transformObject: jsonSchemaTransformObject,
      });
      scope.addHook('onRequest', createAdminAuthentication(deps));
      scope.setErrorHandler((error) => {
        // Thrown on to the app's handler, which renders it in the spec's format.
        throw toAdminGatewayError(error);
      });
      const typed = scope.withTypeProvider<ZodTypeProvider>();
      registerAccountRoutes(typed, deps);
      registerAdminTokenRoutes(typed, deps);
      registerAuditRoutes(typed, deps);
      registerRequestLogRoutes(typed, deps);
      registerCatalogRoutes(typed, deps);
      registerCatalogVersionRoutes(typed, deps);
      registerAlertRoutes(typed, deps);
      registerHealthRoutes(typed, deps);
      registerKeyRoutes(typed, deps);
      typed.get('/openapi.json', { preValidation: requireRole('viewer'), schema: { hide: true } }, async () => scope.swagger());
    },
    { prefix: ADMIN_PATH_PREFIX },
  );
}

function toAdminGatewayError(error: unknown): unknown {
  if (error instanceof AdminError) {
    const kind = error.kind === 'invalid_input' ? 'invalid_request' : error.kind;
    return new GatewayError(kind, { message: error.message });
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    const first = error.validation[0];
    if (first === undefined) return invalidInputError(undefined);
    const keys: unknown = first.params.keys;
    return invalidInputError({
      code: first.keyword,
      path: first.instancePath.split('/').filter((step) => step !== ''),
      message: first.message ?? 'invalid value',
      ...(Array.isArray(keys) ? { keys: keys.map(String) } : {}),
    });
  }
  return error;
}
