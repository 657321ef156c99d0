/**
 * An AWS Bedrock runtime double (docs/wire-protocols.md §18): a real HTTP server on loopback
 * speaking Bedrock's wire for its four operations, `POST /model/{modelId}/converse`,
 * `/converse-stream`, `/invoke` and `/invoke-with-response-stream` (Claude's Messages body), its
 * streams in AWS's binary event-stream framing encoded by AWS's own codec
 * (`@smithy/eventstream-codec`), with the `p` padding field real events carry.
 *
 * It checks authentication the way AWS does: the `authorization` header's SigV4 signature is
 * computed again by AWS's signer (`@smithy/signature-v4`) over the request as received (the
 * headers it names, the path, the body) with the secret of the access key it names, and refused
 * with AWS's 403s and error shapes (`x-amzn-ErrorType` header, `{"message"}` body): no or a
 * malformed signature (`MissingAuthenticationTokenException`, `IncompleteSignatureException`), an
 * unknown key or a session token it did not issue (`UnrecognizedClientException`), a wrong
 * signature or a stale date (`InvalidSignatureException`), expired temporary credentials
 * (`ExpiredTokenException`).
 *
 * It is also a container credentials endpoint (`GET /credentials`, what
 * `AWS_CONTAINER_CREDENTIALS_FULL_URI` points the standard chain at), issuing temporary
 * credentials that live `credentialLifeSeconds`; `expireCredentials()` ends those issued so far.
 *
 * Replies: a tool result is quoted, offered tools are called (`get_weather` for Bergen; with
 * `PARALLEL` in the prompt, `get_time` for CET beside it), anything else is greeted; Claude's
 * thinking (asked for in `additionalModelRequestFields` or the Messages body) comes first.
 * `THROTTLE_ME` in the prompt answers 429 `ThrottlingException`, `INVALID_ME` 400
 * `ValidationException`, `BREAK_ME` breaks the stream after its first text with a
 * `modelStreamErrorException` message, `SLOW_ME` streams a message every `SLOW_DELAY_MS`. Test-only code.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { Hash } from '@smithy/hash-node';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { listenOnLoopback, playFrames } from './loopback-server.js';

/** What every answer reports: 11 input tokens besides 3 read from the cache and 2 written to it, 5 output. */
export const BEDROCK_USAGE = { inputTokens: 11, outputTokens: 5, cacheReadInputTokens: 3, cacheWriteInputTokens: 2 };
export const GREETING = 'Hello from Bedrock';
export const THINKING = 'The user greets me; I greet back.';
/** The model Claude's answers name (Bedrock answers with Anthropic's name, not the model id). */
export const CLAUDE_ANSWER_MODEL = 'claude-sonnet-4-20250514';

const SIGNATURE_EXPIRY_MS = 5 * 60_000;
/** The delay between streamed messages of an answer whose prompt holds `SLOW_ME`. */
export const SLOW_DELAY_MS = 400;

export interface BedrockDoubleOptions {
  region: string;
  /** A long-term access key the double knows. */
  accessKeyId: string;
  secretAccessKey: string;
  /** The model ids that exist. */
  models: string[];
  /** The life of temporary credentials from `/credentials` (seconds; an hour by default). */
  credentialLifeSeconds?: number;
  /** Delay between two streamed messages. */
  chunkDelayMs?: number;
}

export interface BedrockRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  /** The access key that signed it. */
  accessKeyId: string;
}

