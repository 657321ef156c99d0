/**
 * A Google Vertex AI double (docs/wire-protocols.md §19): a real HTTP server on loopback that is
 * both the token endpoint of a service account made for the test (google-token-endpoint.ts: the
 * JWT verified against the account's public key) and the API at
 * `/{v1,v1beta1}/projects/{project}/locations/{location}/publishers/{google|anthropic}/models/{model}:{method}`:
 * Gemini's `generateContent` and `streamGenerateContent` (`alt=sse`, or a JSON array without it),
 * Claude's `rawPredict` and `streamRawPredict` (vertex-answers.ts). It takes only the bearer
 * tokens it issued, while they live (401 `UNAUTHENTICATED` otherwise); another project or location
 * is a 403 `PERMISSION_DENIED`, an unknown model a 404 `NOT_FOUND`, a Claude body that names its
 * model or lacks `anthropic_version` a 400 as Vertex answers it, and `QUOTA_ME` in the prompt a
 * 429 `RESOURCE_EXHAUSTED`. Test-only code.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { GOOGLE_PUBLIC_TOKEN_URL, makeServiceAccount, send, TokenEndpoint, type ServiceAccount } from './google-token-endpoint.js';
import { listenOnLoopback } from './loopback-server.js';
import { claudeFrames, claudeWhole, geminiFrames, geminiWhole, lastClaudeText, lastGeminiText, playVertexFrames } from './vertex-answers.js';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
export const CLAUDE_VERSION = 'vertex-2023-10-16';

export interface VertexDoubleOptions {
  project: string;
  location: string;
  /** The models each publisher serves. */
  models: { google: string[]; anthropic: string[] };
  /** The `expires_in` of issued tokens (seconds); they are refused once it has passed. */
  tokenLifeSeconds?: number;
  /** Delay between two streamed chunks. */
  chunkDelayMs?: number;
  /** Also take `aud` = Google's public token address, which Google's own auth library always sends. */
  acceptGooglesAudience?: boolean;
}

export interface VertexRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

export interface VertexDouble {
  /** The API's address (the catalog's `endpoint`). */
  endpoint: string;
  /** The token endpoint's address, the key file's `token_uri`. */
  tokenUri: string;
  account: ServiceAccount;
  tokens: TokenEndpoint;
  /** API calls, in order (token requests are in `tokens.requests`). */
  requests: VertexRequest[];
  close(): Promise<void>;
}

const MODEL_PATH = /^\/(v1|v1beta1)\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(google|anthropic)\/models\/([^/:]+):([A-Za-z]+)$/;

function googleError(code: number, status: string, message: string): Record<string, unknown> {
  return { error: { code, message, status } };
}

export async function startVertexUpstream(options: VertexDoubleOptions): Promise<VertexDouble> {
  const requests: VertexRequest[] = [];
  // Made once the server listens: its audience is the server's own address.
  const endpoint: { tokens?: TokenEndpoint } = {};
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const url = new URL(request.url ?? '/', 'http://double');
      if (url.pathname === '/token' && request.method === 'POST') {
        endpoint.tokens!.answer(response, new URLSearchParams(raw));
        return;
      }
      let body: Record<string, unknown> = {};
      try {
        body = raw === '' ? {} : (JSON.parse(raw) as Record<string, unknown>);
      } catch {
        send(response, 400, googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.'));
        return;
      }
      requests.push({ method: request.method ?? '', path: `${url.pathname}${url.search}`, headers: request.headers, body });
      if (!endpoint.tokens!.accepts(request.headers.authorization)) {
        send(response, 401, googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.'));
        return;
      }
      const route = MODEL_PATH.exec(url.pathname);
      if (route === null || request.method !== 'POST') {
        send(response, 404, googleError(404, 'NOT_FOUND', 'The requested URL was not found on this server.'));
        return;
      }
      const [, , project, location, publisher, model, method] = route as unknown as [string, string, string, string, 'google' | 'anthropic', string, string];
      if (project !== options.project || location !== options.location) {
        send(response, 403, googleError(403, 'PERMISSION_DENIED', `Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/${project}/locations/${location}/publishers/${publisher}/models/${model}' (or it may not exist).`));
        return;
      }
      if (!options.models[publisher].includes(decodeURIComponent(model))) {
        send(response, 404, googleError(404, 'NOT_FOUND', `Publisher Model \`projects/${project}/locations/${location}/publishers/${publisher}/models/${model}\` was not found or your project does not have access to it.`));
        return;
      }
      const delay = options.chunkDelayMs ?? 0;
      if (publisher === 'google') {
        if (lastGeminiText(body).includes('QUOTA_ME')) {
          send(response, 429, googleError(429, 'RESOURCE_EXHAUSTED', 'Resource exhausted. Please try again later. Please refer to https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details.'));
          return;
        }
        if (method === 'generateContent') send(response, 200, geminiWhole(body, model));
        else if (method === 'streamGenerateContent' && url.searchParams.get('alt') === 'sse') playVertexFrames(response, geminiFrames(body, model), delay);
        // Without alt=sse Vertex streams one JSON array of the chunks.
        else if (method === 'streamGenerateContent') send(response, 200, geminiFrames(body, model).map((frame) => JSON.parse(frame.slice('data: '.length)) as unknown));
        else send(response, 400, googleError(400, 'INVALID_ARGUMENT', `Unsupported method ${method} for Gemini.`));
        return;
      }
      if ('model' in body) {
        send(response, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'model: Extra inputs are not permitted' } });
        return;
      }
      if (body.anthropic_version !== CLAUDE_VERSION) {
        send(response, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'anthropic_version: Input should be \'vertex-2023-10-16\'' } });
        return;
      }
      if (lastClaudeText(body).includes('QUOTA_ME')) {
        send(response, 429, googleError(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model with base model: anthropic-claude. Please submit a quota increase request.'));
        return;
      }
      if (method === 'rawPredict' && body.stream !== true) send(response, 200, claudeWhole(body, model));
      else if (method === 'streamRawPredict' && body.stream === true) playVertexFrames(response, claudeFrames(body, model), delay);
      else send(response, 400, { type: 'error', error: { type: 'invalid_request_error', message: `${method} does not match stream: ${String(body.stream)}` } });
    });
  });
  const { origin, close } = await listenOnLoopback(server);
  const tokenUri = `${origin}/token`;
  const account = makeServiceAccount(options.project, tokenUri);
  const tokens = new TokenEndpoint({
    account,
    audiences: options.acceptGooglesAudience === true ? [tokenUri, GOOGLE_PUBLIC_TOKEN_URL] : [tokenUri],
    scope: CLOUD_PLATFORM_SCOPE,
    tokenLifeSeconds: options.tokenLifeSeconds ?? 3_599,
  });
  endpoint.tokens = tokens;
  return { endpoint: origin, tokenUri, account, tokens, requests, close };
}
