/**
 * The HTTP side every HTTP provider shares: one keep-alive connection pool per provider, JSON POSTs
 * with the provider's own headers, bounded body reads, and the mapping of everything that can go
 * wrong before a 200 into `UpstreamError`. What differs between providers comes in as options:
 * their authentication and version headers, what their error bodies say, and their name in
 * messages, and where a credential is fetched per call (a short-lived token) rather than fixed.
 * Every message that leaves is free of the secret and of the upstream's address.
 */
import { Readable } from 'node:stream';
import { errors, Pool, type Dispatcher } from 'undici';
import type { TimeoutsConfig } from '../../config/schema.js';
import { isRecord, parseJson } from '../../lib/json-value.js';
import { UpstreamError, type UpstreamFailureKind } from '../provider.js';
import type { ErrorBodyReader } from './error-body.js';
import { MultipartBody } from './multipart-body.js';
import { resolveSecret, type SecretConfig } from './provider-secret.js';
import { createRedactor, type Redactor } from './redaction.js';
import { classifyTransportFailure } from './transport-failure.js';

/** The body of an accepted (2xx) upstream answer. */
export type UpstreamBody = Dispatcher.ResponseData['body'];

/** An accepted (2xx) upstream answer, read whole (a non-streamed answer). */
export interface WholeUpstreamResponse {
  status: number;
  /** The media type, lower-cased, without parameters ('' when absent). */
  mediaType: string;
  /** The body as UTF-8 text, as the upstream sent it. */
  text: string;
}

/** An accepted (2xx) upstream answer. */
export interface UpstreamResponse {
  status: number;
  /** The media type, lower-cased, without parameters ('' when absent). */
  mediaType: string;
  body: UpstreamBody;
}

export interface PostOptions {
  signal: AbortSignal;
  /** Tollgate's request id, sent as `x-request-id`. */
  requestId: string;
  /** Whether an SSE stream is asked for (sets `accept`). */
  stream: boolean;
  /** Client headers a pass-through forwards; the provider's own headers win over them. */
  extraHeaders?: Readonly<Record<string, string>>;
}

export interface UpstreamHttpClientOptions {
  /** The provider type as messages name it: `openai` gives `openai provider "<name>": …`. */
  providerType: string;
  /** The provider's name in the catalog. */
  providerName: string;
  /** Base address including the version segment, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** The upstream secret, given only so that no message ever repeats it (`headers` carry it). */
  secret: string | undefined;
  /** Sent with every request: the provider's authentication and version headers. */
  headers: Readonly<Record<string, string>>;
  /** What the provider's error bodies say. */
  readErrorBody: ErrorBodyReader;
  timeouts: TimeoutsConfig;
  /** A credential fetched per call, sent beside `headers` (Azure's Entra ID tokens). */
  credentials?: CallCredentials;
}

/**
 * A credential that is not fixed at startup: a token that expires and is fetched again. Its
 * headers are asked for before each call; a failure to get them rejects with an `UpstreamError`
 * (kind `credentials`, so that the router takes the provider out) whose message holds no secret.
 */
export interface CallCredentials {
  /**
   * The headers that carry the credential for the next call, e.g. `{ authorization: 'Bearer …' }`.
   * `request` is the call itself, for a credential that signs it (AWS's SigV4, docs/wire-protocols.md §18.2).
   */
  headers(request: CallRequest): Promise<Readonly<Record<string, string>>>;
  /** The upstream refused the credential (401, 403): the next call must not send it again. */
  refused(): void;
  /** Strips what the credential gave away (its tokens, its own secret) from a text. */
  redact(text: string): string;
}

/** The call a credential is asked for: its path (base path included) and its JSON body (none for an upload). */
export interface CallRequest {
  path: string;
  body: string | undefined;
}

/** The part of an HTTP provider's config the client is built from. */
export interface HttpProviderConfig extends SecretConfig {
  base_url: string;
  timeouts: TimeoutsConfig;
}

/** What one provider's wire format asks of its HTTP client. */
export interface UpstreamWire {
  /** The headers that carry the secret, e.g. `{ authorization: 'Bearer …' }`; sent only when a key is configured. */
  authHeaders(secret: string): Record<string, string>;
  /** Headers sent with every request whatever the key, e.g. a version header. */
  headers?: Readonly<Record<string, string>>;
  readErrorBody: ErrorBodyReader;
  /** A credential fetched per call instead of (or beside) the configured key. */
  credentials?: CallCredentials;
}

/**
 * The client of an HTTP provider, its secret read from the environment variable its config names
 * (an unset one is a startup error, see `resolveSecret`). The secret goes only into the wire's
 * authentication headers and the redactor.
 */