export interface BedrockDouble {
  endpoint: string;
  /** The container credentials address (`AWS_CONTAINER_CREDENTIALS_FULL_URI`). */
  credentialsUri: string;
  /** Calls that passed authentication, in order. */
  requests: BedrockRequest[];
  /** Refusals, in order: their error type. */
  refusals: string[];
  /** Temporary credentials issued, in order. */
  issued: Array<{ accessKeyId: string; secretAccessKey: string; sessionToken: string; expiration: string }>;
  /** Ends every temporary credential issued so far: AWS refuses them from now on. */
  expireCredentials(): void;
  /** Makes the credentials endpoint answer 500 (or serve again). */
  failCredentials(fail: boolean): void;
  close(): Promise<void>;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** One event-stream message, as AWS frames it. */
export function eventMessage(eventType: string, payload: Record<string, unknown>): Uint8Array {
  return codec.encode({
    headers: { ':event-type': { type: 'string', value: eventType }, ':content-type': { type: 'string', value: 'application/json' }, ':message-type': { type: 'string', value: 'event' } },
    body: fromUtf8(JSON.stringify({ ...payload, p: 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJ'.slice(0, 4 + (JSON.stringify(payload).length % 30)) })),
  });
}

/** An exception message, as AWS ends a stream that failed. */
export function exceptionMessage(exceptionType: string, message: string): Uint8Array {
  return codec.encode({
    headers: { ':exception-type': { type: 'string', value: exceptionType }, ':content-type': { type: 'string', value: 'application/json' }, ':message-type': { type: 'string', value: 'exception' } },
    body: fromUtf8(JSON.stringify({ message })),
  });
}

/** An AWS error answer: the type in `x-amzn-ErrorType`, the message in the body. */
export function awsError(status: number, type: string, message: string): { status: number; headers: Record<string, string>; body: { message: string } } {
  return { status, headers: { 'content-type': 'application/json', 'x-amzn-requestid': randomUUID(), 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` }, body: { message } };
}

function sendError(response: ServerResponse, status: number, type: string, message: string): void {
  const answer = awsError(status, type, message);
  response.writeHead(answer.status, answer.headers);
  response.end(JSON.stringify(answer.body));
}

function sendJson(response: ServerResponse, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': randomUUID(), ...headers });
  response.end(JSON.stringify(body));
}

export type Refusal = { status: number; type: string; message: string };

/** `20260101T000000Z` → its time; NaN when malformed. */
function amzDate(value: string): number {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (match === null) return Number.NaN;
  return Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]), Number(match[4]), Number(match[5]), Number(match[6]));
}

/** What a Bedrock reply says, whatever the operation's format. */
interface Reply {
  thinking?: string;
  text?: string;
  toolCalls?: Array<{ id: string; name: string; input: Record<string, unknown> }>;
}

/** The secret of the access key a request names (with the session token it goes with), or AWS's refusal of the key. */
export type KeyLookup = (accessKeyId: string, sessionToken: string | undefined) => { secretAccessKey: string; sessionToken?: string } | Refusal;

/** One long-term access key, the only one known. */
export function longTermKey(accessKeyId: string, secretAccessKey: string): KeyLookup {
  return (id) => (id === accessKeyId ? { secretAccessKey } : { status: 403, type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' });
}

/**
 * Checks a request's SigV4 signature as AWS does (see the file comment): the signer computes it
 * again over the request as received with the secret of the key it names. The access key that
 * signed it, or AWS's refusal.
 */
export async function verifySigV4(request: Pick<IncomingMessage, 'headers' | 'method'>, rawPath: string, body: Buffer, expectedRegion: string, lookup: KeyLookup): Promise<{ accessKeyId: string } | Refusal> {
  const header = request.headers.authorization;
  if (header === undefined) return { status: 403, type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  const parts = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(header);
  if (parts === null) return { status: 403, type: 'IncompleteSignatureException', message: `Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters. Authorization=${header.split(' ')[0] ?? ''}` };
  const [, accessKeyId = '', scopeDate, region, service, signedHeaders = '', signature] = parts;
  const token = request.headers['x-amz-security-token'];
  const key = lookup(accessKeyId, typeof token === 'string' ? token : undefined);
  if ('status' in key) return key;
  const { secretAccessKey, sessionToken } = key;
  if (region !== expectedRegion || service !== 'bedrock') return { status: 403, type: 'InvalidSignatureException', message: `Credential should be scoped to a valid region and service 'bedrock'.` };
  const dateHeader = request.headers['x-amz-date'];
  const signedAt = typeof dateHeader === 'string' ? amzDate(dateHeader) : Number.NaN;
  if (!Number.isFinite(signedAt) || dateHeader?.slice(0, 8) !== scopeDate) return { status: 403, type: 'IncompleteSignatureException', message: 'Date must be in ISO-8601 \'basic format\'.' };
  if (Math.abs(Date.now() - signedAt) > SIGNATURE_EXPIRY_MS) return { status: 403, type: 'InvalidSignatureException', message: `Signature expired: ${dateHeader} is now earlier than the allowed window.` };
  const bodyHash = createHash('sha256').update(body).digest('hex');
  const claimedHash = request.headers['x-amz-content-sha256'];
  if (claimedHash !== undefined && claimedHash !== bodyHash) return { status: 400, type: 'XAmzContentSHA256Mismatch', message: "The provided 'x-amz-content-sha256' header does not match what was computed." };
  const names = signedHeaders.split(';');
  if (!names.includes('host') || !names.includes('x-amz-date')) return { status: 403, type: 'InvalidSignatureException', message: 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.' };
  const headers: Record<string, string> = {};
  for (const name of names) {
    const value = request.headers[name];
    headers[name] = Array.isArray(value) ? value.join(',') : (value ?? '');
  }
  const signer = new SignatureV4({ credentials: { accessKeyId, secretAccessKey, ...(sessionToken === undefined ? {} : { sessionToken }) }, region, service, sha256: Hash.bind(null, 'sha256'), applyChecksum: false });
  const again = await signer.sign(new HttpRequest({ method: request.method ?? 'POST', protocol: 'http:', hostname: '127.0.0.1', path: rawPath, headers, body }), { signingDate: new Date(signedAt) });
  const expected = /Signature=([0-9a-f]{64})$/.exec(again.headers.authorization ?? '')?.[1];
  if (expected !== signature) {
    return { status: 403, type: 'InvalidSignatureException', message: 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.' };
  }
  return { accessKeyId };
}

export async function startBedrockUpstream(options: BedrockDoubleOptions): Promise<BedrockDouble> {
  const requests: BedrockRequest[] = [];
  const refusals: string[] = [];
  const issued: BedrockDouble['issued'] = [];
  /** Temporary keys: their secret, token, expiry (ms). */
  const temporary = new Map<string, { secret: string; token: string; expiresAt: number }>();
  let failingCredentials = false;

  /** The secret (and session token) of the key a request names, or AWS's refusal. */
  const lookup: KeyLookup = (accessKeyId, token) => {
    if (accessKeyId === options.accessKeyId) return { secretAccessKey: options.secretAccessKey };
    const held = temporary.get(accessKeyId);
    if (held === undefined || token !== held.token) return { status: 403, type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
    if (Date.now() >= held.expiresAt) return { status: 403, type: 'ExpiredTokenException', message: 'The security token included in the request is expired' };
    return { secretAccessKey: held.secret, sessionToken: token };
  };
  const authenticate = (request: IncomingMessage, rawPath: string, body: Buffer) => verifySigV4(request, rawPath, body, options.region, lookup);

  const issueCredentials = (response: ServerResponse): void => {
    if (failingCredentials) {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ code: 'InternalError', message: 'The credentials endpoint is failing.' }));
      return;
    }
    const life = (options.credentialLifeSeconds ?? 3_600) * 1_000;
    const accessKeyId = `ASIA${randomUUID().replace(/-/g, '').slice(0, 16).toUpperCase()}`;
    const secretAccessKey = `tmp/${randomUUID()}`;
    const sessionToken = `IQoJb3JpZ2luX2Vj${randomUUID()}${randomUUID()}`;
    const expiresAt = Date.now() + life;
    const expiration = new Date(expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
    temporary.set(accessKeyId, { secret: secretAccessKey, token: sessionToken, expiresAt });
    issued.push({ accessKeyId, secretAccessKey, sessionToken, expiration });
    sendJson(response, { AccessKeyId: accessKeyId, SecretAccessKey: secretAccessKey, Token: sessionToken, Expiration: expiration, RoleArn: 'arn:aws:iam::123456789012:role/tollgate' });
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        const raw = Buffer.concat(chunks);
        const rawPath = (request.url ?? '/').split('?', 1)[0] ?? '/';
        if (request.method === 'GET' && rawPath === '/credentials') {
          issueCredentials(response);
          return;
        }
        const auth = await authenticate(request, rawPath, raw);
        if ('status' in auth) {
          refusals.push(auth.type);
          sendError(response, auth.status, auth.type, auth.message);
          return;
        }
        const route = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream)$/.exec(rawPath);
        if (request.method !== 'POST' || route === null) {
          sendError(response, 404, 'UnknownOperationException', 'Unknown operation');
          return;
        }
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
        } catch {
          sendError(response, 400, 'ValidationException', 'Malformed input request, please reformat your input and try again.');
          return;
        }
        const modelId = decodeURIComponent(route[1] ?? '');
        const operation = route[2] ?? '';
        requests.push({ path: rawPath, headers: request.headers, body, accessKeyId: auth.accessKeyId });
        if (!options.models.includes(modelId)) {
          sendError(response, 400, 'ValidationException', 'The provided model identifier is invalid.');
          return;
        }
        const prompt = JSON.stringify(body.messages ?? '');
        if (prompt.includes('THROTTLE_ME')) {
          sendError(response, 429, 'ThrottlingException', 'Too many requests, please wait before trying again.');
          return;
        }
        if (prompt.includes('INVALID_ME')) {
          sendError(response, 400, 'ValidationException', 'messages.0.content: the prompt holds INVALID_ME, which this double refuses.');
          return;
        }
        const breaks = prompt.includes('BREAK_ME');
        const delayMs = prompt.includes('SLOW_ME') ? SLOW_DELAY_MS : (options.chunkDelayMs ?? 0);
        if (operation === 'converse' || operation === 'converse-stream') {
          const refusal = checkConverse(body);
          if (refusal !== undefined) {
            sendError(response, 400, 'ValidationException', refusal);
            return;
          }
          const reply = converseReply(body, requests.length);
          if (operation === 'converse') sendJson(response, converseAnswer(reply));
          else streamMessages(response, converseEvents(reply, breaks), delayMs, breaks);
          return;
        }
        const refusal = checkInvoke(body);
        if (refusal !== undefined) {
          sendError(response, 400, 'ValidationException', refusal);
          return;
        }
        const reply = messagesReply(body, requests.length);
        if (operation === 'invoke') {
          sendJson(response, claudeMessage(reply), { 'x-amzn-bedrock-input-token-count': String(BEDROCK_USAGE.inputTokens), 'x-amzn-bedrock-output-token-count': String(BEDROCK_USAGE.outputTokens) });
          return;
        }
        streamMessages(response, claudeEvents(reply, breaks).map((event) => eventMessage('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64') })), delayMs, breaks);
      })();
    });
  });
  const { origin, close } = await listenOnLoopback(server);
  return {
    endpoint: origin,
    credentialsUri: `${origin}/credentials`,
    requests,
    refusals,
    issued,
    expireCredentials: () => {
      for (const held of temporary.values()) held.expiresAt = 0;
    },
    failCredentials: (fail) => {
      failingCredentials = fail;
    },
    close,
  };
}

/** Sends event-stream messages one by one; with `breaks`, an exception message follows the first text. */
function streamMessages(response: ServerResponse, messages: Uint8Array[], delayMs: number, breaks = false): void {
  response.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': randomUUID() });
  const queue = breaks ? [...messages.slice(0, 3), exceptionMessage('modelStreamErrorException', 'The model stream broke off (BREAK_ME).')] : messages;
  playFrames(response, queue, delayMs);
}

// ---------------------------------------------------------------------------------------------
// Converse

export function checkConverse(body: Record<string, unknown>): string | undefined {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';
  for (const key of Object.keys(body)) {
    if (!['messages', 'system', 'inferenceConfig', 'toolConfig', 'additionalModelRequestFields', 'guardrailConfig', 'promptVariables', 'requestMetadata', 'performanceConfig', 'additionalModelResponseFieldPaths'].includes(key)) return `1 validation error detected: extraneous key [${key}] is not permitted`;
  }
  const inference = (body.inferenceConfig ?? {}) as Record<string, unknown>;
  if (typeof inference.temperature === 'number' && (inference.temperature < 0 || inference.temperature > 1)) return '1 validation error detected: Value at \'inferenceConfig.temperature\' failed to satisfy constraint: Member must have value less than or equal to 1';
  return undefined;
}

function lastBlocks(body: Record<string, unknown>): Array<Record<string, unknown>> {
  const messages = body.messages as Array<{ content?: unknown }>;
  const content = messages.at(-1)?.content;
  return Array.isArray(content) ? (content as Array<Record<string, unknown>>) : typeof content === 'string' ? [{ type: 'text', text: content }] : [];
}

function converseReply(body: Record<string, unknown>, index: number): Reply {
  const thinking = (body.additionalModelRequestFields as Record<string, unknown> | undefined)?.thinking !== undefined ? THINKING : undefined;
  const result = lastBlocks(body).find((block) => block.toolResult !== undefined)?.toolResult as { content: Array<{ text: string }> } | undefined;
  if (result !== undefined) return { text: `The tool said: ${result.content.map((part) => part.text).join('')}` };
  const tools = (body.toolConfig as { tools?: unknown[] } | undefined)?.tools;
  if (Array.isArray(tools) && tools.length > 0) return { ...(thinking === undefined ? {} : { thinking }), toolCalls: toolCallsFor(JSON.stringify(body.messages), index) };
  return { ...(thinking === undefined ? {} : { thinking }), text: GREETING };
}

function toolCallsFor(prompt: string, index: number): NonNullable<Reply['toolCalls']> {
  const calls = [{ id: `tooluse_bdrk_${index}_0`, name: 'get_weather', input: { city: 'Bergen' } }];
  if (prompt.includes('PARALLEL')) calls.push({ id: `tooluse_bdrk_${index}_1`, name: 'get_time', input: { zone: 'CET' } as unknown as { city: string } });
  return calls;
}

function converseAnswer(reply: Reply): Record<string, unknown> {
  const content: unknown[] = [];
  if (reply.thinking !== undefined) content.push({ reasoningContent: { reasoningText: { text: reply.thinking, signature: 'EqQBCkYIBxgCKkDsig' } } });
  if (reply.text !== undefined) content.push({ text: reply.text });
  for (const call of reply.toolCalls ?? []) content.push({ toolUse: { toolUseId: call.id, name: call.name, input: call.input } });
  return {
    output: { message: { role: 'assistant', content } },
    stopReason: reply.toolCalls === undefined ? 'end_turn' : 'tool_use',
    usage: { ...BEDROCK_USAGE, totalTokens: BEDROCK_USAGE.inputTokens + BEDROCK_USAGE.outputTokens + BEDROCK_USAGE.cacheReadInputTokens + BEDROCK_USAGE.cacheWriteInputTokens },
    metrics: { latencyMs: 321 },
  };
}

function converseEvents(reply: Reply, breaks: boolean): Uint8Array[] {
  const events: Uint8Array[] = [eventMessage('messageStart', { role: 'assistant' })];
  let index = 0;
  if (reply.thinking !== undefined) {
    const [head, tail] = [reply.thinking.slice(0, 12), reply.thinking.slice(12)];
    events.push(eventMessage('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { text: head } } }));
    events.push(eventMessage('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { text: tail } } }));
    events.push(eventMessage('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { signature: 'EqQBCkYIBxgCKkDsig' } } }));
    events.push(eventMessage('contentBlockStop', { contentBlockIndex: index }));
    index += 1;
  }
  if (reply.text !== undefined) {
    const words = breaks ? ['Hello', ' from'] : reply.text.split(/(?= )/);
    for (const word of words) events.push(eventMessage('contentBlockDelta', { contentBlockIndex: index, delta: { text: word } }));
    events.push(eventMessage('contentBlockStop', { contentBlockIndex: index }));
    index += 1;
  }
  for (const call of reply.toolCalls ?? []) {
    const input = JSON.stringify(call.input);
    events.push(eventMessage('contentBlockStart', { contentBlockIndex: index, start: { toolUse: { toolUseId: call.id, name: call.name } } }));
    events.push(eventMessage('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: input.slice(0, 5) } } }));
    events.push(eventMessage('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: input.slice(5) } } }));
    events.push(eventMessage('contentBlockStop', { contentBlockIndex: index }));
    index += 1;
  }
  events.push(eventMessage('messageStop', { stopReason: reply.toolCalls === undefined ? 'end_turn' : 'tool_use' }));
  events.push(eventMessage('metadata', { usage: { ...BEDROCK_USAGE, totalTokens: 21 }, metrics: { latencyMs: 321 } }));
  return events;
}

// ---------------------------------------------------------------------------------------------
// InvokeModel with Claude's Messages body

export function checkInvoke(body: Record<string, unknown>): string | undefined {
  if (body.anthropic_version !== 'bedrock-2023-05-31') return 'Malformed input request: #: required key [anthropic_version] not found, please reformat your input and try again.';
  for (const key of ['model', 'stream', 'service_tier']) if (key in body) return `Malformed input request: #: extraneous key [${key}] is not permitted, please reformat your input and try again.`;
  if (typeof body.max_tokens !== 'number') return 'Malformed input request: #: required key [max_tokens] not found, please reformat your input and try again.';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'Malformed input request: #/messages: expected minimum item count: 1, found: 0, please reformat your input and try again.';
  return undefined;
}

function messagesReply(body: Record<string, unknown>, index: number): Reply {
  const thinking = (body.thinking as Record<string, unknown> | undefined)?.type === 'enabled' ? THINKING : undefined;
  const result = lastBlocks(body).find((block) => block.type === 'tool_result');
  if (result !== undefined) return { text: `The tool said: ${typeof result.content === 'string' ? result.content : JSON.stringify(result.content)}` };
  if (Array.isArray(body.tools) && body.tools.length > 0) return { ...(thinking === undefined ? {} : { thinking }), toolCalls: toolCallsFor(JSON.stringify(body.messages), index).map((call) => ({ ...call, id: call.id.replace('tooluse_', 'toolu_') })) };
  return { ...(thinking === undefined ? {} : { thinking }), text: GREETING };
}

const CLAUDE_USAGE = { input_tokens: BEDROCK_USAGE.inputTokens, cache_creation_input_tokens: BEDROCK_USAGE.cacheWriteInputTokens, cache_read_input_tokens: BEDROCK_USAGE.cacheReadInputTokens, output_tokens: BEDROCK_USAGE.outputTokens };

function claudeMessage(reply: Reply): Record<string, unknown> {
  const content: unknown[] = [];
  if (reply.thinking !== undefined) content.push({ type: 'thinking', thinking: reply.thinking, signature: 'EqQBCkYIBxgCKkDsig' });
  if (reply.text !== undefined) content.push({ type: 'text', text: reply.text });
  for (const call of reply.toolCalls ?? []) content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.input });
  return { id: `msg_bdrk_${randomUUID().slice(0, 8)}`, type: 'message', role: 'assistant', model: CLAUDE_ANSWER_MODEL, content, stop_reason: reply.toolCalls === undefined ? 'end_turn' : 'tool_use', stop_sequence: null, usage: CLAUDE_USAGE };
}

function claudeEvents(reply: Reply, breaks: boolean): Array<Record<string, unknown>> {
  const events: Array<Record<string, unknown>> = [
    { type: 'message_start', message: { id: `msg_bdrk_${randomUUID().slice(0, 8)}`, type: 'message', role: 'assistant', model: CLAUDE_ANSWER_MODEL, content: [], stop_reason: null, stop_sequence: null, usage: { ...CLAUDE_USAGE, output_tokens: 1 } } },
  ];
  let index = 0;
  if (reply.thinking !== undefined) {
    events.push({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
    events.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: reply.thinking } });
    events.push({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: 'EqQBCkYIBxgCKkDsig' } });
    events.push({ type: 'content_block_stop', index });
    index += 1;
  }
  if (reply.text !== undefined) {
    events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    for (const word of breaks ? ['Hello'] : reply.text.split(/(?= )/)) events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: word } });
    events.push({ type: 'content_block_stop', index });
    index += 1;
  }
  for (const call of reply.toolCalls ?? []) {
    const input = JSON.stringify(call.input);
    events.push({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } });
    events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: input.slice(0, 5) } });
    events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: input.slice(5) } });
    events.push({ type: 'content_block_stop', index });
    index += 1;
  }
  events.push({ type: 'message_delta', delta: { stop_reason: reply.toolCalls === undefined ? 'end_turn' : 'tool_use', stop_sequence: null }, usage: { output_tokens: BEDROCK_USAGE.outputTokens } });
  events.push({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: BEDROCK_USAGE.inputTokens, outputTokenCount: BEDROCK_USAGE.outputTokens, invocationLatency: 321, firstByteLatency: 123 } });
  return events;
}

