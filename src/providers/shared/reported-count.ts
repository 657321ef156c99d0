/**
 * A token count as an upstream reports it. One that is not a whole, non-negative number reads as
 * NaN rather than 0: the usage meter's sanity check then refuses the whole report and bills the
 * gateway's own metered count, where 0 would have billed nothing for output the client received.
 * Absent (or null) stays absent.
 */
import { z } from 'zod';

/**
 * What an absent input or output count reads as: a usage object that does not say what was read or
 * written is no report, and the meter counts for itself. (Only the detail counts, cached and
 * reasoning tokens, may be absent: they are 0 then.) A usage object without them billed nothing.
 */
export const NOT_REPORTED = Number.NaN;

export const reportedTokenCount = z.number().int().nonnegative().nullish().catch(Number.NaN);

/**
 * `reportedTokenCount` without a schema, for a report read once per whole answer: the same
 * value for the same input (absent or null is absent).
 */
export function readReportedCount(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : Number.NaN;
}
