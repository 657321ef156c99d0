import { describe, expect, it } from 'vitest';
import { AdminError } from './admin-error.js';
import { parseIsoDate, parsePositiveInteger, parseUsdAmount, requirePositiveInteger, requireValidDate } from './input.js';

function adminErrorOf(run: () => unknown): AdminError {
  try {
    run();
  } catch (error) {
    if (error instanceof AdminError) return error;
    throw error;
  }
  throw new Error('expected an AdminError');
}

describe('parseUsdAmount', () => {
  it('reads decimals exactly into nano-USD', () => {
    expect(parseUsdAmount('5', 'amount', { positive: true })).toBe(5_000_000_000n);
    expect(parseUsdAmount('0.000000001', 'amount', { positive: true })).toBe(1n);
    expect(parseUsdAmount(' 12.5 ', 'amount', { positive: true })).toBe(12_500_000_000n);
    expect(parseUsdAmount('0', 'balance', { positive: false })).toBe(0n);
  });

  it.each(['-1', 'abc', '1.0000000001', '1e3', '', '1,5', '0x10'])('refuses %j, naming the field', (value) => {
    const error = adminErrorOf(() => parseUsdAmount(value, 'amount', { positive: false }));
    expect(error.kind).toBe('invalid_input');
    expect(error.message).toMatch(/^amount must be a non-negative USD amount with at most 9 decimals/);
    expect(error.message).toContain(JSON.stringify(value));
  });

  it('refuses more than 1,000,000,000 USD, exactly: the nano-USD columns keep room', () => {
    expect(parseUsdAmount('1000000000', 'amount', { positive: true })).toBe(10n ** 18n);
    for (const value of ['1000000000.000000001', '99999999999999999999', '9223372036854775807']) {
      expect(adminErrorOf(() => parseUsdAmount(value, 'amount', { positive: false })).message).toBe(`amount must be at most 1000000000 USD (got "${value}")`);
    }
  });

  it('refuses zero when the amount must be positive', () => {
    expect(adminErrorOf(() => parseUsdAmount('0.0', 'amount', { positive: true })).message).toMatch(/greater than zero/);
  });
});

describe('parsePositiveInteger', () => {
  it('reads whole numbers', () => {
    expect(parsePositiveInteger('1', '--rpm')).toBe(1);
    expect(parsePositiveInteger(' 600 ', '--rpm')).toBe(600);
  });

  it.each(['0', '-1', 'abc', '1.5', '1e3', '', '+3', '99999999999999999999'])('refuses %j', (value) => {
    expect(adminErrorOf(() => parsePositiveInteger(value, '--rpm')).message).toMatch(/^--rpm must be a whole number of at least 1/);
  });

  it('checks typed numbers too', () => {
    expect(requirePositiveInteger(3, 'x')).toBe(3);
    expect(() => requirePositiveInteger(0, 'x')).toThrow(AdminError);
    expect(() => requirePositiveInteger(2.5, 'x')).toThrow(AdminError);
    expect(() => requirePositiveInteger(Number.NaN, 'x')).toThrow(AdminError);
  });
});

describe('parseIsoDate', () => {
  it('reads a date as UTC midnight and date-times with offsets', () => {
    expect(parseIsoDate('2025-06-01', '--since').toISOString()).toBe('2025-06-01T00:00:00.000Z');
    expect(parseIsoDate('2025-06-01T12:30:00Z', '--since').toISOString()).toBe('2025-06-01T12:30:00.000Z');
    expect(parseIsoDate('2025-06-01T12:30:00.250+02:00', '--since').toISOString()).toBe('2025-06-01T10:30:00.250Z');
    expect(parseIsoDate('2024-02-29T23:59:59Z', '--since').toISOString()).toBe('2024-02-29T23:59:59.000Z');
  });

  it('reads a date-time without offset as local time, like JavaScript', () => {
    expect(parseIsoDate('2025-06-01T12:30', '--since').getTime()).toBe(new Date(2025, 5, 1, 12, 30).getTime());
  });

  it.each(['yesterday', '1', '2025-02-30', '2025-13-01', '2025-06-01T24:00:00Z', '2025-06-01T12:60Z', '2025/06/01', '', '2025-6-1'])(
    'refuses %j',
    (value) => {
      const error = adminErrorOf(() => parseIsoDate(value, '--since'));
      expect(error.message).toMatch(/^--since must be an ISO 8601 date or date-time/);
      expect(error.message).toContain(JSON.stringify(value));
    },
  );

  it('refuses an invalid Date object', () => {
    expect(() => requireValidDate(new Date(Number.NaN), 'since')).toThrow(/since is not a valid date/);
  });
});