export function createUpstreamHttpClient(
  providerType: string,
  config: HttpProviderConfig,
  env: Readonly<Record<string, string | undefined>>,
  wire: UpstreamWire,
): UpstreamHttpClient {
  const secret = resolveSecret(providerType, config, env);
  return new UpstreamHttpClient({
    providerType,
    providerName: config.name,
    baseUrl: config.base_url,
    secret,
    headers: { ...wire.headers, ...(secret === undefined ? {} : wire.authHeaders(secret)) },
    readErrorBody: wire.readErrorBody,
    timeouts: config.timeouts,
    ...(wire.credentials === undefined ? {} : { credentials: wire.credentials }),
  });
}

export interface FailureOptions {
  status?: number;
  clientMessage?: string;
  clientCode?: string;
  cause?: unknown;
}

/** How much of an error body is read: enough for any real error object, bounded against abuse. */
const ERROR_BODY_LIMIT = 64 * 1024;
/** How much of a non-streamed 200 body is read before giving up on it. */
const WHOLE_BODY_LIMIT = 32 * 1024 * 1024;
/** Upstream messages are cut to this length before they reach logs or clients. */
const MESSAGE_LIMIT = 1_000;

export class UpstreamHttpClient {
  readonly providerName: string;
  /** Strips the secret and the upstream's address from a text. */
  readonly redact: Redactor;
  readonly #label: string;
  readonly #pool: Pool;
  readonly #basePath: string;
  readonly #headers: Readonly<Record<string, string>>;
  /**
   * The headers of a call without client headers, as undici's flat list, per `accept`: built once,
   * so that a call only appends its request id (the same headers, in the same order of precedence,
   * as the merge in `#headersOf`).
   */
  readonly #headerLists: { readonly stream: readonly string[]; readonly whole: readonly string[] };
  readonly #readErrorBody: ErrorBodyReader;
  readonly #credentials: CallCredentials | undefined;

