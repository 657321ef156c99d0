import { describe, expect, it, vi } from 'vitest';
import { IdSource, idSuffix, longIdSuffix, newItemId } from './ids.js';

describe('ids', () => {
  it('keep the shapes clients know: 24 hex digits, 48 for Responses items', () => {
    expect(`req_${idSuffix()}`).toMatch(/^req_[0-9a-f]{24}$/);
    expect(longIdSuffix()).toMatch(/^[0-9a-f]{48}$/);
    expect(newItemId('msg')).toMatch(/^msg_[0-9a-f]{48}$/);
  });

  it('never repeat within a process', () => {
    const seen = new Set<string>();
    for (let index = 0; index < 100_000; index += 1) seen.add(idSuffix());
    expect(seen.size).toBe(100_000);
  });

  it('differ between processes: each draws its own random part of at least 64 bits', async () => {
    const here = idSuffix();
    vi.resetModules();
    // A fresh copy of the module is what a new process (a worker, another instance, a restart) runs.
    const other = (await import('./ids.js')) as typeof import('./ids.js');
    const there = other.idSuffix();
    expect(there).toMatch(/^[0-9a-f]{24}$/);
    expect(there.slice(0, 16)).not.toBe(here.slice(0, 16));
  });

  it('draw a new random part when the counter runs out, so the counter never wraps onto an old id', () => {
    const draws = ['a'.repeat(40), 'b'.repeat(40)];
    const source = new IdSource(() => draws.shift() ?? 'c'.repeat(40), 0xffff_fffe);
    expect(source.short()).toBe(`${'a'.repeat(16)}fffffffe`);
    expect(source.long()).toBe(`${'a'.repeat(40)}ffffffff`);
    expect(source.short()).toBe(`${'b'.repeat(16)}00000000`);
    expect(source.short()).toBe(`${'b'.repeat(16)}00000001`);
  });

  it('refuse a random part that is too short or not hex', () => {
    expect(() => new IdSource(() => 'ab')).toThrow(RangeError);
    expect(() => new IdSource(() => 'Z'.repeat(40))).toThrow(RangeError);
  });
});
