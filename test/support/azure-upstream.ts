/**
 * An Azure OpenAI double (docs/wire-protocols.md §17): a real HTTP server on loopback speaking
 * Azure's wire at both of its addresses, `/openai/deployments/{deployment}/…?api-version=…` (with
 * `/openai/responses?api-version=…` beside them) and `/openai/v1/…`, for chat completions (JSON,
 * and streams that open with Azure's `prompt_filter_results` chunk and carry
 * `content_filter_results` on each choice, and a chunk of verdicts without a delta as the
 * asynchronous filter sends; usage only with `stream_options.include_usage`),
 * Responses (openai-upstream.ts's answers) and embeddings. It refuses as Azure does: a missing
 * `api-version` (404 `Resource not found`), one it does not support (400 `API version not
 * supported`), an unknown deployment (404 `DeploymentNotFound`), a wrong key or token (401), and a
 * prompt holding `FILTER_ME` (400 `content_filter` with its `innererror`); `CUT_ME` makes the answer
 * end with `finish_reason: "content_filter"`. It is also the Entra ID token endpoint
 * (`/{tenant}/oauth2/v2.0/token`, client credentials), issuing tokens that live `tokenLifeSeconds`
 * and accepting each only until then. Test-only code.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerResponsesWith, type UpstreamReply } from './openai-upstream.js';
import { playFrames } from './loopback-server.js';

export const AZURE_API_VERSION = '2024-10-21';
/** The api-versions the double serves on deployment addresses (and `preview` on v1). */
const SUPPORTED_VERSIONS = new Set([AZURE_API_VERSION, '2025-04-01-preview', 'preview']);
/** The usage every answer reports: 11 input (3 cached), 5 output (as openai-upstream.ts). */
export const AZURE_USAGE = { prompt_tokens: 11, completion_tokens: 5, total_tokens: 16, prompt_tokens_details: { cached_tokens: 3 }, completion_tokens_details: { reasoning_tokens: 0 } };
/** Tokens every embeddings answer reports. */
export const AZURE_EMBEDDING_TOKENS = 7;

const SAFE = { filtered: false, severity: 'safe' };
const FILTER_RESULTS = { hate: SAFE, self_harm: SAFE, sexual: SAFE, violence: SAFE };

export interface AzureDoubleOptions {
  apiKey: string;
  /** The deployments that exist. */
  deployments: string[];
  tenantId: string;
  clientId: string;
  clientSecret: string;
  /** The `expires_in` of issued tokens (seconds); they are refused once it has passed. */
  tokenLifeSeconds?: number;
  /** Delay between two streamed chunks. */
  chunkDelayMs?: number;
}

export interface AzureRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

export interface AzureDouble {
  /** The resource's address (the catalog's `endpoint`), and the Entra ID authority. */
  endpoint: string;
  authority: string;
  /** API calls, in order (token requests are not among them). */
  requests: AzureRequest[];
  /** Token requests, in order, and the tokens issued, with when each was (ms since epoch). */
  tokenRequests: Array<Record<string, string>>;
  issuedTokens: string[];
  issuedAt: number[];
  /** Makes the token endpoint refuse the client credentials (or accept them again). */
  refuseTokens(refuse: boolean): void;
  close(): Promise<void>;
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json', 'apim-request-id': randomUUID() });
  response.end(JSON.stringify(body));
}

/** The text of the conversation's last entry, Chat or Responses. */
function lastText(body: Record<string, unknown>): string {
  const entries = Array.isArray(body.messages) ? body.messages : Array.isArray(body.input) ? body.input : typeof body.input === 'string' ? [{ content: body.input }] : [];
  const last = entries.at(-1) as Record<string, unknown> | undefined;
  return JSON.stringify(last?.content ?? last?.output ?? '');
}

/** A tool result is quoted, offered tools are called, anything else is greeted. */
function replyTo(body: Record<string, unknown>, index: number): UpstreamReply {
  const entries = (Array.isArray(body.messages) ? body.messages : Array.isArray(body.input) ? body.input : []) as Array<Record<string, unknown>>;
  const last = entries.at(-1);
  if (last?.role === 'tool' || last?.type === 'function_call_output') return { content: `The tool said: ${String(last.content ?? last.output)}` };
  if (Array.isArray(body.tools) && body.tools.length > 0) return { toolCalls: [{ id: `call_azure_${index}`, name: 'get_weather', arguments: '{"city":"Bergen"}' }] };
  return { content: 'Hello from Azure' };
}

