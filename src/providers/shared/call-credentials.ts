/**
 * How a credential chosen per call (an Entra ID token, one key of a pool) reaches the HTTP client
 * (upstream-http.ts), and how the upstream's verdict on it goes back: the types, and the lease of a
 * credential without siblings; the client and the credentials that implement it import this
 * module, not each other.
 */

/**
 * A credential that is not fixed at startup: a token that expires and is fetched again, or one key
 * of a pool (key-pool.ts). A lease is asked for before each call; a failure to get one rejects with
 * an `UpstreamError` (kind `credentials` when no call can succeed, so that the router takes the
 * provider out) whose message holds no secret.
 */
export interface CallCredentials {
  /**
   * The credential for the next call. `request` is the call itself, for a credential that signs it
   * (AWS's SigV4, docs/wire-protocols.md §18); the others ignore it.
   */
  lease(request: CallRequest): Promise<CredentialLease>;
  /** Strips what the credentials gave away (their tokens, keys, own secrets) from a text. */
  redact(text: string): string;
}

/** The call a credential is asked for: its path (base path included) and its JSON body (none for an upload). */
export interface CallRequest {
  path: string;
  body: string | undefined;
}

/** What the upstream said about a leased credential: it refused it (401, 403), or it limited it (429). */
export interface CredentialVerdict {
  outcome: 'refused' | 'limited';
  status: number;
  /** With `limited`: how long the upstream asked to wait (its `retry-after-ms` or `Retry-After`), when it said. */
  retryAfterMs?: number;
}

/** One call's credential. */
export interface CredentialLease {
  /** The headers that carry it, e.g. `{ authorization: 'Bearer …' }`. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The upstream refused or limited the call sent with this credential. Returns the lease of
   * another credential to send the same call again with at once, or undefined when none is left
   * (the call then fails with the upstream's answer).
   */
  failed(verdict: CredentialVerdict): CredentialLease | undefined;
}

/**
 * The lease of a credential that has no sibling (one token, one signature): a refusal is reported
 * to `onRefused`, and the call is not sent again.
 */
export function soleLease(headers: Readonly<Record<string, string>>, onRefused: () => void): CredentialLease {
  return {
    headers,
    failed: (verdict) => {
      if (verdict.outcome === 'refused') onRefused();
      return undefined;
    },
  };
}