// ---------------------------------------------------------------------------------------------
// Captures framed as Bedrock sends them (test/conformance/provider-table.ts)

/** A Converse stream capture (one `{"event", "payload"}` or `{"exception", "payload"}` per line) as the event stream Bedrock sends. */
export function eventStreamOfLines(text: string): Uint8Array {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  return Buffer.concat(
    lines.map((line) => {
      const { event, exception, payload } = JSON.parse(line) as { event?: string; exception?: string; payload: Record<string, unknown> };
      // A capture's payload is sent as written, its `p` padding included.
      if (exception !== undefined) return exceptionMessage(exception, String(payload.message ?? ''));
      return codec.encode({
        headers: { ':event-type': { type: 'string', value: event ?? '' }, ':content-type': { type: 'string', value: 'application/json' }, ':message-type': { type: 'string', value: 'event' } },
        body: fromUtf8(JSON.stringify(payload)),
      });
    }),
  );
}

/** An Anthropic Messages SSE capture as InvokeModelWithResponseStream sends it: each event's JSON, base64, in a `chunk`. */
export function eventStreamOfSse(text: string): Uint8Array {
  const datas = text.split(/\r?\n\r?\n/).flatMap((event) => event.split(/\r?\n/).filter((line) => line.startsWith('data:')).map((line) => line.slice('data:'.length).trim()));
  return Buffer.concat(datas.map((data) => eventMessage('chunk', { bytes: Buffer.from(data).toString('base64') })));
}

/** The first `count` lines of a line capture. */
export function firstLines(text: string, count: number): string {
  return text.split('\n').filter((line) => line.trim() !== '').slice(0, count).join('\n');
}
