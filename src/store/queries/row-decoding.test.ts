import { describe, expect, it } from 'vitest';
import { decodeLedgerEntry, decodeModels, encodeModels, StoreDataError, toBigInt, toFlag, toSafeNumber } from './row-decoding.js';

describe('row decoding', () => {
  it('reads integers from either driver exactly', () => {
    expect(toBigInt(9_007_199_254_740_993n, 'x')).toBe(9_007_199_254_740_993n);
    expect(toBigInt(42, 'x')).toBe(42n);
    expect(toBigInt('-9223372036854775808', 'x')).toBe(-9_223_372_036_854_775_808n);
    expect(toSafeNumber(7n, 'x')).toBe(7);
  });

  it('refuses values that would be rounded or are not integers', () => {
    expect(() => toBigInt(1.5, 'x')).toThrow(StoreDataError);
    expect(() => toBigInt(2 ** 53, 'x')).toThrow(StoreDataError);
    expect(() => toBigInt('12abc', 'x')).toThrow(/x: expected an integer/);
    expect(() => toBigInt(null, 'x')).toThrow(StoreDataError);
    expect(() => toSafeNumber(2n ** 53n, 'x')).toThrow(/safe integer/);
    expect(() => toFlag(2n, 'x')).toThrow(/0 or 1/);
  });

  it('round-trips key model lists and refuses bad ones', () => {
    expect(decodeModels(encodeModels(['a', 'b']))).toEqual(['a', 'b']);
    expect(decodeModels(encodeModels(null))).toBeNull();
    expect(() => decodeModels('{"a":1}')).toThrow(/array of strings/);
    expect(() => decodeModels('[1]')).toThrow(/array of strings/);
    expect(() => decodeModels('not json')).toThrow(/not JSON/);
  });

  it('refuses a ledger row of an unknown kind', () => {
    const row = {
      id: 1n,
      account_id: 'a',
      kind: 'refund',
      amount_nanos: 1n,
      request_id: null,
      key_id: null,
      model: null,
      input_tokens: 0,
      cached_input_tokens: 0,
      cache_write_input_tokens: 0,
      output_tokens: 0,
      reasoning_tokens: 0,
      note: null,
      created_at: 0n,
      surface: null,
    };
    expect(() => decodeLedgerEntry(row)).toThrow(/unknown kind/);
    expect(decodeLedgerEntry({ ...row, kind: 'charge' })).toMatchObject({ id: 1, kind: 'charge', amountNanos: 1n, createdAt: new Date(0), surface: null });
    expect(decodeLedgerEntry({ ...row, kind: 'charge', surface: 'embeddings' })).toMatchObject({ surface: 'embeddings' });
  });
});
