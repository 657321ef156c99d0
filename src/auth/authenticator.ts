/**
 * Turns a bearer token into the key and account it belongs to. Lookups go through a small
 * in-process cache keyed by the token's SHA-256 hash, so the hot path does no I/O for a known key,
 * and a bounded cache of unknown tokens, so a repeated bad key costs no query either. Both are
 * emptied at once by `invalidate()` (a change in this process, or announced over Redis) and within
 * `revisionPollMs` of a change made by any other process (the store's revision counter).
 */
import type { ApiKeyRecord, AccountRecord, KeyBudget, KeyWithAccount, AccountStore } from '../store/store.js';
import { hashesEqual, hashKeySecret, KEY_PREFIX } from './key-secret.js';
import { UnknownTokens } from './unknown-tokens.js';

export interface AuthenticatedKey {
  key: ApiKeyRecord;
  account: AccountRecord;
}

export interface AuthenticatorOptions {
  store: AccountStore;
  now?: () => number;
  /** How long a found key stays cached without a revision change. */
  ttlMs?: number;
  /** Most keys cached at once. */
  maxEntries?: number;
  /** How long an unknown token stays cached as unknown (keeps a repeated bad key off the database). */
  negativeTtlMs?: number;
  /** Most unknown tokens cached at once (the least recently seen go first). */
  maxUnknownTokens?: number;
}

/**
 * What a request's client is allowed (see http/auth-guards.ts: failed authentications per client
 * address, and this process's budget of database lookups). Never consulted for a usable key found
 * in the cache.
 */
export interface LookupGuard {
  /** Before a database lookup; throws to refuse the request without one. */
  beforeLookup(): Promise<void>;
  /** The token is no usable key: counts the failure; throws to answer it otherwise than with a 401. */
  failed(): Promise<void>;
}

interface CacheEntry {
  value: KeyWithAccount;
  expiresAt: number;
}

export class Authenticator {
  private readonly cache = new Map<string, CacheEntry>();
  /** The same entries by key id, for what the request path asks about a key it has authenticated. */
  private readonly byKeyId = new Map<string, CacheEntry>();
  private readonly unknownTokens: UnknownTokens;
  /** Lookups running now, by token hash. */
  private readonly lookups = new Map<string, Promise<KeyWithAccount | null>>();
  private readonly store: AccountStore;
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private knownRevision: number | undefined;
  /** Bumped by every invalidation, so a lookup that raced with one is not cached. */
  private generation = 0;

  constructor(options: AuthenticatorOptions) {
    this.store = options.store;
    this.now = options.now ?? Date.now;
    this.ttlMs = options.ttlMs ?? 60_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.unknownTokens = new UnknownTokens({ maxEntries: options.maxUnknownTokens ?? 10_000, ttlMs: options.negativeTtlMs ?? 10_000, now: this.now });
  }

  /** How many unknown tokens are cached (never more than `maxUnknownTokens`). */
  get unknownTokenCount(): number {
    return this.unknownTokens.size;
  }

  /**
   * The key for an `Authorization` header value, or null when it must be refused (401). A usable
   * key found in the cache answers at once; any other well-formed token passes `guard` before a
   * database lookup, and is reported to it when it is no usable key (a token already known to be
   * unknown, disabled or expired costs no lookup).
   */
  async authenticate(authorization: string | undefined, guard?: LookupGuard): Promise<AuthenticatedKey | null> {
    const token = bearerToken(authorization);
    if (token === null) return null;
    const hash = hashKeySecret(token);
    const now = this.now();
    let entry = this.cache.get(hash);
    if (entry !== undefined && entry.expiresAt <= now) entry = undefined;
    if (entry !== undefined) {
      const usable = usableKey(entry.value, hash, now);
      if (usable !== null) return usable;
    }
    // Requests that arrive together with a token not cached yet share one lookup (a burst on a new
    // key is one query). If the first one's guard refuses it, the others try on their own.
    const running = entry === undefined ? this.lookups.get(hash) : undefined;
    const shared = running === undefined ? undefined : await running.catch(() => undefined);
    let found: KeyWithAccount | null;
    if (shared !== undefined) found = shared;
    // Cached, but not usable (disabled, expired): a failure, counted without a lookup.
    else if (entry !== undefined) found = entry.value;
    // Known to be unknown: a failure too, and no query.
    else if (this.unknownTokens.has(hash)) found = null;
    else found = await this.sharedLookUp(hash, now, guard);
    const usable = found === null ? null : usableKey(found, hash, now);
    if (usable === null) await guard?.failed();
    return usable;
  }

  /** Asks `guard` and looks up `hash`, as the one lookup other requests for it wait on meanwhile. */
  private sharedLookUp(hash: string, now: number, guard: LookupGuard | undefined): Promise<KeyWithAccount | null> {
    const lookup = (async () => {
      await guard?.beforeLookup();
      return this.lookUp(hash, now);
    })().finally(() => this.lookups.delete(hash));
    this.lookups.set(hash, lookup);
    return lookup;
  }

  private async lookUp(hash: string, now: number): Promise<KeyWithAccount | null> {
    const generation = this.generation;
    const found = (await this.store.findKeyByHash(hash)) ?? null;
    // A change announced while we read may have come after our read: use the answer for this
    // request, but do not cache it, or a just-disabled (or just-created) key could be misread for
    // a whole TTL.
    if (generation !== this.generation) return found;
    if (found === null) {
      this.unknownTokens.add(hash);
    } else {
      // Only real keys land here, so it outgrows its cap only with that many keys in use.
      if (this.cache.size >= this.maxEntries) this.clearKeys();
      const entry = { value: found, expiresAt: now + this.ttlMs };
      this.cache.set(hash, entry);
      this.byKeyId.set(found.key.id, entry);
    }
    return found;
  }

  /**
   * The budget of a key (undefined: none) as cached when it was authenticated, so that opening its
   * hold costs no lookup; read from the store when the cache has let it go since. A budget changed
   * elsewhere reaches the cache as any key change does (at once with Redis, else within a second),
   * and the hold's guard reads the budget's amount from the database anyway.
   */
  async keyBudget(keyId: string): Promise<KeyBudget | undefined> {
    const entry = this.byKeyId.get(keyId);
    if (entry !== undefined && entry.expiresAt > this.now()) return entry.value.key.budget;
    return (await this.store.findKey(keyId))?.budget;
  }

  /** Forgets every cached key and unknown token: call after any change to keys or accounts. */
  invalidate(): void {
    this.generation += 1;
    this.clearKeys();
    this.unknownTokens.clear();
  }

  private clearKeys(): void {
    this.cache.clear();
    this.byKeyId.clear();
  }

  /** Empties the caches when another process changed keys or accounts since the last check. */
  async checkRevision(): Promise<void> {
    const revision = await this.store.revision();
    if (this.knownRevision !== undefined && revision !== this.knownRevision) this.invalidate();
    this.knownRevision = revision;
  }
}

function usableKey(found: KeyWithAccount, hash: string, now: number): AuthenticatedKey | null {
  if (!hashesEqual(found.key.hash, hash)) return null;
  if (found.key.disabled || found.key.deletedAt !== undefined || found.account.disabled) return null;
  if (found.key.expiresAt !== null && found.key.expiresAt.getTime() <= now) return null;
  return found;
}

function bearerToken(authorization: string | undefined): string | null {
  if (authorization === undefined) return null;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
  const token = match?.[1];
  if (token === undefined || !token.startsWith(KEY_PREFIX) || token.length > 200) return null;
  return token;
}