export async function startAzureUpstream(options: AzureDoubleOptions): Promise<AzureDouble> {
  const requests: AzureRequest[] = [];
  const tokenRequests: Array<Record<string, string>> = [];
  const issued = new Map<string, number>();
  const issuedAt: number[] = [];
  let refusing = false;

  const authorized = (request: IncomingMessage): boolean => {
    const key = request.headers['api-key'];
    if (key !== undefined) return key === options.apiKey;
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    const expiresAt = bearer === undefined ? undefined : issued.get(bearer);
    return expiresAt !== undefined && Date.now() < expiresAt;
  };

  const token = (response: ServerResponse, form: URLSearchParams): void => {
    tokenRequests.push(Object.fromEntries(form));
    const good = form.get('grant_type') === 'client_credentials' && form.get('client_id') === options.clientId && form.get('client_secret') === options.clientSecret && form.get('scope') === 'https://cognitiveservices.azure.com/.default';
    if (refusing || !good) {
      const description = `AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${options.clientId}'.\r\nTrace ID: ${randomUUID()}\r\nCorrelation ID: ${randomUUID()}\r\nTimestamp: 2026-01-01 00:00:00Z`;
      send(response, 401, { error: 'invalid_client', error_description: description, error_codes: [7000215], timestamp: '2026-01-01 00:00:00Z', trace_id: randomUUID(), correlation_id: randomUUID() });
      return;
    }
    const life = options.tokenLifeSeconds ?? 3599;
    const value = `eyJ0eXAiOiJKV1Qi.azure-double-${tokenRequests.length}.${randomUUID()}`;
    issuedAt.push(Date.now());
    issued.set(value, Date.now() + life * 1_000);
    send(response, 200, { token_type: 'Bearer', expires_in: life, ext_expires_in: life, access_token: value });
  };

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const url = new URL(request.url ?? '/', 'http://double');
      if (url.pathname === `/${options.tenantId}/oauth2/v2.0/token` && request.method === 'POST') {
        token(response, new URLSearchParams(raw));
        return;
      }
      let body: Record<string, unknown> = {};
      try {
        body = raw === '' ? {} : (JSON.parse(raw) as Record<string, unknown>);
      } catch {
        send(response, 400, { error: { code: 'BadRequest', message: 'The request body is not valid JSON.' } });
        return;
      }
      requests.push({ method: request.method ?? '', path: `${url.pathname}${url.search}`, headers: request.headers, body });
      if (!authorized(request)) {
        send(response, 401, { error: { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.' } });
        return;
      }
      const v1 = /^\/openai\/v1\/(chat\/completions|responses|embeddings)$/.exec(url.pathname);
      const deployment = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings)$/.exec(url.pathname);
      const responses = url.pathname === '/openai/responses';
      const version = url.searchParams.get('api-version');
      if ((deployment !== null || responses) && version === null) {
        send(response, 404, { error: { code: '404', message: 'Resource not found' } });
        return;
      }
      if (version !== null && !SUPPORTED_VERSIONS.has(version)) {
        send(response, 400, { error: { code: 'BadRequest', message: 'API version not supported' } });
        return;
      }
      const operation = v1?.[1] ?? deployment?.[2] ?? (responses ? 'responses' : undefined);
      if (operation === undefined) {
        send(response, 404, { error: { code: '404', message: 'Resource not found' } });
        return;
      }
      const name = deployment === null ? String(body.model) : decodeURIComponent(deployment[1] ?? '');
      if (!options.deployments.includes(name)) {
        send(response, 404, { error: { code: 'DeploymentNotFound', message: 'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.' } });
        return;
      }
      if (lastText(body).includes('FILTER_ME')) {
        send(response, 400, {
          error: {
            message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766",
            type: null,
            param: 'prompt',
            code: 'content_filter',
            status: 400,
            innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: { ...FILTER_RESULTS, jailbreak: { filtered: false, detected: false }, violence: { filtered: true, severity: 'medium' } } },
          },
        });
        return;
      }
      if (operation === 'embeddings') {
        const inputs = Array.isArray(body.input) ? body.input : [body.input];
        send(response, 200, { object: 'list', data: inputs.map((input, index) => ({ object: 'embedding', index, embedding: [String(input).length / 100, 0.5, -0.25] })), model: 'text-embedding-3-small', usage: { prompt_tokens: AZURE_EMBEDDING_TOKENS, total_tokens: AZURE_EMBEDDING_TOKENS } });
        return;
      }
      const reply = replyTo(body, requests.length);
      if (operation === 'responses') {
        answerResponsesWith(response, reply, body, requests.length, AZURE_USAGE);
        return;
      }
      answerChat(response, body, reply, options);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    endpoint: origin,
    authority: origin,
    requests,
    tokenRequests,
    issuedAt,
    get issuedTokens() {
      return [...issued.keys()];
    },
    refuseTokens: (refuse) => {
      refusing = refuse;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A chat completion, whole or streamed, as Azure sends it. */
function answerChat(response: ServerResponse, body: Record<string, unknown>, reply: UpstreamReply, options: AzureDoubleOptions): void {
  const toolCalls = (reply.toolCalls ?? []).map((call, index) => ({ index, id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
  const cut = lastText(body).includes('CUT_ME');
  const finishReason = cut ? 'content_filter' : toolCalls.length > 0 ? 'tool_calls' : 'stop';
  // Azure answers with the model behind the deployment, not the deployment's name.
  const base = { id: 'chatcmpl-azure', created: 1767225600, model: 'gpt-4o-mini-2024-07-18', system_fingerprint: 'fp_azure' };
  const promptFilter = [{ prompt_index: 0, content_filter_results: { ...FILTER_RESULTS, jailbreak: { filtered: false, detected: false } } }];
  if (body.stream !== true) {
    const message = { role: 'assistant', content: cut ? 'Partial' : (reply.content ?? null), ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) };
    send(response, 200, { ...base, object: 'chat.completion', prompt_filter_results: promptFilter, choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null, content_filter_results: cut ? { ...FILTER_RESULTS, violence: { filtered: true, severity: 'high' } } : FILTER_RESULTS }], usage: AZURE_USAGE });
    return;
  }
  const includeUsage = typeof body.stream_options === 'object' && body.stream_options !== null && (body.stream_options as Record<string, unknown>).include_usage === true;
  const frames: string[] = [];
  const chunk = (payload: Record<string, unknown>) => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', ...payload })}\n\n`;
  const delta = (fields: Record<string, unknown>, finish: string | null = null, results: Record<string, unknown> = FILTER_RESULTS) =>
    chunk({ choices: [{ index: 0, delta: fields, finish_reason: finish, logprobs: null, content_filter_results: results }], ...(includeUsage ? { usage: null } : {}) });
  // Azure's first chunk: the prompt's filter verdicts, no choices, and empty id, model and object.
  frames.push(`data: ${JSON.stringify({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: promptFilter })}\n\n`);
  frames.push(chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, logprobs: null }], ...(includeUsage ? { usage: null } : {}) }));
  if (reply.content !== undefined) {
    // A chunk per word, as models stream.
    const words = cut ? ['Partial'] : reply.content.split(/(?= )/);
    for (const word of words) frames.push(delta({ content: word }));
  }
  for (const call of toolCalls) frames.push(delta({ tool_calls: [call] }));
  // What the asynchronous filter sends once it has read the text: verdicts and offsets, no delta.
  frames.push(chunk({ choices: [{ index: 0, finish_reason: null, content_filter_results: FILTER_RESULTS, content_filter_offsets: { check_offset: 0, start_offset: 0, end_offset: (reply.content ?? '').length } }], ...(includeUsage ? { usage: null } : {}) }));
  frames.push(delta({}, finishReason, cut ? { ...FILTER_RESULTS, violence: { filtered: true, severity: 'high' } } : FILTER_RESULTS));
  if (includeUsage) frames.push(chunk({ choices: [], usage: AZURE_USAGE }));
  frames.push('data: [DONE]\n\n');
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'apim-request-id': randomUUID() });
  playFrames(response, frames, options.chunkDelayMs ?? 0);
}
