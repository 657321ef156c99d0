/**
 * The request path's quota-slice steps on SQLite (docs/architecture.md, Money: "Quota slices"),
 * prepared once beside the hold statements and run inside their batch transaction
 * (sqlite-hold-statements.ts): the settlement of a hold admitted from a slice that has no row yet,
 * and the first checkpoint of one, which moves its amount from the slice into an open row.
 * PostgreSQL takes the same steps in its batch functions (migration 0015).
 *
 * Each step changes the slice's amount and its account's `reserved_nanos` and `sliced_nanos` by
 * the same amount, so the account's guarded arithmetic keeps counting the hold, first in its slice,
 * then as a row. A refusal (the hold has a row already, the slice is gone or cannot cover it, or
 * belongs to another account) writes nothing; a step throws only for the unexpected, possibly after
 * writing, and its batch is then rolled back.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { toEpochMilliseconds } from '../queries/row-decoding.js';
import type { SliceHold } from '../slice-records.js';

export interface SliceStatements {
  /** Settles a hold without a row out of its slice; false (nothing changed) when it cannot. */
  settle(holdId: string, slice: SliceHold, costNanos: bigint): boolean;
  /** Moves a hold without a row from its slice into an open row that expires at `expiresAt`. */
  convert(holdId: string, slice: SliceHold, expiresAt: number): void;
}

export function prepareSliceStatements(connection: BetterSqlite3.Database): SliceStatements {
  const holdExists = connection.prepare('SELECT 1 FROM holds WHERE id = ?').pluck();
  const take = connection.prepare('UPDATE account_slices SET amount_nanos = amount_nanos - ? WHERE id = ? AND account_id = ? AND amount_nanos >= ?');
  const insertHold = connection.prepare(
    'INSERT INTO holds (id, account_id, key_id, request_id, model, amount_nanos, state, expires_at, created_at, surface, slice_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const release = connection.prepare('UPDATE accounts SET reserved_nanos = reserved_nanos - ?, sliced_nanos = sliced_nanos - ?, balance_nanos = balance_nanos - ? WHERE id = ?');
  const unslice = connection.prepare('UPDATE accounts SET sliced_nanos = sliced_nanos - ? WHERE id = ?');

  /** Takes the hold's amount out of its slice, unless the hold has a row; whether it did. */
  const takeFromSlice = (holdId: string, slice: SliceHold): boolean => {
    if (holdExists.get(holdId) !== undefined) return false;
    return take.run(slice.amountNanos, slice.sliceId, slice.accountId, slice.amountNanos).changes === 1;
  };
  const writeRow = (holdId: string, slice: SliceHold, state: 'open' | 'settled', expiresAt: number): void => {
    const admittedAt = toEpochMilliseconds(slice.admittedAt, 'hold admittedAt');
    insertHold.run(holdId, slice.accountId, slice.keyId, slice.requestId, slice.model, slice.amountNanos, state, expiresAt, admittedAt, slice.surface ?? null, slice.sliceId);
  };

  return {
    settle(holdId, slice, costNanos) {
      // Read before the first write: a bad value throws before anything changed.
      const admittedAt = toEpochMilliseconds(slice.admittedAt, 'hold admittedAt');
      if (!takeFromSlice(holdId, slice)) return false;
      writeRow(holdId, slice, 'settled', admittedAt);
      release.run(slice.amountNanos, slice.amountNanos, costNanos, slice.accountId);
      return true;
    },
    convert(holdId, slice, expiresAt) {
      toEpochMilliseconds(slice.admittedAt, 'hold admittedAt');
      if (!takeFromSlice(holdId, slice)) return;
      writeRow(holdId, slice, 'open', expiresAt);
      unslice.run(slice.amountNanos, slice.accountId);
    },
  };
}
