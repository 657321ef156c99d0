/**
 * Seeded, dependency-free randomness for the simulated provider: the same request must always
 * produce the same answer, so every "random" choice is drawn from a generator seeded by a hash of
 * the request. Not for anything security-related.
 */

/** FNV-1a over UTF-16 code units: 32 bits, stable across platforms and Node versions. */
export function hashString(text: string, seed = 0x811c9dc5): number {
  let hash = seed >>> 0;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** mulberry32: a tiny PRNG with good enough spread for picking words. Returns floats in [0, 1). */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A deterministic identifier of `length` alphanumeric characters derived from `text`. */
export function deterministicId(text: string, length = 24): string {
  const random = createRandom(hashString(text));
  let id = '';
  for (let index = 0; index < length; index++) {
    id += ID_ALPHABET[Math.floor(random() * ID_ALPHABET.length)];
  }
  return id;
}
