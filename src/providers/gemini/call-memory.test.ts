import { describe, expect, it } from 'vitest';
import { CallMemory } from './call-memory.js';

describe('CallMemory', () => {
  it('remembers signatures and Gemini ids, and nothing for a plain generated call', () => {
    const memory = new CallMemory();
    memory.remember('call_a', { upstreamId: false, signature: 'sig-a' });
    memory.remember('fc-b', { upstreamId: true });
    memory.remember('call_c', { upstreamId: false });
    expect(memory.recall('call_a')).toEqual({ upstreamId: false, signature: 'sig-a' });
    expect(memory.recall('fc-b')).toEqual({ upstreamId: true });
    expect(memory.recall('call_c')).toBeUndefined();
    expect(memory.size).toBe(2);
  });

  it('forgets the oldest first past the entry bound', () => {
    const memory = new CallMemory({ maxEntries: 2 });
    for (const id of ['one', 'two', 'three']) memory.remember(id, { upstreamId: true });
    expect(memory.recall('one')).toBeUndefined();
    expect(memory.recall('two')).toBeDefined();
    expect(memory.recall('three')).toBeDefined();
  });

  it('forgets the oldest first past the signature size bound, and never stores one larger than it', () => {
    const memory = new CallMemory({ maxSignatureCharacters: 10 });
    memory.remember('a', { upstreamId: false, signature: '12345' });
    memory.remember('b', { upstreamId: false, signature: '12345' });
    memory.remember('c', { upstreamId: false, signature: '123' });
    expect(memory.recall('a')).toBeUndefined();
    expect(memory.recall('b')?.signature).toBe('12345');
    expect(memory.recall('c')?.signature).toBe('123');
    memory.remember('huge', { upstreamId: false, signature: 'x'.repeat(11) });
    expect(memory.recall('huge')).toBeUndefined();
    expect(memory.size).toBe(2);
  });

  it('replaces an entry remembered twice without counting it twice', () => {
    const memory = new CallMemory({ maxSignatureCharacters: 10 });
    memory.remember('a', { upstreamId: false, signature: '1234567' });
    memory.remember('a', { upstreamId: false, signature: '7654321' });
    memory.remember('b', { upstreamId: false, signature: '123' });
    expect(memory.recall('a')?.signature).toBe('7654321');
    expect(memory.recall('b')?.signature).toBe('123');
  });
});
