/**
 * Key administration beyond create and disable (migration 0006): the paginated listing, changes
 * of settings and budget, rotation, soft deletion, and a key's spend in a budget period. The
 * callers (account-store.ts) run the changes in a transaction with their audit row and move the
 * revision counter, so every instance's key cache forgets the old settings or secret.
 */
import { sql, type Kysely, type Updateable } from 'kysely';
import { decodeApiKey, encodeModels, toBigInt, toBudgetPeriod, toEpochMilliseconds, toText } from './row-decoding.js';
import type { ApiKeysTable, Database } from '../schema.js';
import type { ApiKeyRecord, BudgetWindow, KeyBudgetLevel, KeyChanges, KeyCursor, KeyFilter, KeySpend, Page, PageRequest } from '../store.js';

/** The alert kinds of key budgets (config ALERT_EVENT_TYPES); their claims' scope is the period start. */
export const KEY_BUDGET_ALERT_KINDS = { eighty: 'key_budget.80', full: 'key_budget.100' } as const;

export async function listKeysPage(db: Kysely<Database>, filter: KeyFilter, page: PageRequest<KeyCursor>): Promise<Page<ApiKeyRecord, KeyCursor>> {
  let query = db.selectFrom('api_keys').selectAll();
  if (filter.accountId !== undefined) query = query.where('account_id', '=', filter.accountId);
  const now = BigInt(toEpochMilliseconds(filter.now, 'now'));
  switch (filter.status) {
    case 'deleted':
      query = query.where('deleted_at', 'is not', null);
      break;
    case 'disabled':
      query = query.where('deleted_at', 'is', null).where('disabled', '=', 1);
      break;
    case 'expired':
      query = query.where('deleted_at', 'is', null).where('disabled', '=', 0).where('expires_at', '<=', now);
      break;
    case 'active':
      query = query.where('deleted_at', 'is', null).where('disabled', '=', 0).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
      break;
    case undefined:
      query = query.where('deleted_at', 'is', null);
      break;
  }
  const after = page.after;
  if (after !== undefined) {
    const createdAt = BigInt(toEpochMilliseconds(after.createdAt, 'cursor'));
    query = query.where((eb) => eb.or([eb('created_at', '>', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '>', after.id)])]));
  }
  const rows = await query.orderBy('created_at', 'asc').orderBy('id', 'asc').limit(page.limit + 1).execute();
  const keys = rows.map(decodeApiKey);
  if (keys.length <= page.limit) return { rows: keys };
  const kept = keys.slice(0, page.limit);
  const last = kept.at(-1);
  return last === undefined ? { rows: kept } : { rows: kept, next: { createdAt: last.createdAt, id: last.id } };
}

/**
 * Applies `changes` to a key that is not deleted; false when there is none. A budget whose current
 * period has no spend row yet starts it from the key's charges in that period (the ledger), so a
 * budget set on a key that has spent already counts what it spent.
 */
export async function updateKey(transaction: Kysely<Database>, keyId: string, changes: KeyChanges): Promise<boolean> {
  const values: Updateable<ApiKeysTable> = {};
  if (changes.name !== undefined) values.name = changes.name;
  if (changes.models !== undefined) values.models = encodeModels(changes.models);
  if (changes.requestsPerWindow !== undefined) values.requests_per_window = changes.requestsPerWindow;
  if (changes.tokensPerMinute !== undefined) values.tokens_per_minute = changes.tokensPerMinute;
  if (changes.expiresAt !== undefined) values.expires_at = changes.expiresAt === null ? null : toEpochMilliseconds(changes.expiresAt, 'expiresAt');
  if (changes.budget !== undefined) {
    values.budget_nanos = changes.budget?.limitNanos ?? null;
    values.budget_period = changes.budget?.period ?? null;
  }
  const updated =
    Object.keys(values).length === 0
      ? await transaction.selectFrom('api_keys').select('account_id').where('id', '=', keyId).where('deleted_at', 'is', null).executeTakeFirst()
      : await transaction.updateTable('api_keys').set(values).where('id', '=', keyId).where('deleted_at', 'is', null).returning('account_id').executeTakeFirst();
  if (updated === undefined) return false;
  if (changes.budget !== undefined && changes.budget !== null) {
    await seedKeySpend(transaction, keyId, toText(updated.account_id, 'api_keys.account_id'), changes.budget.current);
  }
  return true;
}

async function seedKeySpend(transaction: Kysely<Database>, keyId: string, accountId: string, window: BudgetWindow): Promise<void> {
  const start = toEpochMilliseconds(window.start, 'budget period start');
  await sql`insert into key_spend (key_id, period, period_start, spent_nanos, reserved_nanos)
    select ${keyId}, ${window.period}, cast(${start} as bigint), coalesce(sum(amount_nanos), 0), 0 from ledger
    where account_id = ${accountId} and key_id = ${keyId} and kind = 'charge' and created_at >= ${start}
    on conflict (key_id, period, period_start) do nothing`.execute(transaction);
}

