/**
 * The request log (migration 0007): batches of rows appended by the writer, searched newest first
 * by keyset (arrival time, then id), and pruned a few rows at a time. Nothing here is on the
 * request path: the writer calls `appendRequestLog` with whatever has queued up. On SQLite a batch
 * goes through one statement prepared once, run per row in one transaction
 * (`createSqliteRequestLogAppend`, sqlite/sqlite-request-log.ts): compiling a many-row INSERT through Kysely and preparing it
 * again for every batch cost more than writing the rows. PostgreSQL takes the batch as one
 * multi-row INSERT through Kysely.
 *
 * A refusal before the key, the route's surface or the model was known (a 401, a 404 under `/v1`, a
 * body that does not decode) has no account, key, surface or model: its columns (NOT NULL since
 * migration 0007) hold the empty string, read back as null. No migration rewrites the table for it.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { Page, PageRequest, RequestLogCursor, RequestLogEntry, RequestLogFilter, RequestLogRecord } from '../store.js';
import { pageOf } from './admin-queries.js';
import { assertTokenCounts } from './ledger-queries.js';
import { toBigInt, toDate, toEpochMilliseconds, toFlag, toNullableSafeNumber, toNullableText, toSafeNumber, toText } from './row-decoding.js';

/** Largest value of a 32-bit column (latency, tokens). */
const MAX_INT32 = 2_147_483_647;

export async function appendRequestLog(db: Kysely<Database>, entries: readonly RequestLogEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await db.insertInto('request_log').values(entries.map(requestLogRow)).execute();
}

/** A request-log row as it is written (also by SQLite's prepared INSERT: sqlite/sqlite-request-log.ts). */
export type RequestLogRowValues = ReturnType<typeof requestLogRow>;

/** Every column but the bodies, which may be large and which an export leaves out. */
const COLUMNS_WITHOUT_BODIES = [
  'id',
  'at',
  'request_id',
  'account_id',
  'key_id',
  'surface',
  'model',
  'target',
  'status',
  'error_code',
  'stream',
  'latency_ms',
  'first_byte_ms',
  'input_tokens',
  'cached_input_tokens',
  'cache_write_input_tokens',
  'output_tokens',
  'reasoning_tokens',
  'cost_nanos',
] as const;

export async function listRequestLog(
  db: Kysely<Database>,
  filter: RequestLogFilter,
  page: PageRequest<RequestLogCursor>,
  options: { bodies?: boolean } = {},
): Promise<Page<RequestLogRecord, RequestLogCursor>> {
  const bodies = options.bodies ?? true;
  // The account's and the key's names are joined by primary key, a seek per row of the page: the
  // scan stays on the log's own `(filter, at)` index, newest first.
  let query = db
    .selectFrom('request_log')
    .leftJoin('accounts', 'accounts.id', 'request_log.account_id')
    .leftJoin('api_keys', 'api_keys.id', 'request_log.key_id')
    .select([
      ...COLUMNS_WITHOUT_BODIES.map((column) => `request_log.${column}` as const),
      ...(bodies ? (['request_log.request_body', 'request_log.response_body'] as const) : []),
      'accounts.name as account_name',
      'api_keys.name as key_name',
    ]);
  if (filter.from !== undefined) query = query.where('request_log.at', '>=', BigInt(toEpochMilliseconds(filter.from, 'from')));
  if (filter.to !== undefined) query = query.where('request_log.at', '<', BigInt(toEpochMilliseconds(filter.to, 'to')));
  if (filter.accountId !== undefined) query = query.where('request_log.account_id', '=', filter.accountId);
  if (filter.keyId !== undefined) query = query.where('request_log.key_id', '=', filter.keyId);
  if (filter.model !== undefined) query = query.where('request_log.model', '=', filter.model);
  if (filter.surface !== undefined) query = query.where('request_log.surface', '=', filter.surface);
  if (filter.status !== undefined) query = query.where('request_log.status', '=', filter.status);
  if (filter.requestId !== undefined) query = query.where('request_log.request_id', '=', filter.requestId);
  // Errors are checked row by row along the time index (no index of their own: a third of a busy
  // log's rows can be errors, and a page of them is found after a few pages' worth of rows).
  if (filter.errorsOnly === true) query = query.where((eb) => eb.or([eb('request_log.status', '>=', 400), eb('request_log.error_code', 'is not', null)]));
  const after = page.after;
  if (after !== undefined) {
    const at = BigInt(toEpochMilliseconds(after.at, 'cursor'));
    // `at <= cursor` bounds the index range on both engines; the OR alone (at < t, or at = t and
    // id < n) made SQLite walk the index from the newest row and skip past every row already paged,
    // so paging through n rows cost n² (an export of 200,000 rows took seconds per thousand).
    query = query.where('request_log.at', '<=', at).where((eb) => eb.or([eb('request_log.at', '<', at), eb('request_log.id', '<', after.id)]));
  }
  const rows = await query.orderBy('request_log.at', 'desc').orderBy('request_log.id', 'desc').limit(page.limit + 1).execute();
  return pageOf(
    rows.map((row) => decodeRequestLogRow(bodies ? (row as RequestLogRow) : { ...row, request_body: null, response_body: null })),
    page.limit,
    (record) => ({ at: record.at, id: record.id }),
  );
}

