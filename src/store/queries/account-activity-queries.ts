/**
 * The account list sorted on the server (docs/architecture.md, Request log): each account with its
 * spend in a time range (its charges in the ledger) and its last use (its latest request-log row),
 * sorted by creation, name, spend or last use, paged by keyset on (sort value, id). No migration:
 * the spend is a range scan of `ledger_account_id_created_at` and the last use a seek to the end of
 * `request_log_account_at`, per account (correlated subqueries), so a page over 500 accounts and
 * 50,000 log rows reads each account's few index entries, never the whole log.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database, StoreEngine } from '../schema.js';
import type { AccountActivityRecord, AccountFilter, AccountListCursor, AccountSort, Page, PageRequest, TimeRange } from '../store.js';
import { pageOf } from './admin-queries.js';
import { decodeAccount, toBigInt, toEpochMilliseconds, toSafeNumber } from './row-decoding.js';

/** A last use for an account never used: below every real time, so it sorts last when newest come first. */
const NEVER = -1;

export async function listAccountActivity(
  db: Kysely<Database>,
  engine: StoreEngine,
  filter: AccountFilter,
  sort: { by: AccountSort; descending: boolean },
  range: TimeRange,
  page: PageRequest<AccountListCursor>,
): Promise<Page<AccountActivityRecord, AccountListCursor>> {
  const from = range.from === undefined ? null : BigInt(toEpochMilliseconds(range.from, 'from'));
  const to = range.to === undefined ? null : BigInt(toEpochMilliseconds(range.to, 'to'));
  let inner = db
    .selectFrom('accounts')
    .selectAll('accounts')
    .select([
      sql<bigint>`(select cast(coalesce(sum(ledger.amount_nanos), 0) as bigint) from ledger where ledger.account_id = accounts.id and ledger.kind = 'charge'${
        from === null ? sql`` : sql` and ledger.created_at >= ${from}`
      }${to === null ? sql`` : sql` and ledger.created_at < ${to}`})`.as('spend_nanos'),
      sql<bigint>`coalesce((select max(request_log.at) from request_log where request_log.account_id = accounts.id), ${sql.lit(NEVER)})`.as('last_used_at'),
    ]);
  if (filter.nameContains !== undefined) {
    // instr/strpos: a plain substring test, with none of LIKE's wildcards to escape.
    inner = inner.where((eb) => eb(eb.fn(engine === 'postgres' ? 'strpos' : 'instr', ['accounts.name', eb.val(filter.nameContains)]), '>', 0));
  }
  if (filter.status !== undefined) inner = inner.where('accounts.disabled', '=', filter.status === 'disabled' ? 1 : 0);
  const key = sortColumn(sort.by);
  const direction = sort.descending ? sql`desc` : sql`asc`;
  const beyond = sort.descending ? sql`<` : sql`>`;
  const after = page.after;
  const resume =
    after === undefined
      ? sql`1 = 1`
      : sql`(${key} ${beyond} ${cursorValue(sort.by, after.value)} or (${key} = ${cursorValue(sort.by, after.value)} and listed.id ${beyond} ${after.id}))`;
  const limit = page.limit + 1;
  const rows = await db
    .selectFrom(inner.as('listed'))
    .selectAll()
    .where(resume as RawBuilder<boolean>)
    .orderBy(sql`${key} ${direction}`)
    .orderBy(sql`listed.id ${direction}`)
    .limit(limit)
    .execute();
  const records = rows.map((row): AccountActivityRecord => {
    const lastUsed = toSafeNumber(row.last_used_at, 'accounts.last_used_at');
    return { ...decodeAccount(row), spendNanos: toBigInt(row.spend_nanos, 'accounts.spend_nanos'), lastUsedAt: lastUsed === NEVER ? null : new Date(lastUsed) };
  });
  return pageOf(records, page.limit, (record) => ({ sort: sort.by, descending: sort.descending, value: sortValue(sort.by, record), id: record.id }));
}

function sortColumn(by: AccountSort): RawBuilder<unknown> {
  switch (by) {
    case 'created':
      return sql`listed.created_at`;
    case 'name':
      return sql`listed.name`;
    case 'spend':
      return sql`listed.spend_nanos`;
    case 'last_used':
      return sql`listed.last_used_at`;
  }
}

/** The record's value of the sort, as a cursor keeps it. */
function sortValue(by: AccountSort, record: AccountActivityRecord): string | number {
  switch (by) {
    case 'created':
      return record.createdAt.getTime();
    case 'name':
      return record.name;
    case 'spend':
      return record.spendNanos.toString();
    case 'last_used':
      return record.lastUsedAt === null ? NEVER : record.lastUsedAt.getTime();
  }
}

/** A cursor's value as the query compares it (the cursor was checked against its sort when decoded). */
function cursorValue(by: AccountSort, value: string | number): string | bigint {
  if (by === 'name') return String(value);
  return BigInt(value);
}
