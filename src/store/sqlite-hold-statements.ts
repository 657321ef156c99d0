/**
 * The request hot path on SQLite: opening and settling a hold with statements prepared once,
 * instead of compiling each query through Kysely and preparing it again on every request (together
 * more than half of the gateway's CPU per request before). Same SQL guards and the same
 * transactions as hold-queries.ts (which PostgreSQL keeps using): `BEGIN IMMEDIATE`, a guarded
 * UPDATE first, so races are decided by the database. The work runs while holding Kysely's
 * connection mutex, so it never interleaves with a Kysely transaction on the same connection.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { assertNonNegativeAmount, assertTokenCounts, chargeCountsAnything, EXCESS_NOTE } from './ledger-queries.js';
import { toBigInt, toEpochMilliseconds, toText } from './row-decoding.js';
import type { Database } from './schema.js';
import type { Charge, NewHold } from './store.js';

export interface HoldStatements {
  openHold(hold: NewHold, now: Date): Promise<boolean>;
  settleHold(holdId: string, charge: Charge | null, now: Date): Promise<boolean>;
}

interface Prepared {
  open: (hold: NewHold, createdAt: number) => boolean;
  settle: (holdId: string, charge: Charge | null, createdAt: number) => boolean;
}

function prepare(connection: BetterSqlite3.Database): Prepared {
  const reserve = connection.prepare(
    'UPDATE accounts SET reserved_nanos = reserved_nanos + ? WHERE id = ? AND disabled = 0 AND balance_nanos - reserved_nanos >= ?',
  );
  const insertHold = connection.prepare(
    "INSERT INTO holds (id, account_id, key_id, request_id, model, amount_nanos, state, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, 'open', ?, ?)",
  );
  const markSettled = connection.prepare("UPDATE holds SET state = 'settled' WHERE id = ? AND state = 'open' RETURNING account_id, amount_nanos");
  const release = connection.prepare('UPDATE accounts SET reserved_nanos = reserved_nanos - ?, balance_nanos = balance_nanos - ? WHERE id = ?');
  const appendCharge = connection.prepare(
    `INSERT INTO ledger (account_id, kind, amount_nanos, request_id, key_id, model, input_tokens, cached_input_tokens, cache_write_input_tokens, output_tokens, reasoning_tokens, note, created_at)
     VALUES (?, 'charge', ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)`,
  );
  const appendExcess = connection.prepare(
    `INSERT INTO ledger (account_id, kind, amount_nanos, request_id, key_id, model, note, created_at) VALUES (?, 'excess', ?, ?, ?, ?, ?, ?)`,
  );

  const open = connection.transaction((hold: NewHold, createdAt: number): boolean => {
    if (reserve.run(hold.amountNanos, hold.accountId, hold.amountNanos).changes !== 1) return false;
    insertHold.run(hold.id, hold.accountId, hold.keyId, hold.requestId, hold.model, hold.amountNanos, toEpochMilliseconds(hold.expiresAt, 'hold expiresAt'), createdAt);
    return true;
  });
  const settle = connection.transaction((holdId: string, charge: Charge | null, createdAt: number): boolean => {
    const row = markSettled.get(holdId) as { account_id: unknown; amount_nanos: unknown } | undefined;
    if (row === undefined) return false;
    const accountId = toText(row.account_id, 'holds.account_id');
    const billed = charge !== null && chargeCountsAnything(charge.costNanos, charge);
    const costNanos = billed ? charge.costNanos : 0n;
    release.run(toBigInt(row.amount_nanos, 'holds.amount_nanos'), costNanos, accountId);
    if (billed) {
      appendCharge.run(
        accountId,
        costNanos,
        charge.requestId,
        charge.keyId,
        charge.model,
        charge.inputTokens,
        charge.cachedInputTokens,
        charge.cacheWriteInputTokens ?? 0,
        charge.outputTokens,
        charge.reasoningTokens,
        createdAt,
      );
      if (charge.excessNanos > 0n) appendExcess.run(accountId, charge.excessNanos, charge.requestId, charge.keyId, charge.model, EXCESS_NOTE, createdAt);
    }
    return true;
  });
  return { open: (hold, createdAt) => open.immediate(hold, createdAt), settle: (holdId, charge, createdAt) => settle.immediate(holdId, charge, createdAt) };
}

export function createSqliteHoldStatements(db: Kysely<Database>, connection: BetterSqlite3.Database): HoldStatements {
  // Prepared on first use: the tables exist only once the store has been migrated.
  let prepared: Prepared | undefined;
  const withConnection = <T>(work: (statements: Prepared) => T): Promise<T> =>
    db.connection().execute(async () => work((prepared ??= prepare(connection))));
  return {
    async openHold(hold, now) {
      assertNonNegativeAmount(hold.amountNanos, 'hold amount');
      const createdAt = toEpochMilliseconds(now, 'now');
      return withConnection((statements) => statements.open(hold, createdAt));
    },
    async settleHold(holdId, charge, now) {
      if (charge !== null) {
        assertNonNegativeAmount(charge.costNanos, 'charge cost');
        assertNonNegativeAmount(charge.excessNanos, 'charge excess');
        assertTokenCounts(charge);
      }
      const createdAt = toEpochMilliseconds(now, 'now');
      return withConnection((statements) => statements.settle(holdId, charge, createdAt));
    },
  };
}
