/**
 * The catalog as served right now (docs/architecture.md, "The catalog at runtime"): a read-only
 * map that answers from the version swapped in last. A swap replaces the whole map at once, so a
 * reader sees one version or the next, never a mix; a request takes its ModelEntry (targets bound
 * to that version's providers) once, and keeps it to its end whatever is swapped in meanwhile.
 */
import type { Catalog, ModelEntry } from './catalog.js';

export class LiveCatalog implements ReadonlyMap<string, ModelEntry> {
  #current: Catalog;

  constructor(initial: Catalog) {
    this.#current = initial;
  }

  /** The version served now, whole. */
  get current(): Catalog {
    return this.#current;
  }

  swap(next: Catalog): void {
    this.#current = next;
  }

  get size(): number {
    return this.#current.size;
  }

  get(id: string): ModelEntry | undefined {
    return this.#current.get(id);
  }

  has(id: string): boolean {
    return this.#current.has(id);
  }

  keys(): MapIterator<string> {
    return this.#current.keys();
  }

  values(): MapIterator<ModelEntry> {
    return this.#current.values();
  }

  entries(): MapIterator<[string, ModelEntry]> {
    return this.#current.entries();
  }

  forEach(callback: (value: ModelEntry, key: string, map: ReadonlyMap<string, ModelEntry>) => void): void {
    this.#current.forEach((value, key) => callback(value, key, this));
  }

  [Symbol.iterator](): MapIterator<[string, ModelEntry]> {
    return this.#current[Symbol.iterator]();
  }
}