  constructor(options: UpstreamHttpClientOptions) {
    this.providerName = options.providerName;
    this.#label = `${options.providerType} provider "${options.providerName}"`;
    const redact = createRedactor(options.baseUrl, options.secret);
    const credentials = options.credentials;
    this.#credentials = credentials;
    this.redact = credentials === undefined ? redact : (text) => credentials.redact(redact(text));
    this.#headers = options.headers;
    this.#headerLists = { stream: this.#baseHeaderList(true), whole: this.#baseHeaderList(false) };
    this.#readErrorBody = options.readErrorBody;
    const url = new URL(options.baseUrl);
    this.#basePath = url.pathname.replace(/\/+$/, '');
    this.#pool = new Pool(url.origin, {
      connect: { timeout: options.timeouts.connect_ms },
      headersTimeout: options.timeouts.first_byte_ms,
      bodyTimeout: options.timeouts.idle_ms,
    });
  }

  /**
   * POSTs a JSON body to `path` (relative to the base address, query included) and resolves with
   * the answer once it is a 2xx. Anything else is thrown as `UpstreamError`, except an abort by
   * `signal`, which is rethrown as is: the caller gave up, the upstream did not fail.
   */
  async post(path: string, body: unknown, options: PostOptions): Promise<UpstreamResponse> {
    const json = body instanceof MultipartBody ? undefined : JSON.stringify(body);
    // Before the call: a credential that cannot be had is its own failure, not a transport one.
    const credential = this.#credentials === undefined ? undefined : await this.#credentials.headers({ path: this.#basePath + path, body: json });
    let response: Dispatcher.ResponseData;
    try {
      const request = body instanceof MultipartBody ? this.#multipart(body, options, credential) : { headers: this.#headersOf(options, credential), body: json };
      response = await this.#pool.request({ path: this.#basePath + path, method: 'POST', ...request, signal: options.signal });
    } catch (error) {
      if (options.signal.aborted) throw error;
      throw this.transportFailure(error);
    }
    if (response.statusCode >= 200 && response.statusCode < 300) {
      return { status: response.statusCode, mediaType: mediaTypeOf(response.headers['content-type']), body: response.body };
    }
    throw await this.#statusFailure(response.statusCode, async () => (await readBounded(response.body, ERROR_BODY_LIMIT)).text);
  }

  /**
   * `post` for an answer that is wanted whole (a non-streamed call): the body is collected as it
   * arrives (bounded), with no stream object between the socket and the text. Failures are those
   * of `post` followed by `readWholeBody`: `UpstreamError`s, or the abort of `signal` as is.
   */
  async postForWhole(path: string, body: unknown, options: PostOptions): Promise<WholeUpstreamResponse> {
    const json = body instanceof MultipartBody ? undefined : JSON.stringify(body);
    const credential = this.#credentials === undefined ? undefined : await this.#credentials.headers({ path: this.#basePath + path, body: json });
    let answer: CollectedAnswer;
    try {
      const request = body instanceof MultipartBody ? this.#multipart(body, options, credential) : { headers: this.#headersOf(options, credential), body: json };
      answer = await collect(this.#pool, { path: this.#basePath + path, method: 'POST', ...request }, options.signal);
    } catch (error) {
      if (options.signal.aborted) throw error;
      throw this.transportFailure(error);
    }
    const { status } = answer;
    if (status >= 200 && status < 300) {
      if (answer.failure !== undefined) {
        if (options.signal.aborted) throw answer.failure;
        throw this.transportFailure(answer.failure);
      }
      if (answer.truncated) throw this.failure('protocol', 'the answer body exceeded the size limit');
      return { status, mediaType: answer.mediaType, text: answer.text };
    }
    // As in `post`: an error body lost on the way only costs the detail.
    throw await this.#statusFailure(status, () => (answer.failure === undefined ? answer.text : ''));
  }

  /** An upload's body and headers: its own content type and length, the rest as `#headersOf`. */
  #multipart(body: MultipartBody, options: PostOptions, credential: Readonly<Record<string, string>> | undefined): { headers: Record<string, string>; body: Readable } {
    const headers = {
      accept: options.stream ? 'text/event-stream' : 'application/json',
      ...options.extraHeaders,
      ...this.#headers,
      ...credential,
      'content-type': body.contentType,
      'content-length': String(body.length),
      'x-request-id': options.requestId,
    };
    // A stream over the same chunks each time: a failover sends them again, not a copy.
    return { headers, body: Readable.from(body, { objectMode: false }) };
  }

  /**
   * The headers of a call: the call's `accept`, the client's headers, the provider's (which win),
   * the call's credential, the request id.
   */
  #headersOf(options: PostOptions, credential: Readonly<Record<string, string>> | undefined): string[] | Record<string, string> {
    if (options.extraHeaders === undefined) {
      const base = options.stream ? this.#headerLists.stream : this.#headerLists.whole;
      // The credential's header names are none of the provider's fixed ones (no duplicate in the list).
      return credential === undefined ? [...base, 'x-request-id', options.requestId] : [...base, ...Object.entries(credential).flat(), 'x-request-id', options.requestId];
    }
    return {
      'content-type': 'application/json',
      accept: options.stream ? 'text/event-stream' : 'application/json',
      ...options.extraHeaders,
      ...this.#headers,
      ...credential,
      'x-request-id': options.requestId,
    };
  }

  #baseHeaderList(stream: boolean): string[] {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json', ...this.#headers };
    // The call's own request id is appended last, in its place.
    delete headers['x-request-id'];
    return Object.entries(headers).flat();
  }

  /** Reads a whole 2xx body (bounded). Failures while reading are `UpstreamError`s of the matching kind. */
  async readWholeBody(response: UpstreamResponse, signal: AbortSignal): Promise<string> {
    let read: { text: string; truncated: boolean };
    try {
      read = await readBounded(response.body, WHOLE_BODY_LIMIT);
    } catch (error) {
      if (signal.aborted) throw error;
      throw this.transportFailure(error);
    }
    if (read.truncated) throw this.failure('protocol', 'the answer body exceeded the size limit');
    return read.text;
  }

  /** Reads a whole 2xx JSON body (bounded); a body that is not a JSON object is `protocol`. */
  async readJsonObject(response: UpstreamResponse, signal: AbortSignal): Promise<Record<string, unknown>> {
    return this.parseJsonObject(await this.readWholeBody(response, signal));
  }

  /** The JSON object a whole answer body holds; anything else is a `protocol` failure. */
  parseJsonObject(text: string): Record<string, unknown> {
    const parsed = parseJson(text);
    if (!parsed.ok || !isRecord(parsed.value)) throw this.failure('protocol', 'the answer body is not a JSON object');
    return parsed.value;
  }

  /** An `UpstreamError` for a failure at the transport level (connect, reset, timeout). */
  transportFailure(error: unknown): UpstreamError {
    const failure = classifyTransportFailure(error);
    return this.failure(failure.kind, failure.detail, { cause: error });
  }

  /** An `UpstreamError` whose message names this provider and is free of secrets. */
  failure(kind: UpstreamFailureKind, detail: string, options: FailureOptions = {}): UpstreamError {
    return new UpstreamError(kind, this.redact(`${this.#label}: ${detail}`), options);
  }

  /** The text, redacted and cut to a length fit for logs and clients. */
  safeText(text: string): string {
    return this.redact(text).slice(0, MESSAGE_LIMIT);
  }

  /** Closes the connection pool; waits for requests in flight. */
  async close(): Promise<void> {
    await this.#pool.close();
  }

  /** The failure of a non-2xx answer; `readBody` gives its (bounded) body text. */
  async #statusFailure(status: number, readBody: () => string | Promise<string>): Promise<UpstreamError> {
    let text = '';
    try {
      text = await readBody();
    } catch {
      // The status alone decides what happens next; a body lost on the way only costs the detail.
    }
    const reading = this.#readErrorBody(text);
    const safeMessage = reading.message === undefined ? undefined : this.safeText(reading.message);
    const statusName = reading.statusName === undefined ? '' : ` ${reading.statusName}`;
    const detail = `upstream answered HTTP ${status}${statusName}${safeMessage === undefined ? '' : `: ${safeMessage}`}`;
    // Our own upstream credentials were refused: nothing the client can fix or see.
    if (status === 401 || status === 403 || reading.refusesCredentials === true) {
      this.#credentials?.refused();
      return this.failure('credentials', detail, { status });
    }
    // Only a refusal of the request itself is the client's to read; 408, 429 and 5xx fail over
    // (UpstreamError.failoverable), so the client never sees their text.
    if (status < 400 || status >= 500 || status === 408 || status === 429) return this.failure('status', detail, { status });
    const clientMessage = reading.clientMessage === undefined ? safeMessage : this.safeText(reading.clientMessage);
    const clientCode = reading.clientCode;
    return this.failure('status', detail, { status, ...(clientMessage === undefined ? {} : { clientMessage }), ...(clientCode === undefined ? {} : { clientCode }) });
  }
}

