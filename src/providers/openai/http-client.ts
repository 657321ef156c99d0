/**
 * The HTTP side of the OpenAI provider: one keep-alive connection pool per provider, the request
 * headers, and the mapping of everything that can go wrong before a 200 into `UpstreamError`, and
 * after it into a text safe to show the client.
 * Status handling follows https://platform.openai.com/docs/guides/error-codes.
 */
import { Pool, type Dispatcher } from 'undici';
import type { TimeoutsConfig } from '../../config/schema.js';
import { isRecord, parseJson } from '../../lib/json-value.js';
import { SseDecodeError } from '../../lib/sse-decoder.js';
import { UpstreamError, type UpstreamFailureKind } from '../provider.js';
import { createRedactor, type Redactor } from './redaction.js';

/** The body of an accepted (2xx) upstream answer. */
export type UpstreamBody = Dispatcher.ResponseData['body'];

export interface UpstreamResponse {
  status: number;
  /** The media type, lower-cased, without parameters ('' when absent). */
  mediaType: string;
  body: UpstreamBody;
}

export interface PostOptions {
  signal: AbortSignal;
  requestId: string;
  /** Whether an SSE stream is asked for (sets `accept`). */
  stream: boolean;
}

export interface UpstreamHttpClientOptions {
  providerName: string;
  /** Base address including the version segment, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  secret: string | undefined;
  timeouts: TimeoutsConfig;
}

/** How much of an error body is read: enough for any real error object, bounded against abuse. */
const ERROR_BODY_LIMIT = 64 * 1024;
/** How much of a non-streamed 200 body is read before giving up on it. */
const JSON_BODY_LIMIT = 32 * 1024 * 1024;
/** Upstream messages are cut to this length before they reach logs or clients. */
const MESSAGE_LIMIT = 1_000;

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const PROTOCOL_CODE_PREFIXES = ['HPE_', 'UND_ERR_HEADERS_OVERFLOW', 'UND_ERR_RES_', 'UND_ERR_INFO'];

export class UpstreamHttpClient {
  readonly providerName: string;
  /** Strips the secret and the upstream's address from a text. */
  readonly redact: Redactor;
  readonly #pool: Pool;
  readonly #basePath: string;
  readonly #secret: string | undefined;

