/**
 * A pool of upstream keys for one provider (docs/architecture.md, "Pools of upstream keys"): each
 * call leases the next usable key in turn (round robin), and the upstream's verdict on it decides
 * what the key does next. A key refused (401, 403, or a body that says the key is bad) leaves the
 * pool until the process restarts, and its refusal is told once; a key limited (429) cools down for
 * the upstream's `retry-after-ms` or `Retry-After` (a default when it gives none) while its
 * siblings carry on. Either way the same call is sent again at once with a sibling not yet tried
 * in it, so the client sees neither answer while a usable key remains.
 *
 * When no key is usable, a lease fails: with kind `credentials` when every key was refused (the
 * router takes the provider out), else as the upstream's 429 (failed over like one). Keys are named
 * in states, events and messages by their catalog name; their secrets only reach the headers and
 * the redactor.
 */
import type { UpstreamKeyEvent, UpstreamKeys, UpstreamKeyView } from '../provider.js';
import { UpstreamError } from '../provider.js';
import type { CallCredentials, CredentialLease, CredentialVerdict } from './call-credentials.js';

/** How long a key cools down after a 429 that says nothing of when to come back. */
export const DEFAULT_COOLDOWN_MS = 30_000;
/** The longest cool-down a `Retry-After` can ask for: past it the key is tried again anyway. */
export const MAX_COOLDOWN_MS = 3_600_000;

export interface PooledKey {
  /** The key's name in the catalog: what operators see. */
  name: string;
  secret: string;
}

export interface KeyPoolOptions {
  /** `openai provider "main"`: how messages name the provider. */
  label: string;
  keys: readonly PooledKey[];
  /** The headers that carry a key, e.g. `{ authorization: 'Bearer …' }`. */
  headersOf: (secret: string) => Record<string, string>;
  /** The clock (ms since epoch); the system clock by default. */
  now?: () => number;
}

interface KeyState {
  readonly name: string;
  readonly headers: Readonly<Record<string, string>>;
  refused: boolean;
  coolingUntil: number;
  calls: number;
}

export class KeyPool implements CallCredentials, UpstreamKeys {
  readonly #label: string;
  readonly #keys: readonly KeyState[];
  readonly #secrets: readonly string[];
  readonly #now: () => number;
  readonly #listeners: Array<(event: UpstreamKeyEvent) => void> = [];
  /** Where the next round robin starts. */
  #next = 0;

  constructor(options: KeyPoolOptions) {
    if (options.keys.length === 0) throw new Error(`${options.label}: a key pool needs at least one key`);
    this.#label = options.label;
    this.#keys = options.keys.map((key) => ({ name: key.name, headers: options.headersOf(key.secret), refused: false, coolingUntil: 0, calls: 0 }));
    // Longest first, so that a key that contains another is replaced whole.
    this.#secrets = options.keys.map((key) => key.secret).filter((secret) => secret !== '').sort((left, right) => right.length - left.length);
    this.#now = options.now ?? Date.now;
  }

  lease(): Promise<CredentialLease> {
    try {
      return Promise.resolve(this.#leaseFor(new Set()));
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  redact(text: string): string {
    let result = text;
    for (const secret of this.#secrets) if (result.includes(secret)) result = result.split(secret).join('[redacted]');
    return result;
  }

  list(): UpstreamKeyView[] {
    const now = this.#now();
    return this.#keys.map((key) => {
      const cooling = !key.refused && key.coolingUntil > now;
      return { name: key.name, state: key.refused ? 'refused' : cooling ? 'cooling' : 'ok', coolingUntil: cooling ? key.coolingUntil : null, calls: key.calls };
    });
  }

  onEvent(listener: (event: UpstreamKeyEvent) => void): void {
    this.#listeners.push(listener);
  }

  /** The next usable key not tried by this call yet; throws when there is none. */
  #leaseFor(tried: Set<KeyState>): CredentialLease {
    const now = this.#now();
    const count = this.#keys.length;
    for (let offset = 0; offset < count; offset++) {
      const index = (this.#next + offset) % count;
      const key = this.#keys[index]!;
      if (key.refused || key.coolingUntil > now || tried.has(key)) continue;
      this.#next = (index + 1) % count;
      tried.add(key);
      key.calls += 1;
      return { headers: key.headers, failed: (verdict) => this.#failed(key, verdict, tried) };
    }
    throw this.#exhausted(now);
  }

  #failed(key: KeyState, verdict: CredentialVerdict, tried: Set<KeyState>): CredentialLease | undefined {
    if (verdict.outcome === 'refused') {
      // Once: a key already out (refused by calls running together) is not told again.
      if (!key.refused) {
        key.refused = true;
        this.#emit({ type: 'refused', key: key.name, status: verdict.status });
      }
    } else if (!key.refused) {
      key.coolingUntil = Math.max(key.coolingUntil, this.#now() + Math.min(verdict.retryAfterMs ?? DEFAULT_COOLDOWN_MS, MAX_COOLDOWN_MS));
      this.#emit({ type: 'cooling', key: key.name, status: verdict.status, until: key.coolingUntil });
    }
    try {
      return this.#leaseFor(tried);
    } catch {
      // No sibling left for this call: it fails with the upstream's own answer.
      return undefined;
    }
  }

  #exhausted(now: number): UpstreamError {
    if (this.#keys.every((key) => key.refused)) {
      return new UpstreamError('credentials', `${this.#label}: the upstream refused every key of the pool (${this.#keys.map((key) => key.name).join(', ')})`);
    }
    const cooling = this.#keys.filter((key) => !key.refused && key.coolingUntil > now);
    const soonest = Math.min(...cooling.map((key) => key.coolingUntil));
    return new UpstreamError('status', `${this.#label}: every usable key is cooling down after HTTP 429 (the first is back at ${new Date(soonest).toISOString()})`, { status: 429 });
  }

  #emit(event: UpstreamKeyEvent): void {
    for (const listener of this.#listeners) listener(event);
  }
}

/**
 * How long an upstream's 429 asks to wait, in ms: `retry-after-ms` (OpenAI's), else `Retry-After`
 * in seconds or as an HTTP date (RFC 9110 §10.2.3). Undefined when neither says anything readable.
 */
export function retryAfterMs(headers: Readonly<Record<string, string | string[] | undefined>>, now: number): number | undefined {
  const first = (name: string): string | undefined => {
    const value = headers[name];
    return (Array.isArray(value) ? value[0] : value)?.trim();
  };
  const ms = first('retry-after-ms');
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms));
  const after = first('retry-after');
  if (after === undefined || after === '') return undefined;
  if (/^\d+$/.test(after)) return Number(after) * 1_000;
  // An HTTP date names its weekday and month; `Date.parse` alone would take "-1" for a year.
  if (!/^[A-Za-z]{3}/.test(after)) return undefined;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
