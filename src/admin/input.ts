/**
 * Validation of operator input shared by the CLI and the admin HTTP routes, so both refuse the same
 * things with the same words. Every parser throws an `AdminError` naming the field it was given.
 */
import { formatUsd, MAX_USD_NANOS, usdToNanos } from '../billing/money.js';
import { AdminError } from './admin-error.js';

/** The largest USD amount an operator may enter (billing/money.ts), as people write it. */
export const MAX_USD_AMOUNT = formatUsd(MAX_USD_NANOS);

/**
 * What is wrong with `value` as a USD amount an operator entered, worded to follow the field's name
 * (`must be …`), or undefined when it is a decimal of at most 9 decimals within MAX_USD_AMOUNT
 * (and above zero, with `positive`). The admin API's schemas and the services share it.
 */
export function usdAmountProblem(value: string, options: { positive: boolean }): string | undefined {
  let nanos: bigint;
  try {
    nanos = usdToNanos(value);
  } catch {
    return 'must be a non-negative USD amount with at most 9 decimals, like 5 or 0.25';
  }
  if (nanos > MAX_USD_NANOS) return `must be at most ${MAX_USD_AMOUNT} USD`;
  if (options.positive && nanos === 0n) return 'must be greater than zero';
  return undefined;
}

/**
 * A USD amount in decimal (`"12.5"`) as nano-USD. Refuses negatives, exponents, junk, more than 9
 * decimals and more than MAX_USD_AMOUNT; with `positive`, also zero.
 */
export function parseUsdAmount(value: string, field: string, options: { positive: boolean }): bigint {
  const problem = usdAmountProblem(value, options);
  if (problem !== undefined) throw new AdminError('invalid_input', `${field} ${problem} (got ${JSON.stringify(value)})`);
  return usdToNanos(value);
}

/** A whole number ≥ 1, written in decimal digits only (no `1e3`, no `1.0`, no sign). */
export function parsePositiveInteger(value: string, field: string): number {
  const text = value.trim();
  const parsed = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  return requirePositiveInteger(parsed, field, value);
}

/** Checks a number that arrived already typed (a JSON body, a caller) is a whole number ≥ 1. */
export function requirePositiveInteger(value: number, field: string, shown: unknown = value): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new AdminError('invalid_input', `${field} must be a whole number of at least 1 (got ${JSON.stringify(shown)})`);
  }
  return value;
}

// Date, or date and time with optional seconds, fraction and offset: the ISO 8601 forms people type.
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * An ISO 8601 date (`2025-06-01`, read as UTC midnight) or date-time (`2025-06-01T12:00:00Z`; without
 * an offset it is local time, as in JavaScript). Out-of-range parts such as `2025-02-30` are refused
 * instead of rolling over into the next month.
 */
export function parseIsoDate(value: string, field: string): Date {
  const text = value.trim();
  const match = ISO_DATE_TIME.exec(text);
  const refuse = (): never => {
    throw new AdminError(
      'invalid_input',
      `${field} must be an ISO 8601 date or date-time, like 2025-06-01 or 2025-06-01T12:00:00Z (got ${JSON.stringify(value)})`,
    );
  };
  if (match === null) return refuse();
  const [, year, month, day, hour = '0', minute = '0', second = '0'] = match;
  const daysInMonth = new Date(Date.UTC(Number(year), Number(month), 0)).getUTCDate();
  const inRange =
    Number(month) >= 1 && Number(month) <= 12 &&
    Number(day) >= 1 && Number(day) <= daysInMonth &&
    Number(hour) <= 23 && Number(minute) <= 59 && Number(second) <= 59;
  // `Date` accepts a space only in its non-standard fallback; give it the standard `T`.
  const date = new Date(text.replace(' ', 'T'));
  if (!inRange || Number.isNaN(date.getTime())) return refuse();
  return date;
}

/** Checks a `Date` that arrived already typed is a real point in time. */
export function requireValidDate(value: Date, field: string): Date {
  if (Number.isNaN(value.getTime())) throw new AdminError('invalid_input', `${field} is not a valid date`);
  return value;
}

/** A range that ends before it starts is a mistake worth saying, not an empty answer. */
export function requireOrderedRange(from: Date | undefined, to: Date | undefined, names: readonly [string, string] = ['from', 'to']): void {
  if (from !== undefined && to !== undefined && from.getTime() > to.getTime()) {
    throw new AdminError('invalid_input', `${names[0]} must not be after ${names[1]} (got ${from.toISOString()} and ${to.toISOString()})`);
  }
}