function mediaTypeOf(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return (value ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? '';
}

/** Reads up to `limit` bytes; stops (destroying the body) once the limit is passed. */
async function readBounded(body: UpstreamBody, limit: number): Promise<{ text: string; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    chunks.push(buffer);
    size += buffer.length;
    if (size > limit) {
      body.destroy();
      return { text: Buffer.concat(chunks).subarray(0, limit).toString('utf8'), truncated: true };
    }
  }
  return { text: Buffer.concat(chunks).toString('utf8'), truncated: false };
}


/** What `collect` gathered: the status and body of the answer, or how reading its body failed. */
interface CollectedAnswer {
  status: number;
  mediaType: string;
  /** The body as UTF-8 text: whole, or its first bytes up to the limit when `truncated`. */
  text: string;
  truncated: boolean;
  /** Set when the body could not be read to its end (after the status arrived). */
  failure?: Error;
}

/** The error `collect` stops a body with once it has read enough of it; never seen outside. */
class BodyLimitReached extends Error {}

/**
 * Sends one request and gathers its answer's body, bounded: a 2xx up to `WHOLE_BODY_LIMIT`, any
 * other status up to `ERROR_BODY_LIMIT` (its error body), stopping the connection past the limit.
 * Rejects when no status arrived (connect, timeouts, an abort by `signal`: with its reason, as
 * `Pool.request` does); once a status arrived it resolves, with `failure` if the body was lost.
 */
function collect(pool: Pool, request: Dispatcher.DispatchOptions, signal: AbortSignal): Promise<CollectedAnswer> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    let status = 0;
    let mediaType = '';
    let limit = ERROR_BODY_LIMIT;
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    let settled = false;
    const onAbort = (): void => controller?.abort(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    const settle = (): void => {
      settled = true;
      signal.removeEventListener('abort', onAbort);
    };
    const text = (): string => {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      return (truncated ? body.subarray(0, limit) : body).toString('utf8');
    };
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(started) {
        controller = started;
        if (signal.aborted) started.abort(abortReason(signal));
      },
      onResponseStart(_controller, statusCode, headers) {
        // 1xx (e.g. 100 Continue) are interim: the answer's own status follows.
        if (statusCode < 200) return;
        status = statusCode;
        mediaType = mediaTypeOf(headers['content-type']);
        limit = statusCode < 300 ? WHOLE_BODY_LIMIT : ERROR_BODY_LIMIT;
      },
      onResponseData(current, chunk) {
        if (truncated) return;
        chunks.push(chunk);
        size += chunk.length;
        if (size > limit) {
          truncated = true;
          current.abort(new BodyLimitReached());
        }
      },
      onResponseEnd() {
        if (settled) return;
        settle();
        resolve({ status, mediaType, text: text(), truncated });
      },
      onResponseError(_controller, error) {
        if (settled) return;
        settle();
        if (status === 0) reject(error);
        else if (truncated) resolve({ status, mediaType, text: text(), truncated });
        else resolve({ status, mediaType, text: '', truncated, failure: error });
      },
    };
    pool.dispatch(request, handler);
  });
}

/** Why `signal` was aborted, as `Pool.request` rejects with it (whatever the aborter gave). */
function abortReason(signal: AbortSignal): Error {
  return (signal.reason as Error | undefined) ?? new errors.RequestAbortedError();
}