/**
 * Bearer tokens from an OAuth2 token endpoint, as the providers whose upstream takes no fixed key
 * get them: Microsoft Entra ID's client credentials (azure/entra-token.ts, docs/wire-protocols.md
 * §17.2) and a Google service account's signed JWT (vertex/service-account-token.ts, §19.2). Each
 * says what it POSTs (an `application/x-www-form-urlencoded` form, built anew per fetch); the
 * answer is the same for both: `{"access_token":…,"expires_in":<seconds>,…}`, or a refusal
 * `{"error":…,"error_description":…}`.
 *
 * The token is kept and used until a margin before it expires (a tenth of its life, at most five
 * minutes), then fetched again; callers that need one meanwhile share the one fetch in flight. A
 * call that is already under way keeps its token: the upstream checks it when the call arrives, so
 * a stream outlives the token it began with. A token the upstream refuses (401, 403) is dropped.
 *
 * A fetch that fails (refused, unreachable, silent past its own timeout, an answer without a
 * token) is an `UpstreamError` of kind `credentials`: no call of the provider can succeed without a
 * token, so the router takes the whole provider out of rotation (routing/router.ts) and the client
 * gets the gateway's 503 when no target is left. Its message says why (the endpoint's `error` and
 * the first line of its `error_description`) and holds neither the secret, a token, nor the
 * endpoint's address.
 */
import { Pool } from 'undici';
import type { TimeoutsConfig } from '../../config/schema.js';
import { isRecord, parseJson } from '../../lib/json-value.js';
import { UpstreamError } from '../provider.js';
import { createRedactor, type Redactor } from './redaction.js';
import { classifyTransportFailure } from './transport-failure.js';
import { soleLease, type CallCredentials, type CredentialLease } from './call-credentials.js';
import { RenewingValue, type Renewable } from './renewing-value.js';

/** The margin before expiry at which a token is renewed: a tenth of its life, at most five minutes. */
export function renewalMargin(lifeMs: number): number {
  return Math.min(5 * 60_000, Math.floor(lifeMs / 10));
}

/** How much of the token endpoint's answer is read: a token answer is a few kilobytes. */
const ANSWER_LIMIT = 256 * 1024;
/** The endpoint's own explanation is cut to this length (its description runs on with trace ids). */
const REASON_LIMIT = 300;

export interface OAuthTokenSourceOptions {
  /** `azure provider "<name>"`, for messages. */
  label: string;
  /** The endpoint as messages name it: `the Entra ID token endpoint`. */
  endpointName: string;
  /** What the endpoint refuses, as messages name it: `the client credentials`. */
  grantName: string;
  /** The endpoint's address (path and query included). */
  tokenUrl: string;
  /** The form of one token request; called per fetch. */
  form: () => URLSearchParams;
  /** A secret the form carries, kept out of every message (a client secret). */
  secret?: string;
  /** The longest wait for the endpoint's answer, apart from the model calls' timeouts. */
  timeoutMs: number;
  timeouts: TimeoutsConfig;
  /** The clock a token's expiry is read on (ms since epoch); the system clock by default. */
  now?: () => number;
}

export class OAuthTokenSource implements CallCredentials {
  readonly #options: OAuthTokenSourceOptions;
  readonly #now: () => number;
  readonly #pool: Pool;
  readonly #path: string;
  readonly #redactAddress: Redactor;
  readonly #token: RenewingValue<string>;
  /** The tokens still in use (the current one and the one before, which a running call may hold), kept out of any text that leaves. */
  #issued: readonly string[] = [];

  constructor(options: OAuthTokenSourceOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#token = new RenewingValue(() => this.#fetch(), this.#now);
    const url = new URL(options.tokenUrl);
    this.#path = `${url.pathname}${url.search}`;
    this.#redactAddress = createRedactor(options.tokenUrl, options.secret);
    // A token answer is small and quick: its own bound, not the model calls' minutes.
    const timeout = options.timeoutMs;
    this.#pool = new Pool(url.origin, {
      connect: { timeout: Math.min(options.timeouts.connect_ms, timeout) },
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
  }

  async headers(): Promise<Readonly<Record<string, string>>> {
    return { authorization: `Bearer ${await this.token()}` };
  }

  /** A token valid beyond the renewal margin: the one held, or the one fetch in flight. */
  token(): Promise<string> {
    return this.#token.get();
  }

  /** One call's token. A refused one is dropped; there is no sibling to send the call again with. */
  async lease(): Promise<CredentialLease> {
    return soleLease(await this.headers(), () => this.refused());
  }

  refused(): void {
    this.#token.drop();
  }

  redact(text: string): string {
    let result = this.#redactAddress(text);
    for (const token of this.#issued) if (result.includes(token)) result = result.split(token).join('[redacted]');
    return result;
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }

  async #fetch(): Promise<Renewable<string>> {
    const askedAt = this.#now();
    const { endpointName, grantName } = this.#options;
    let status: number;
    let text: string;
    try {
      const response = await this.#pool.request({
        path: this.#path,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: this.#options.form().toString(),
      });
      status = response.statusCode;
      text = await readLimited(response.body);
    } catch (error) {
      const failure = classifyTransportFailure(error);
      const reason = failure.kind === 'timeout' ? `no answer within ${this.#options.timeoutMs} ms` : failure.detail;
      throw this.#failure(`could not reach ${endpointName} (${reason})`, undefined, error);
    }
    const parsed = parseJson(text);
    const answer = parsed.ok && isRecord(parsed.value) ? parsed.value : undefined;
    if (status !== 200) throw this.#failure(`${endpointName} refused ${grantName}: HTTP ${status}${refusalOf(answer)}`, status);
    const token = answer?.access_token;
    const lifeSeconds = Number(answer?.expires_in);
    if (typeof token !== 'string' || token === '' || !Number.isFinite(lifeSeconds) || lifeSeconds <= 0) {
      throw this.#failure(`${endpointName} answered without an access_token and expires_in`, status);
    }
    this.#issued = [...this.#issued.slice(-1), token];
    const lifeMs = lifeSeconds * 1_000;
    return { value: token, renewAt: askedAt + lifeMs - renewalMargin(lifeMs) };
  }

  #failure(detail: string, status: number | undefined, cause?: unknown): UpstreamError {
    return new UpstreamError('credentials', this.redact(`${this.#options.label}: ${detail}`), { ...(status === undefined ? {} : { status }), ...(cause === undefined ? {} : { cause }) });
  }
}

/** ` invalid_client: AADSTS7000215: Invalid client secret provided.…`: the endpoint's reason, cut. */
function refusalOf(answer: Record<string, unknown> | undefined): string {
  if (answer === undefined) return '';
  const code = typeof answer.error === 'string' ? answer.error : '';
  const description = typeof answer.error_description === 'string' ? (answer.error_description.split(/\r?\n/, 1)[0] ?? '') : '';
  const reason = [code, description].filter((part) => part !== '').join(': ');
  return reason === '' ? '' : ` ${reason.slice(0, REASON_LIMIT)}`;
}

async function readLimited(body: AsyncIterable<Buffer | Uint8Array> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    chunks.push(buffer);
    size += buffer.length;
    if (size > ANSWER_LIMIT) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}
