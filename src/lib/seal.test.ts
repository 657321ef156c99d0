import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isSealed, SEAL_PREFIX, Sealer, UnsealError } from './seal.js';

const PURPOSE = 'compaction';

describe('Sealer', () => {
  it('opens what it sealed, and the sealed text does not hold the text in clear', () => {
    const sealer = Sealer.withRandomKey();
    const text = 'Goals: ship the parser. Files: src/parser.ts. Next: tests. ✓';
    const sealed = sealer.seal(text, PURPOSE);
    expect(sealed.startsWith(SEAL_PREFIX)).toBe(true);
    expect(isSealed(sealed)).toBe(true);
    expect(sealed).not.toContain('parser');
    expect(sealer.open(sealed, PURPOSE)).toBe(text);
    // A fresh nonce each time: the same text never seals the same way twice.
    expect(sealer.seal(text, PURPOSE)).not.toBe(sealed);
    expect(sealer.open(sealer.seal('', PURPOSE), PURPOSE)).toBe('');
  });

  it('refuses an altered text, whichever byte changed', () => {
    const sealer = Sealer.withRandomKey();
    const sealed = sealer.seal('the summary', PURPOSE);
    const body = Buffer.from(sealed.slice(SEAL_PREFIX.length), 'base64url');
    for (const index of [0, 12, body.length - 1]) {
      const altered = Buffer.from(body);
      altered[index] = (altered[index] ?? 0) ^ 1;
      expect(() => sealer.open(`${SEAL_PREFIX}${altered.toString('base64url')}`, PURPOSE)).toThrow(UnsealError);
    }
    expect(() => sealer.open(sealed.slice(0, -4), PURPOSE)).toThrow(UnsealError);
    expect(() => sealer.open(`${SEAL_PREFIX}AAAA`, PURPOSE)).toThrow(/too short/);
    expect(() => sealer.open(`${SEAL_PREFIX}not base64!`, PURPOSE)).toThrow(/base64url/);
    expect(() => sealer.open('gAAAAABopenai', PURPOSE)).toThrow(/not a sealed text/);
  });

  it('refuses a text sealed under another key or for another purpose', () => {
    const sealed = Sealer.withRandomKey().seal('the summary', PURPOSE);
    expect(() => Sealer.withRandomKey().open(sealed, PURPOSE)).toThrow(UnsealError);
    const sealer = Sealer.withRandomKey();
    expect(() => sealer.open(sealer.seal('the summary', 'other'), PURPOSE)).toThrow(UnsealError);
  });

  it('takes its key as 32 bytes of base64, and two sealers with one key read each other', () => {
    const key = randomBytes(32).toString('base64');
    const sealed = Sealer.fromBase64(key).seal('shared', PURPOSE);
    expect(Sealer.fromBase64(`${key}\n`).open(sealed, PURPOSE)).toBe('shared');
    expect(() => Sealer.fromBase64(randomBytes(16).toString('base64'))).toThrow(/32 bytes/);
    expect(() => Sealer.fromBase64('not base64 at all')).toThrow(/not base64/);
  });
});
