/**
 * The append-only ledger: writing one entry and listing an account's entries (usage sums are in
 * usage-queries.ts).
 * Nothing here updates or deletes a ledger row; balances move only together with an appended entry.
 */
import type { Kysely } from 'kysely';
import type { Database, LedgerKind } from '../schema.js';
import type { LedgerEntry, TokenCounts } from '../store.js';
import { decodeLedgerEntry } from './row-decoding.js';

/** The largest token count a ledger column holds (PostgreSQL `integer`). */
const MAX_TOKEN_COUNT = 2_147_483_647;

/** The note on an `excess` entry. */
export const EXCESS_NOTE = 'reported beyond the hold; not debited';
/** The note on the charge an expired hold settles from its last checkpoint. */
export const EXPIRED_HOLD_NOTE = 'hold expired: usage metered before its process stopped';

export const NO_TOKENS: TokenCounts = Object.freeze({ inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 });

export interface NewLedgerEntry {
  accountId: string;
  kind: LedgerKind;
  amountNanos: bigint;
  requestId: string | null;
  keyId: string | null;
  model: string | null;
  tokens: TokenCounts;
  note: string | null;
  createdAt: number;
}

/** Appends one entry. Call it inside the transaction that moves the balance. */
export async function appendLedgerEntry(db: Kysely<Database>, entry: NewLedgerEntry): Promise<void> {
  assertNonNegativeAmount(entry.amountNanos, 'ledger amount');
  assertTokenCounts(entry.tokens);
  await db
    .insertInto('ledger')
    .values({
      account_id: entry.accountId,
      kind: entry.kind,
      amount_nanos: entry.amountNanos,
      request_id: entry.requestId,
      key_id: entry.keyId,
      model: entry.model,
      input_tokens: entry.tokens.inputTokens,
      cached_input_tokens: entry.tokens.cachedInputTokens,
      cache_write_input_tokens: entry.tokens.cacheWriteInputTokens ?? 0,
      output_tokens: entry.tokens.outputTokens,
      reasoning_tokens: entry.tokens.reasoningTokens,
      note: entry.note,
      created_at: entry.createdAt,
    })
    .execute();
}

/** Oldest first, in the order the entries were written. */
export async function listLedger(db: Kysely<Database>, accountId: string): Promise<LedgerEntry[]> {
  const rows = await db.selectFrom('ledger').selectAll().where('account_id', '=', accountId).orderBy('id', 'asc').execute();
  return rows.map(decodeLedgerEntry);
}

export function assertNonNegativeAmount(amount: bigint, what: string): void {
  if (typeof amount !== 'bigint' || amount < 0n) throw new RangeError(`${what} must be a bigint ≥ 0, got ${String(amount)}`);
}

export function assertTokenCounts(tokens: TokenCounts): void {
  const { inputTokens, cachedInputTokens, outputTokens, reasoningTokens } = tokens;
  const cacheWriteInputTokens = tokens.cacheWriteInputTokens ?? 0;
  for (const [field, value] of Object.entries({ inputTokens, cachedInputTokens, cacheWriteInputTokens, outputTokens, reasoningTokens })) {
    if (!Number.isSafeInteger(value) || value < 0 || value > MAX_TOKEN_COUNT) {
      throw new RangeError(`${field} must be an integer from 0 to ${MAX_TOKEN_COUNT}, got ${String(value)}`);
    }
  }
}

/** True when a charge has anything worth a ledger row: a cost or any token. */
export function chargeCountsAnything(costNanos: bigint, tokens: TokenCounts): boolean {
  return costNanos > 0n || tokens.inputTokens > 0 || tokens.cachedInputTokens > 0 || tokens.outputTokens > 0 || tokens.reasoningTokens > 0;
}