  constructor(options: UpstreamHttpClientOptions) {
    this.providerName = options.providerName;
    this.redact = createRedactor(options.baseUrl, options.secret);
    this.#secret = options.secret;
    const url = new URL(options.baseUrl);
    this.#basePath = url.pathname.replace(/\/+$/, '');
    this.#pool = new Pool(url.origin, {
      connect: { timeout: options.timeouts.connect_ms },
      headersTimeout: options.timeouts.first_byte_ms,
      bodyTimeout: options.timeouts.idle_ms,
    });
  }

  /**
   * POSTs a JSON body to `path` (relative to the base address) and resolves with the answer once
   * it is a 2xx. Anything else is thrown as `UpstreamError`, except an abort by `signal`, which is
   * rethrown as is: the caller gave up, the upstream did not fail.
   */
  async post(path: string, body: unknown, options: PostOptions): Promise<UpstreamResponse> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: options.stream ? 'text/event-stream' : 'application/json',
      'x-request-id': options.requestId,
    };
    if (this.#secret !== undefined) headers.authorization = `Bearer ${this.#secret}`;

    let response: Dispatcher.ResponseData;
    try {
      response = await this.#pool.request({
        path: this.#basePath + path,
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: options.signal,
      });
    } catch (error) {
      if (options.signal.aborted) throw error;
      throw this.transportFailure(error);
    }

    if (response.statusCode >= 200 && response.statusCode < 300) {
      return { status: response.statusCode, mediaType: mediaTypeOf(response.headers['content-type']), body: response.body };
    }
    throw await this.#statusFailure(response);
  }

  /**
   * Reads a whole 2xx JSON body (bounded). Failures while reading are `UpstreamError`s of the
   * matching kind; a body that is not a JSON object is `protocol`.
   */
  async readJsonObject(response: UpstreamResponse, signal: AbortSignal): Promise<Record<string, unknown>> {
    let text: string;
    try {
      const read = await readBounded(response.body, JSON_BODY_LIMIT);
      if (read.truncated) throw this.failure('protocol', 'the answer body exceeded the size limit');
      text = read.text;
    } catch (error) {
      if (error instanceof UpstreamError || signal.aborted) throw error;
      throw this.transportFailure(error);
    }
    const parsed = parseJson(text);
    if (!parsed.ok || !isRecord(parsed.value)) throw this.failure('protocol', 'the answer body is not a JSON object');
    return parsed.value;
  }

  /** An `UpstreamError` for a failure at the transport level (connect, reset, timeout). */
  transportFailure(error: unknown): UpstreamError {
    const code = errorCode(error);
    let kind: UpstreamFailureKind = 'connect';
    if (code !== undefined && TIMEOUT_CODES.has(code)) kind = 'timeout';
    else if (code !== undefined && PROTOCOL_CODE_PREFIXES.some((prefix) => code.startsWith(prefix))) kind = 'protocol';
    const what = kind === 'timeout' ? 'the upstream did not answer in time' : kind === 'protocol' ? 'the upstream answered something unreadable' : 'could not reach the upstream';
    return this.failure(kind, `${what} (${code ?? 'unknown error'})`, { cause: error });
  }

  /** An `UpstreamError` whose message names this provider and is free of secrets. */
  failure(kind: UpstreamFailureKind, detail: string, options: { status?: number; clientMessage?: string; cause?: unknown } = {}): UpstreamError {
    return new UpstreamError(kind, this.redact(`openai provider "${this.providerName}": ${detail}`), options);
  }

  /** Closes the connection pool; waits for requests in flight. */
  async close(): Promise<void> {
    await this.#pool.close();
  }

  async #statusFailure(response: Dispatcher.ResponseData): Promise<UpstreamError> {
    const status = response.statusCode;
    let text = '';
    try {
      text = (await readBounded(response.body, ERROR_BODY_LIMIT)).text;
    } catch {
      // The status alone decides what happens next; a body lost on the way only costs the detail.
    }
    const upstreamMessage = errorMessageOf(text);
    const safeMessage = upstreamMessage === undefined ? undefined : this.redact(upstreamMessage).slice(0, MESSAGE_LIMIT);
    const detail = `upstream answered HTTP ${status}${safeMessage === undefined ? '' : `: ${safeMessage}`}`;
    // A 401/403 means our own upstream credentials were refused: nothing the client can fix or see.
    if (status === 401 || status === 403) return this.failure('credentials', detail, { status });
    const clientMessage = status >= 400 && status < 500 ? safeMessage : undefined;
    return this.failure('status', detail, { status, ...(clientMessage === undefined ? {} : { clientMessage }) });
  }
}

/**
 * A text, safe to show the client, for a failure while reading an accepted stream (after the 200).
 */
export function describeStreamFailure(error: unknown): string {
  if (error instanceof SseDecodeError) return 'The upstream sent a stream event larger than allowed.';
  const code = errorCode(error);
  if (code === 'UND_ERR_BODY_TIMEOUT') return 'The upstream stopped sending data (idle timeout).';
  if (code === 'UND_ERR_ABORTED' || (error instanceof Error && error.name === 'AbortError')) return 'The upstream request was cancelled.';
  return 'The upstream connection was lost mid-stream.';
}

/** The `error.message` of an OpenAI-style error body, when the text is one. */
export function errorMessageOf(text: string): string | undefined {
  const parsed = parseJson(text);
  if (!parsed.ok || !isRecord(parsed.value)) return undefined;
  const error = parsed.value.error;
  if (isRecord(error) && typeof error.message === 'string') return error.message;
  if (typeof error === 'string') return error;
  return undefined;
}

function errorCode(error: unknown): string | undefined {
  if (!isRecord(error)) return undefined;
  if (typeof error.code === 'string') return error.code;
  // Happy-eyeballs connects fail with an AggregateError of one error per address.
  if (error instanceof AggregateError) {
    for (const inner of error.errors) {
      const innerCode = errorCode(inner);
      if (innerCode !== undefined) return innerCode;
    }
  }
  return error.cause === undefined || error.cause === error ? undefined : errorCode(error.cause);
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
    if (size > limit) return { text: Buffer.concat(chunks).subarray(0, limit).toString('utf8'), truncated: true };
  }
  return { text: Buffer.concat(chunks).toString('utf8'), truncated: false };
}
