/**
 * The money operations of the request path (open a hold, settle it, checkpoint running holds), as
 * values queued for a group commit (group-commit.ts). Each engine applies a batch of them in one
 * transaction, each operation with the same guarded SQL as when it was a transaction of its own:
 * SQLite in sqlite-hold-statements.ts, PostgreSQL in postgres-hold-batch.ts (functions of
 * migration 0008). Inputs are checked here, before queueing, so a bad one fails its own call only.
 */
import { assertNonNegativeAmount, assertTokenCounts } from './queries/ledger-queries.js';
import { toEpochMilliseconds } from './queries/row-decoding.js';
import type { Charge, HoldCheckpoint, NewHold } from './store.js';

export type HoldOperation =
  | { kind: 'open'; hold: NewHold; createdAt: number }
  | { kind: 'settle'; holdId: string; charge: Charge | null; createdAt: number }
  | { kind: 'checkpoint'; checkpoints: readonly HoldCheckpoint[] };

/** How many operations one transaction takes at most. */
export const MAX_HOLD_BATCH_SIZE = 256;

export function openOperation(hold: NewHold, now: Date): HoldOperation {
  assertNonNegativeAmount(hold.amountNanos, 'hold amount');
  toEpochMilliseconds(hold.expiresAt, 'hold expiresAt');
  return { kind: 'open', hold, createdAt: toEpochMilliseconds(now, 'now') };
}

export function settleOperation(holdId: string, charge: Charge | null, now: Date): HoldOperation {
  if (charge !== null) {
    assertNonNegativeAmount(charge.costNanos, 'charge cost');
    assertNonNegativeAmount(charge.excessNanos, 'charge excess');
    assertTokenCounts(charge);
  }
  return { kind: 'settle', holdId, charge, createdAt: toEpochMilliseconds(now, 'now') };
}

export function checkpointOperation(checkpoints: readonly HoldCheckpoint[]): HoldOperation {
  for (const checkpoint of checkpoints) {
    assertNonNegativeAmount(checkpoint.costNanos, 'checkpoint cost');
    assertTokenCounts(checkpoint.tokens);
    toEpochMilliseconds(checkpoint.expiresAt, 'hold expiresAt');
  }
  return { kind: 'checkpoint', checkpoints };
}
