/**
 * Hashes of tokens the store did not know, remembered briefly so a repeated bad token does not
 * cost a database query each time. Bounded twice: at most `maxEntries` (the least recently seen
 * is dropped first, so a flood of distinct tokens cannot grow it) and each for `ttlMs`. The owner
 * clears it whenever keys change anywhere, so a key created just after its token was refused
 * works as soon as the change is seen.
 */
export interface UnknownTokensOptions {
  maxEntries: number;
  ttlMs: number;
  now: () => number;
}

export class UnknownTokens {
  /** Insertion order is recency order: a hit moves its entry to the end. */
  private readonly expiries = new Map<string, number>();

  constructor(private readonly options: UnknownTokensOptions) {}

  get size(): number {
    return this.expiries.size;
  }

  has(hash: string): boolean {
    const expiresAt = this.expiries.get(hash);
    if (expiresAt === undefined) return false;
    this.expiries.delete(hash);
    if (expiresAt <= this.options.now()) return false;
    this.expiries.set(hash, expiresAt);
    return true;
  }

  add(hash: string): void {
    this.expiries.delete(hash);
    while (this.expiries.size >= this.options.maxEntries) {
      const oldest = this.expiries.keys().next();
      if (oldest.done === true) break;
      this.expiries.delete(oldest.value);
    }
    this.expiries.set(hash, this.options.now() + this.options.ttlMs);
  }

  clear(): void {
    this.expiries.clear();
  }
}
