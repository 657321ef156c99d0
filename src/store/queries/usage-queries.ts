/**
 * Usage grouped by UTC day or hour, model, key, account or endpoint, over a time range: tokens, charges and
 * cost from the ledger (exact, what was billed), and error counts from the request log. Times are epoch
 * milliseconds, so a UTC day or hour starts at a multiple of its length: the bucket is plain
 * integer arithmetic, the same on both engines. Sums are cast back to `bigint` because PostgreSQL
 * widens `sum(bigint)` to `numeric` (which pg returns as a string) while SQLite keeps integers.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../schema.js';
import type { ErrorCountRow, UsageGrouping, UsageGroupRow, UsageRange } from '../store.js';
import { toBigInt, toEpochMilliseconds, toNullableText, toSafeNumber } from './row-decoding.js';

const BUCKET_MILLISECONDS = { day: 86_400_000, hour: 3_600_000 } as const;

/**
 * The endpoint group of the charges whose endpoint nobody knows: those written before migration
 * 0012, whose ledger rows have no surface. (A logged request to no endpoint, such as an unknown
 * route's 404, is in the group '' instead, as a request with no key or model is.)
 */
export const UNKNOWN_SURFACE = 'unknown';

/** A table's columns a grouping reads. */
interface GroupColumns {
  time: string;
  model: string;
  key: string;
  account: string;
  /** The surface, with what stands for a row that has none. */
  surface: RawBuilder<unknown>;
}

const LEDGER_COLUMNS: GroupColumns = { time: 'created_at', model: 'model', key: 'key_id', account: 'account_id', surface: sql`coalesce(${sql.ref('surface')}, ${sql.lit(UNKNOWN_SURFACE)})` };
// NOT NULL since migration 0007: a request to no endpoint has '' (request-log-queries.ts).
const REQUEST_LOG_COLUMNS: GroupColumns = { time: 'at', model: 'model', key: 'key_id', account: 'account_id', surface: sql`${sql.ref('surface')}` };

/** The grouping expression over a table's columns (literals only, no parameters, so it can repeat in GROUP BY). */
function groupExpression(grouping: UsageGrouping, columns: GroupColumns): RawBuilder<unknown> {
  switch (grouping) {
    case 'model':
      return sql`coalesce(${sql.ref(columns.model)}, '')`;
    case 'key':
      return sql`coalesce(${sql.ref(columns.key)}, '')`;
    case 'account':
      return sql`coalesce(${sql.ref(columns.account)}, '')`;
    case 'endpoint':
      return columns.surface;
    case 'day':
    case 'hour': {
      const length = sql.lit(BUCKET_MILLISECONDS[grouping]);
      return sql`(${sql.ref(columns.time)} - (${sql.ref(columns.time)} % ${length}))`;
    }
  }
}

function decodeGroup(grouping: UsageGrouping, value: unknown): string {
  if (grouping === 'day' || grouping === 'hour') return new Date(toSafeNumber(value, 'usage.group')).toISOString();
  return toNullableText(value, 'usage.group') ?? '';
}

export async function usageBy(db: Kysely<Database>, grouping: UsageGrouping, range: UsageRange): Promise<UsageGroupRow[]> {
  const group = groupExpression(grouping, LEDGER_COLUMNS);
  let query = db.selectFrom('ledger').where('kind', 'in', ['charge', 'excess']);
  if (range.accountId !== undefined) query = query.where('account_id', '=', range.accountId);
  if (range.keyId !== undefined) query = query.where('key_id', '=', range.keyId);
  if (range.from !== undefined) query = query.where('created_at', '>=', BigInt(toEpochMilliseconds(range.from, 'from')));
  if (range.to !== undefined) query = query.where('created_at', '<', BigInt(toEpochMilliseconds(range.to, 'to')));
  const rows = await query
    .select([
      group.as('group_value'),
      sql<bigint>`cast(sum(case when kind = 'charge' then 1 else 0 end) as bigint)`.as('requests'),
      sql<bigint>`cast(sum(input_tokens) as bigint)`.as('input_tokens'),
      sql<bigint>`cast(sum(cached_input_tokens) as bigint)`.as('cached_input_tokens'),
      sql<bigint>`cast(sum(cache_write_input_tokens) as bigint)`.as('cache_write_input_tokens'),
      sql<bigint>`cast(sum(output_tokens) as bigint)`.as('output_tokens'),
      sql<bigint>`cast(sum(reasoning_tokens) as bigint)`.as('reasoning_tokens'),
      sql<bigint>`cast(sum(case when kind = 'charge' then amount_nanos else 0 end) as bigint)`.as('cost_nanos'),
      sql<bigint>`cast(sum(case when kind = 'excess' then amount_nanos else 0 end) as bigint)`.as('excess_nanos'),
    ])
    .groupBy(group)
    .orderBy(group)
    .execute();
  return rows.map((row) => ({
    group: decodeGroup(grouping, row.group_value),
    requests: toSafeNumber(row.requests, 'usage.requests'),
    inputTokens: toSafeNumber(row.input_tokens, 'usage.input_tokens'),
    cachedInputTokens: toSafeNumber(row.cached_input_tokens, 'usage.cached_input_tokens'),
    cacheWriteInputTokens: toSafeNumber(row.cache_write_input_tokens, 'usage.cache_write_input_tokens'),
    outputTokens: toSafeNumber(row.output_tokens, 'usage.output_tokens'),
    reasoningTokens: toSafeNumber(row.reasoning_tokens, 'usage.reasoning_tokens'),
    costNanos: toBigInt(row.cost_nanos, 'usage.cost_nanos'),
    excessNanos: toBigInt(row.excess_nanos, 'usage.excess_nanos'),
  }));
}

export async function requestErrorsBy(db: Kysely<Database>, grouping: UsageGrouping, range: UsageRange): Promise<ErrorCountRow[]> {
  const group = groupExpression(grouping, REQUEST_LOG_COLUMNS);
  let query = db.selectFrom('request_log').where('error_code', 'is not', null);
  if (range.accountId !== undefined) query = query.where('account_id', '=', range.accountId);
  if (range.keyId !== undefined) query = query.where('key_id', '=', range.keyId);
  if (range.from !== undefined) query = query.where('at', '>=', BigInt(toEpochMilliseconds(range.from, 'from')));
  if (range.to !== undefined) query = query.where('at', '<', BigInt(toEpochMilliseconds(range.to, 'to')));
  const rows = await query
    .select([group.as('group_value'), sql<bigint>`cast(count(*) as bigint)`.as('errors')])
    .groupBy(group)
    .orderBy(group)
    .execute();
  return rows.map((row) => ({ group: decodeGroup(grouping, row.group_value), errors: toSafeNumber(row.errors, 'usage.errors') }));
}
