/**
 * Money is integer nano-USD (1e-9 USD) as `bigint`: no floats in any money path. Prices are
 * configured in USD per 1M tokens and converted once into nano-USD per 1M tokens.
 */

export const NANOS_PER_USD = 1_000_000_000n;

/**
 * The largest amount of money an operator may enter (an opening balance, a credit or debit, a key's
 * budget, a low-balance threshold) and the largest balance a credit may reach: one billion USD,
 * 10^18 nano-USD. The columns are signed 64-bit nano-USD (up to 9.2 × 10^18), so a balance at the
 * maximum still has room for eight more such amounts arriving at once.
 */
export const MAX_USD_NANOS = 1_000_000_000n * NANOS_PER_USD;
const TOKENS_PER_PRICE_UNIT = 1_000_000n;

/**
 * Parses a USD amount written in decimal (`"12.5"`, `0.0375`, `"3"`) into nano-USD exactly.
 * Numbers are read through their shortest decimal form, so 0.1 is 100,000,000 nanos, not a float
 * approximation. More than 9 decimals, negatives, exponents and junk are refused.
 */
export function usdToNanos(amount: string | number): bigint {
  const text = typeof amount === 'number' ? numberToPlainDecimal(amount) : amount.trim();
  const match = /^(\d+)(?:\.(\d{1,9}))?$/.exec(text);
  if (match === null) throw new RangeError(`not a USD amount with at most 9 decimals: ${JSON.stringify(amount)}`);
  const whole = BigInt(match[1] ?? '0');
  const fraction = BigInt((match[2] ?? '').padEnd(9, '0'));
  return whole * NANOS_PER_USD + fraction;
}

function numberToPlainDecimal(value: number): string {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`not a USD amount: ${value}`);
  const text = String(value);
  if (!/e/i.test(text)) return text;
  // Tiny or huge numbers print in exponent form; toFixed(9) is exact enough at nano precision
  // only when the shortest form has ≤ 9 decimals, which the regex in usdToNanos then checks.
  return value.toFixed(9).replace(/\.?0+$/, '');
}

/** `12.345` style, trimmed, for people: `formatUsd(1_500_000_000n)` is `"1.5"`. */
export function formatUsd(nanos: bigint): string {
  const negative = nanos < 0n;
  const absolute = negative ? -nanos : nanos;
  const whole = absolute / NANOS_PER_USD;
  const fraction = (absolute % NANOS_PER_USD).toString().padStart(9, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction === '' ? '' : `.${fraction}`}`;
}

/** Nano-USD for `tokens` at `nanosPerMillion` (nano-USD per 1M tokens), rounded up. */
export function costOfTokens(tokens: number, nanosPerMillion: bigint): bigint {
  if (!Number.isSafeInteger(tokens) || tokens < 0) throw new RangeError(`not a token count: ${tokens}`);
  const product = BigInt(tokens) * nanosPerMillion;
  return (product + TOKENS_PER_PRICE_UNIT - 1n) / TOKENS_PER_PRICE_UNIT;
}
