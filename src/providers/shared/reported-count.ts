/**
 * A token count as an upstream reports it. One that is not a whole, non-negative number reads as
 * NaN rather than 0: the usage meter's sanity check then refuses the whole report and bills the
 * gateway's own metered count, where 0 would have billed nothing for output the client received.
 * Absent (or null) stays absent.
 */
import { z } from 'zod';

export const reportedTokenCount = z.number().int().nonnegative().nullish().catch(Number.NaN);
