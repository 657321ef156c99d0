/**
 * The money operations of the request path (open a hold, settle it, checkpoint running holds), as
 * values queued for a group commit (group-commit.ts). Each engine applies a batch of them in one
 * transaction, each operation with the same guarded SQL as when it was a transaction of its own:
 * SQLite in sqlite-hold-statements.ts, PostgreSQL in postgres-hold-batch.ts (functions of
 * migration 0008). A settle or checkpoint of a hold admitted from a quota slice names its slice
 * (`SliceHold`): without a row, the hold is settled out of it, or moved from it into a row (migration
 * 0015; sqlite/sqlite-slice-statements.ts). Inputs are checked here, before queueing, so a bad one
 * fails its own call only.
 */
import { assertNonNegativeAmount, assertTokenCounts } from './queries/ledger-queries.js';
import { toEpochMilliseconds } from './queries/row-decoding.js';
import type { SliceHold } from './slice-records.js';
import type { Charge, HoldCheckpoint, NewHold } from './store.js';

export type HoldOperation =
  | { kind: 'open'; hold: NewHold; createdAt: number }
  | { kind: 'settle'; holdId: string; charge: Charge | null; createdAt: number; slice?: SliceHold }
  | { kind: 'checkpoint'; checkpoints: readonly HoldCheckpoint[] };

/** How many operations one transaction takes at most. */
export const MAX_HOLD_BATCH_SIZE = 256;

export function openOperation(hold: NewHold, now: Date): HoldOperation {
  assertNonNegativeAmount(hold.amountNanos, 'hold amount');
  toEpochMilliseconds(hold.expiresAt, 'hold expiresAt');
  return { kind: 'open', hold, createdAt: toEpochMilliseconds(now, 'now') };
}

export function settleOperation(holdId: string, charge: Charge | null, now: Date, slice?: SliceHold): HoldOperation {
  if (charge !== null) {
    assertNonNegativeAmount(charge.costNanos, 'charge cost');
    assertNonNegativeAmount(charge.excessNanos, 'charge excess');
    assertTokenCounts(charge);
  }
  if (slice !== undefined) assertSliceHold(slice);
  return { kind: 'settle', holdId, charge, createdAt: toEpochMilliseconds(now, 'now'), ...(slice === undefined ? {} : { slice }) };
}

export function checkpointOperation(checkpoints: readonly HoldCheckpoint[]): HoldOperation {
  for (const checkpoint of checkpoints) {
    assertNonNegativeAmount(checkpoint.costNanos, 'checkpoint cost');
    assertTokenCounts(checkpoint.tokens);
    toEpochMilliseconds(checkpoint.expiresAt, 'hold expiresAt');
    if (checkpoint.slice !== undefined) assertSliceHold(checkpoint.slice);
  }
  return { kind: 'checkpoint', checkpoints };
}

function assertSliceHold(slice: SliceHold): void {
  assertNonNegativeAmount(slice.amountNanos, 'hold amount');
  toEpochMilliseconds(slice.admittedAt, 'hold admittedAt');
}
