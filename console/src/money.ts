/**
 * Money as the API gives it: decimal USD strings with up to 9 decimals (exact nano-USD). Shown
 * and computed on as text and BigInt nano-USD, never as floating-point numbers.
 */

const DECIMAL_USD = /^(-?)(\d+)(?:\.(\d{1,9}))?$/;
const NANOS_PER_USD = 1_000_000_000n;

/** `"1234.5"` → `"$1,234.50"`, `"0.000012"` → `"$0.000012"`: at least cents, every significant decimal kept. */
export function formatUsd(decimal: string): string {
  const match = DECIMAL_USD.exec(decimal.trim());
  if (match === null) return decimal;
  const [, sign = '', whole = '0', fraction = ''] = match;
  const significant = fraction.replace(/0+$/, '');
  const decimals = significant.length < 2 ? significant.padEnd(2, '0') : significant;
  const grouped = whole.replace(/^0+(?=\d)/, '').replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const negative = sign === '-' && /[1-9]/.test(whole + fraction);
  return `${negative ? '−' : ''}$${grouped}.${decimals}`;
}

/** Exact nano-USD of a decimal USD string; throws on anything else. */
export function usdToNanos(decimal: string): bigint {
  const match = DECIMAL_USD.exec(decimal.trim());
  if (match === null) throw new RangeError(`not a USD amount: ${JSON.stringify(decimal)}`);
  const [, sign = '', whole = '0', fraction = ''] = match;
  const nanos = BigInt(whole) * NANOS_PER_USD + BigInt(fraction.padEnd(9, '0'));
  return sign === '-' ? -nanos : nanos;
}

/** The decimal USD string of exact nano-USD, as the API writes it (`1.5`, `0.000000001`). */
export function nanosToUsd(nanos: bigint): string {
  const negative = nanos < 0n;
  const absolute = negative ? -nanos : nanos;
  const fraction = (absolute % NANOS_PER_USD).toString().padStart(9, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${absolute / NANOS_PER_USD}${fraction === '' ? '' : `.${fraction}`}`;
}

/** What an account can still spend: its balance less what running requests hold. */
export function availableUsd(account: { balance_usd: string; reserved_usd: string }): string {
  return nanosToUsd(usdToNanos(account.balance_usd) - usdToNanos(account.reserved_usd));
}

/** Whether `text` is an amount the admin API takes: positive, at most 9 decimals. */
export function isPositiveUsdAmount(text: string): boolean {
  const match = /^\d+(?:\.\d{1,9})?$/.exec(text.trim());
  return match !== null && usdToNanos(text) > 0n;
}
