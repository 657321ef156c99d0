import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateKeySecret, hashesEqual, hashKeySecret } from './key-secret.js';

describe('key secret hashes', () => {
  it('are the lowercase hex SHA-256 of the UTF-8 secret', () => {
    for (const secret of [generateKeySecret(), 'sk-tg-ünïcödé-🎉', '']) {
      expect(hashKeySecret(secret)).toBe(createHash('sha256').update(secret, 'utf8').digest('hex'));
    }
  });

  it('are equal only when every character is', () => {
    const hash = hashKeySecret(generateKeySecret());
    expect(hashesEqual(hash, `${hash}`)).toBe(true);
    expect(hashesEqual(hash, `${hash.slice(0, -1)}${hash.endsWith('0') ? '1' : '0'}`)).toBe(false);
    expect(hashesEqual(hash, `${hash.startsWith('0') ? '1' : '0'}${hash.slice(1)}`)).toBe(false);
    expect(hashesEqual(hash, hash.slice(0, -2))).toBe(false);
    expect(hashesEqual('', '')).toBe(false);
  });
});
