/**
 * OAuth2 access tokens from Application Default Credentials (docs/wire-protocols.md §19.2), by
 * Google's own auth library: gcloud's login, a workload identity's configuration, or the metadata
 * server of the machine the gateway runs on (and any credentials file that is not a service
 * account's key, service-account-token.ts being the path for those). The library keeps the token
 * and fetches another before it expires. It is imported when such a source is built (a provider
 * that needs it), not at start for a catalog without one (docs/architecture.md, "What a process
 * loads").
 *
 * A token that cannot be had is an `UpstreamError` of kind `credentials` (the router takes the
 * provider out), whose message says why, cut, without a token.
 */
import type { GoogleAuth } from 'google-auth-library';
import { UpstreamError } from '../provider.js';
import { soleLease, type CallCredentials, type CredentialLease } from '../shared/call-credentials.js';

/** The library's explanation is cut to this length. */
const REASON_LIMIT = 300;

export interface AdcTokenOptions {
  /** `vertex provider "<name>"`, for messages. */
  label: string;
  scopes: readonly string[];
  /** The longest wait for a token. */
  timeoutMs: number;
  /** A credentials file's content the library reads (not a service account's key); absent: it looks for credentials itself. */
  credentials?: Record<string, unknown>;
}

export class AdcTokenSource implements CallCredentials {
  readonly #options: AdcTokenOptions;
  /** The library's client, once the library is imported (a failed import fails each call's token). */
  readonly #auth: Promise<GoogleAuth>;
  /** The tokens handed out (the current one and the one before), kept out of any text that leaves. */
  #issued: readonly string[] = [];

  constructor(options: AdcTokenOptions) {
    this.#options = options;
    this.#auth = import('google-auth-library').then(
      ({ GoogleAuth }) => new GoogleAuth({ scopes: [...options.scopes], ...(options.credentials === undefined ? {} : { credentials: options.credentials }) }),
    );
    // Met by the first call's `headers`, which reports it as a credentials failure.
    this.#auth.catch(() => undefined);
  }

  async headers(): Promise<Readonly<Record<string, string>>> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no token within ${this.#options.timeoutMs} ms`)), this.#options.timeoutMs);
    });
    let token: string | null | undefined;
    try {
      token = await Promise.race([this.#auth.then((auth) => auth.getAccessToken()), timeout]);
    } catch (error) {
      const reason = error instanceof Error ? error.message.split(/\r?\n/, 1)[0]!.slice(0, REASON_LIMIT) : 'unknown failure';
      throw this.#failure(`Application Default Credentials gave no token (${reason})`, error);
    } finally {
      clearTimeout(timer);
    }
    if (typeof token !== 'string' || token === '') throw this.#failure('Application Default Credentials gave an empty token');
    if (!this.#issued.includes(token)) this.#issued = [...this.#issued.slice(-1), token];
    return { authorization: `Bearer ${token}` };
  }

  /** One call's token; a refused one is forgotten (see `refused`). */
  async lease(): Promise<CredentialLease> {
    return soleLease(await this.headers(), () => this.refused());
  }

  refused(): void {
    // The library keeps its token until near expiry; a refused one is forgotten so that the next call fetches another.
    void this.#auth.then((auth) => auth.getClient()).then(
      (client) => {
        client.credentials = {};
      },
      () => undefined,
    );
  }

  redact(text: string): string {
    let result = text;
    for (const token of this.#issued) if (result.includes(token)) result = result.split(token).join('[redacted]');
    return result;
  }

  async close(): Promise<void> {
    // The library holds no pool of its own to release.
  }

  #failure(detail: string, cause?: unknown): UpstreamError {
    return new UpstreamError('credentials', this.redact(`${this.#options.label}: ${detail}`), cause === undefined ? {} : { cause });
  }
}
