/**
 * Every `/v1` route, registered on the app from what `/v1` needs and nothing more: the three
 * generative endpoints (one handler, one surface adapter each), embeddings, moderations, speech,
 * images and transcriptions (one whole-answer handler, one endpoint each), Responses compaction
 * (`/v1/responses/compact`, the Responses handler's second adapter), token counting, the model list and
 * the stored-response endpoints. Each route runs the API hooks (key, then request rate limit).
 */
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import type { Authenticator } from '../../auth/authenticator.js';
import type { ConfigFile } from '../../config/schema.js';
import type { Sealer } from '../../lib/seal.js';
import type { AuthGuards } from '../auth-guards.js';
import { createAnswerHandler, type AnswerServices } from './answer.js';
import { createApiHooks } from './api-hooks.js';
import { registerModelRoutes } from './models-route.js';
import { acceptUploads } from './upload.js';
import { registerWholeRoute, type WholeEndpoint } from './whole-answer.js';
import { anthropicMessagesSurface } from './surfaces/anthropic-messages/anthropic-messages-surface.js';
import { registerCountTokensRoute } from './surfaces/anthropic-messages/count-tokens-route.js';
import { chatCompletionsSurface } from './surfaces/chat-completions/chat-completions-surface.js';
import { embeddingsEndpoint } from './surfaces/embeddings/embeddings-endpoint.js';
import { imageEditsEndpoint } from './surfaces/images/image-edits-endpoint.js';
import { imageGenerationsEndpoint } from './surfaces/images/image-generations-endpoint.js';
import { moderationsEndpoint } from './surfaces/moderations/moderations-endpoint.js';
import { speechEndpoint } from './surfaces/speech/speech-endpoint.js';
import { transcriptionsEndpoint, translationsEndpoint } from './surfaces/transcriptions/transcriptions-endpoint.js';
import type { ResponseStore } from './surfaces/responses/responses-extras.js';
import { createCompactSurface } from './surfaces/responses/compact-surface.js';
import { createResponsesSurface } from './surfaces/responses/responses-surface.js';
import { registerStoredResponseRoutes } from './surfaces/responses/stored-response-routes.js';
import { registerResponsesSocket } from './surfaces/responses/socket/responses-socket-route.js';
import type { SurfaceAdapter } from './surfaces/surface.js';

/** The whole-answer endpoints whose body is JSON. */
const JSON_ENDPOINTS: readonly WholeEndpoint<{ model: string }>[] = [embeddingsEndpoint, moderationsEndpoint, speechEndpoint, imageGenerationsEndpoint];
/** The whole-answer endpoints whose body is a multipart upload. */
const UPLOAD_ENDPOINTS: readonly WholeEndpoint<{ model: string }>[] = [imageEditsEndpoint, transcriptionsEndpoint, translationsEndpoint];

/** What `/v1` needs: the answer's services, and what its hooks and stored responses use. */
export interface V1Deps extends AnswerServices {
  authenticator: Authenticator;
  /** Shared with the other routes that look credentials up (what a failed lookup costs). */
  authGuards: AuthGuards;
  /** Stored responses (Responses `store`, `previous_response_id`, GET and DELETE). */
  store: ResponseStore;
  /** Seals the summaries of the compactions the gateway makes (docs/wire-protocols.md §23). */
  sealer: Sealer;
  rateLimits: ConfigFile['rate_limits'];
  /** The upload endpoints' body limits (`limits.max_upload_bytes`). */
  uploadLimits: ConfigFile['limits']['max_upload_bytes'];
  /** The Responses WebSocket's limits: its messages (as the POST body) and its idle time. */
  socketLimits: { maxMessageBytes: number; idleMs: number };
}

/**
 * An encapsulated plugin: its hooks and routes touch no admin, console or ops request. Also Claude
 * Code's connectivity probe, `HEAD /api/hello` at the base address (no key is sent), which is not
 * under /v1 but is there for /v1's clients.
 */
export function registerV1Routes(app: FastifyInstance, deps: V1Deps): void {
  void app.register(async (scope) => registerRoutes(scope, deps));
}

function registerRoutes(app: FastifyInstance, deps: V1Deps): void {
  const keyHooks = { authenticator: deps.authenticator, authGuards: deps.authGuards, limiter: deps.limiter, rateLimits: deps.rateLimits };
  const onRequest = createApiHooks(keyHooks);
  // The route's surface is in its config, so that a refusal before the handler (key, limits, body)
  // is logged with it too (src/request-log/entry.ts).
  const answerRoute = <Extras>(path: string, adapter: SurfaceAdapter<Extras>, hooks: onRequestAsyncHookHandler[]): void => {
    app.post(path, { onRequest: hooks, config: { surface: adapter.surface } }, createAnswerHandler(adapter, deps));
  };
  const responses = { store: deps.store, now: deps.now, sealer: deps.sealer };
  answerRoute('/v1/responses', createResponsesSurface(responses), onRequest);
  // Part of the Responses surface: a model serves it when it serves `responses`.
  answerRoute('/v1/responses/compact', createCompactSurface(responses), onRequest);
  answerRoute('/v1/chat/completions', chatCompletionsSurface, onRequest);
  // Anthropic's Messages API (Claude Code, the Anthropic SDKs): the key also comes as `x-api-key`.
  const onAnthropicRequest = createApiHooks({ ...keyHooks, apiKeyHeader: true });
  answerRoute('/v1/messages', anthropicMessagesSurface, onAnthropicRequest);
  const whole = { onRequest, services: deps, uploadLimits: deps.uploadLimits };
  for (const endpoint of JSON_ENDPOINTS) registerWholeRoute(app, endpoint, whole);
  // Multipart bodies are read only on the upload endpoints, in a scope of their own (upload.ts).
  void app.register(async (uploads) => {
    await acceptUploads(uploads);
    for (const endpoint of UPLOAD_ENDPOINTS) registerWholeRoute(uploads, endpoint, whole);
  });
  registerCountTokensRoute(app, { onRequest: onAnthropicRequest, catalog: deps.catalog, router: deps.router });
  // Anthropic's clients list models too (with `x-api-key`).
  const onModelsRequest = createApiHooks({ ...keyHooks, apiKeyHeader: true });
  registerModelRoutes(app, { onRequest: onModelsRequest, catalog: deps.catalog, router: deps.router });
  registerStoredResponseRoutes(app, { onRequest, store: deps.store });
  // In a scope of its own: the WebSocket plugin's hooks meet only the upgrade route.
  void app.register(async (sockets) => registerResponsesSocket(sockets, { onRequest, ...deps.socketLimits, now: deps.now }));
  app.route({ method: ['GET', 'HEAD'], url: '/api/hello', handler: async (_request, reply) => reply.code(200).send() });
}
