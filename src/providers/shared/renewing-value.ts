/**
 * A credential kept until a margin before it expires, then fetched again: one fetch at a time,
 * however many calls ask for it meanwhile (Entra ID and Google tokens, AWS credentials). A value
 * the upstream refused is dropped, so that the next call fetches another.
 */
export interface Renewable<T> {
  value: T;
  /** When to fetch anew (ms since epoch, on the holder's clock); Infinity for never. */
  renewAt: number;
}

export class RenewingValue<T> {
  readonly #fetch: () => Promise<Renewable<T>>;
  readonly #now: () => number;
  #held: Renewable<T> | undefined;
  #fetching: Promise<T> | undefined;

  constructor(fetch: () => Promise<Renewable<T>>, now: () => number) {
    this.#fetch = fetch;
    this.#now = now;
  }

  /** The value held while it is short of its renewal time, else the one fetch in flight. */
  get(): Promise<T> {
    const held = this.#held;
    if (held !== undefined && this.#now() < held.renewAt) return Promise.resolve(held.value);
    this.#fetching ??= this.#fetch()
      .then((fresh) => {
        this.#held = fresh;
        return fresh.value;
      })
      .finally(() => {
        this.#fetching = undefined;
      });
    return this.#fetching;
  }

  /** The value was refused: the next `get` fetches another. */
  drop(): void {
    this.#held = undefined;
  }
}