/** Deletes the oldest rows before `before`, at most `limit` of them in one statement. */
export async function pruneRequestLog(db: Kysely<Database>, before: Date, limit: number): Promise<number> {
  const doomed = db
    .selectFrom('request_log')
    .select('id')
    .where('at', '<', BigInt(toEpochMilliseconds(before, 'before')))
    .orderBy('at', 'asc')
    .limit(limit);
  const result = await db.deleteFrom('request_log').where('id', 'in', doomed).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Checks an entry and encodes it as its row. */
export function requestLogRow(entry: RequestLogEntry) {
  assertTokenCounts(entry);
  if (typeof entry.costNanos !== 'bigint' || entry.costNanos < 0n) throw new RangeError(`costNanos must be a bigint ≥ 0, got ${String(entry.costNanos)}`);
  return {
    at: toEpochMilliseconds(entry.at, 'at'),
    request_id: entry.requestId,
    account_id: entry.accountId ?? UNKNOWN,
    key_id: entry.keyId ?? UNKNOWN,
    surface: entry.surface ?? UNKNOWN,
    model: entry.model ?? UNKNOWN,
    target: entry.target,
    status: entry.status,
    error_code: entry.errorCode,
    stream: entry.stream ? 1 : 0,
    latency_ms: clampInt32(entry.latencyMs),
    first_byte_ms: entry.firstByteMs === null ? null : clampInt32(entry.firstByteMs),
    input_tokens: entry.inputTokens,
    cached_input_tokens: entry.cachedInputTokens,
    cache_write_input_tokens: entry.cacheWriteInputTokens ?? 0,
    output_tokens: entry.outputTokens,
    reasoning_tokens: entry.reasoningTokens,
    cost_nanos: entry.costNanos,
    request_body: entry.requestBody,
    response_body: entry.responseBody,
  };
}

/** How a column that is NOT NULL holds "not known" (see the top of this file). */
const UNKNOWN = '';

function knownText(value: unknown, name: string): string | null {
  const text = toText(value, name);
  return text === UNKNOWN ? null : text;
}

/** Durations are measured, so never refused: a negative one (a clock step) is 0, a huge one capped. */
function clampInt32(value: number): number {
  return Number.isFinite(value) ? Math.min(MAX_INT32, Math.max(0, Math.round(value))) : 0;
}

interface RequestLogRow {
  id: unknown;
  at: unknown;
  request_id: unknown;
  account_id: unknown;
  key_id: unknown;
  surface: unknown;
  model: unknown;
  target: unknown;
  status: unknown;
  error_code: unknown;
  stream: unknown;
  latency_ms: unknown;
  first_byte_ms: unknown;
  input_tokens: unknown;
  cached_input_tokens: unknown;
  cache_write_input_tokens: unknown;
  output_tokens: unknown;
  reasoning_tokens: unknown;
  cost_nanos: unknown;
  request_body: unknown;
  response_body: unknown;
  account_name: unknown;
  key_name: unknown;
}

function decodeRequestLogRow(row: RequestLogRow): RequestLogRecord {
  const field = (name: string) => `request_log.${name}`;
  return {
    id: toSafeNumber(row.id, field('id')),
    at: toDate(row.at, field('at')),
    requestId: toText(row.request_id, field('request_id')),
    accountId: knownText(row.account_id, field('account_id')),
    keyId: knownText(row.key_id, field('key_id')),
    surface: knownText(row.surface, field('surface')),
    model: knownText(row.model, field('model')),
    target: toNullableText(row.target, field('target')),
    status: toSafeNumber(row.status, field('status')),
    errorCode: toNullableText(row.error_code, field('error_code')),
    stream: toFlag(row.stream, field('stream')),
    latencyMs: toSafeNumber(row.latency_ms, field('latency_ms')),
    firstByteMs: toNullableSafeNumber(row.first_byte_ms, field('first_byte_ms')),
    inputTokens: toSafeNumber(row.input_tokens, field('input_tokens')),
    cachedInputTokens: toSafeNumber(row.cached_input_tokens, field('cached_input_tokens')),
    cacheWriteInputTokens: toSafeNumber(row.cache_write_input_tokens, field('cache_write_input_tokens')),
    outputTokens: toSafeNumber(row.output_tokens, field('output_tokens')),
    reasoningTokens: toSafeNumber(row.reasoning_tokens, field('reasoning_tokens')),
    costNanos: toBigInt(row.cost_nanos, field('cost_nanos')),
    requestBody: toNullableText(row.request_body, field('request_body')),
    responseBody: toNullableText(row.response_body, field('response_body')),
    accountName: toNullableText(row.account_name, 'accounts.name'),
    keyName: toNullableText(row.key_name, 'api_keys.name'),
  };
}
