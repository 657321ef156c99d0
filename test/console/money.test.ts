/**
 * The console's money display (console/src/money.ts): decimal USD strings from the API shown and
 * computed on exactly, never through a float.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { availableUsd, formatUsd, isPositiveUsdAmount, nanosToUsd, usdToNanos } from '../../console/src/money.js';
import { formatUsd as serverFormatUsd } from '../../src/billing/money.js';

describe('console money', () => {
  it('shows dollars with at least cents and every significant decimal, grouped by thousands', () => {
    expect(formatUsd('0')).toBe('$0.00');
    expect(formatUsd('5')).toBe('$5.00');
    expect(formatUsd('0.5')).toBe('$0.50');
    expect(formatUsd('3.000000001')).toBe('$3.000000001');
    expect(formatUsd('0.000012')).toBe('$0.000012');
    expect(formatUsd('1234567.89')).toBe('$1,234,567.89');
    expect(formatUsd('9007199254740993.123456789')).toBe('$9,007,199,254,740,993.123456789');
    expect(formatUsd('-2.5')).toBe('−$2.50');
    expect(formatUsd('-0')).toBe('$0.00');
    expect(formatUsd('not money')).toBe('not money');
  });

  it('keeps every nano-dollar of what the server writes, for any amount', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 20n }), (nanos) => {
        const decimal = serverFormatUsd(nanos);
        expect(usdToNanos(decimal)).toBe(nanos);
        expect(nanosToUsd(nanos)).toBe(decimal);
        const shown = formatUsd(decimal).replace(/[$,]/g, '');
        expect(usdToNanos(shown)).toBe(nanos);
      }),
    );
  });

  it('subtracts what running requests hold exactly', () => {
    expect(availableUsd({ balance_usd: '0.3', reserved_usd: '0.1' })).toBe('0.2');
    expect(availableUsd({ balance_usd: '9007199254740993', reserved_usd: '0.000000001' })).toBe('9007199254740992.999999999');
  });

  it('accepts the amounts the admin API takes, and nothing else', () => {
    for (const good of ['1', '0.25', '10.123456789', ' 3 ']) expect(isPositiveUsdAmount(good), good).toBe(true);
    for (const bad of ['0', '0.0', '-1', '1e3', '1.1234567891', '', '.5', '1,000', 'abc']) expect(isPositiveUsdAmount(bad), bad).toBe(false);
  });
});