/** A new secret for a key that is not deleted; false when there is none. */
export async function rotateKey(transaction: Kysely<Database>, keyId: string, secret: { prefix: string; hash: string }): Promise<boolean> {
  const updated = await transaction
    .updateTable('api_keys')
    .set({ prefix: secret.prefix, hash: secret.hash })
    .where('id', '=', keyId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return updated.numUpdatedRows === 1n;
}

/** Marks a key deleted at `at`; false when there is no such key or it is deleted already. */
export async function deleteKey(transaction: Kysely<Database>, keyId: string, at: Date): Promise<boolean> {
  const updated = await transaction
    .updateTable('api_keys')
    .set({ deleted_at: toEpochMilliseconds(at, 'deletedAt') })
    .where('id', '=', keyId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return updated.numUpdatedRows === 1n;
}

export async function keySpend(db: Kysely<Database>, keyId: string, window: BudgetWindow): Promise<KeySpend> {
  const row = await db
    .selectFrom('key_spend')
    .select(['spent_nanos', 'reserved_nanos'])
    .where('key_id', '=', keyId)
    .where('period', '=', window.period)
    .where('period_start', '=', BigInt(toEpochMilliseconds(window.start, 'budget period start')))
    .executeTakeFirst();
  if (row === undefined) return { spentNanos: 0n, reservedNanos: 0n };
  return { spentNanos: toBigInt(row.spent_nanos, 'key_spend.spent_nanos'), reservedNanos: toBigInt(row.reserved_nanos, 'key_spend.reserved_nanos') };
}

/**
 * Keys at 80% or more of their budget in the current period and not yet claimed at each level they
 * reached: 80% is 5 × spent ≥ 4 × budget (no overflow below a budget of 1.8 billion USD).
 */
export async function keyBudgetLevels(db: Kysely<Database>, current: readonly BudgetWindow[], limit: number): Promise<KeyBudgetLevel[]> {
  if (current.length === 0) return [];
  const scope = sql<string>`cast(key_spend.period_start as text)`;
  const rows = await db
    .selectFrom('api_keys')
    .innerJoin('key_spend', (join) => join.onRef('key_spend.key_id', '=', 'api_keys.id').onRef('key_spend.period', '=', 'api_keys.budget_period'))
    .leftJoin('alert_claims as eighty', (join) =>
      join.onRef('eighty.subject_id', '=', 'api_keys.id').on('eighty.kind', '=', KEY_BUDGET_ALERT_KINDS.eighty).on('eighty.scope', '=', scope),
    )
    .leftJoin('alert_claims as full', (join) =>
      join.onRef('full.subject_id', '=', 'api_keys.id').on('full.kind', '=', KEY_BUDGET_ALERT_KINDS.full).on('full.scope', '=', scope),
    )
    .selectAll('api_keys')
    .select(['key_spend.period_start', 'key_spend.spent_nanos', 'eighty.claimed_at as claimed_eighty', 'full.claimed_at as claimed_full'])
    .where('api_keys.deleted_at', 'is', null)
    .where('api_keys.budget_nanos', 'is not', null)
    .where((eb) =>
      eb.or(current.map((window) => eb.and([eb('key_spend.period', '=', window.period), eb('key_spend.period_start', '=', BigInt(toEpochMilliseconds(window.start, 'period start')))]))),
    )
    .where((eb) => eb(eb('key_spend.spent_nanos', '*', 5n), '>=', eb('api_keys.budget_nanos', '*', 4n)))
    .where((eb) =>
      eb.or([eb('eighty.claimed_at', 'is', null), eb.and([eb('full.claimed_at', 'is', null), eb('key_spend.spent_nanos', '>=', eb.ref('api_keys.budget_nanos'))])]),
    )
    .orderBy('api_keys.id')
    .limit(limit)
    .execute();
  return rows.map((row) => {
    const key = decodeApiKey(row);
    if (key.budget === undefined) throw new Error('a budgeted key decoded without its budget');
    const start = toBigInt(row.period_start, 'key_spend.period_start');
    return {
      key: { ...key, budget: key.budget },
      window: { period: toBudgetPeriod(row.budget_period, 'api_keys.budget_period'), start: new Date(Number(start)) },
      periodScope: start.toString(),
      spentNanos: toBigInt(row.spent_nanos, 'key_spend.spent_nanos'),
      claimed80: row.claimed_eighty !== null,
      claimed100: row.claimed_full !== null,
    };
  });
}
