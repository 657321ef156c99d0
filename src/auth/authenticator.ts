/**
 * Turns a bearer token into the key and account it belongs to. Lookups go through a small
 * in-process cache keyed by the token's SHA-256 hash, so the hot path does no I/O for a known key.
 * The cache is emptied at once by `invalidate()` (a disable in this process) and within
 * `revisionPollMs` of a change made by any other process (the store's revision counter).
 */
import type { ApiKeyRecord, AccountRecord, KeyWithAccount, Store } from '../store/store.js';
import { hashesEqual, hashKeySecret, KEY_PREFIX } from './key-secret.js';

export interface AuthenticatedKey {
  key: ApiKeyRecord;
  account: AccountRecord;
}

export interface AuthenticatorOptions {
  store: Store;
  now?: () => number;
  /** How long a found key stays cached without a revision change. */
  ttlMs?: number;
  /** How long an unknown token stays cached as unknown (keeps a flood of bad keys off the database). */
  negativeTtlMs?: number;
  maxEntries?: number;
}

interface CacheEntry {
  value: KeyWithAccount | null;
  expiresAt: number;
}

export class Authenticator {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly store: Store;
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly negativeTtlMs: number;
  private readonly maxEntries: number;
  private knownRevision: number | undefined;
  /** Bumped by every invalidation, so a lookup that raced with one is not cached. */
  private generation = 0;

  constructor(options: AuthenticatorOptions) {
    this.store = options.store;
    this.now = options.now ?? Date.now;
    this.ttlMs = options.ttlMs ?? 60_000;
    this.negativeTtlMs = options.negativeTtlMs ?? 1_000;
    this.maxEntries = options.maxEntries ?? 10_000;
  }

  /** The key for an `Authorization` header value, or null when it must be refused (401). */
  async authenticate(authorization: string | undefined): Promise<AuthenticatedKey | null> {
    const token = bearerToken(authorization);
    if (token === null) return null;
    const hash = hashKeySecret(token);
    const now = this.now();
    let entry = this.cache.get(hash);
    if (entry === undefined || entry.expiresAt <= now) {
      const generation = this.generation;
      const found = (await this.store.findKeyByHash(hash)) ?? null;
      entry = { value: found, expiresAt: now + (found === null ? this.negativeTtlMs : this.ttlMs) };
      // A change announced while we read may have come after our read: use the answer for this
      // request, but do not cache it, or a just-disabled key could be served for a whole TTL.
      if (generation === this.generation) {
        if (this.cache.size >= this.maxEntries) this.evictUnknownTokens();
        this.cache.set(hash, entry);
      }
    }
    const found = entry.value;
    if (found === null || !hashesEqual(found.key.hash, hash)) return null;
    if (found.key.disabled || found.account.disabled) return null;
    if (found.key.expiresAt !== null && found.key.expiresAt.getTime() <= now) return null;
    return found;
  }

  /** Forgets every cached key: call after any change to keys or accounts in this process. */
  invalidate(): void {
    this.generation += 1;
    this.cache.clear();
  }

  /**
   * Makes room without dropping the keys that work: unknown tokens (a flood of bad keys) go first,
   * and only when they are not the problem is the whole cache cleared.
   */
  private evictUnknownTokens(): void {
    for (const [hash, cached] of this.cache) if (cached.value === null) this.cache.delete(hash);
    if (this.cache.size >= this.maxEntries) this.cache.clear();
  }

  /** Empties the cache when another process changed keys or accounts since the last check. */
  async checkRevision(): Promise<void> {
    const revision = await this.store.revision();
    if (this.knownRevision !== undefined && revision !== this.knownRevision) this.invalidate();
    this.knownRevision = revision;
  }
}

function bearerToken(authorization: string | undefined): string | null {
  if (authorization === undefined) return null;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
  const token = match?.[1];
  if (token === undefined || !token.startsWith(KEY_PREFIX) || token.length > 200) return null;
  return token;
}
