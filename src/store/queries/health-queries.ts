/**
 * Outages in sight (docs/architecture.md, "Outages in sight"): the request log's figures per UTC
 * hour or day and per model or target (requests, errors, time to first byte and duration: exact
 * nearest-rank p50 and p95, and the maximum, computed in SQL with window functions that both
 * engines have), and the history of targets taken out of rotation and back (migration 0013).
 * Buckets are epoch-millisecond arithmetic, as in usage-queries.ts.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { HealthGrouping, HealthRow, NewTargetRotation, TargetRotation } from '../store.js';
import { toEpochMilliseconds, toNullableDate, toNullableSafeNumber, toNullableText, toDate, toSafeNumber, toText } from './row-decoding.js';

const BUCKET_MILLISECONDS = { day: 86_400_000, hour: 3_600_000 } as const;

/**
 * One row per bucket and group in `[from, to)`, sorted by bucket then group. By model, rows with
 * no model (refused before one was named) are left out; by target, rows with no target (none was
 * tried). Duration counts every row; time to first byte only rows where a byte was sent.
 */
export async function requestHealthBy(db: Kysely<Database>, grouping: HealthGrouping, bucket: 'hour' | 'day', range: { from: Date; to: Date }): Promise<HealthRow[]> {
  const length = sql.lit(BUCKET_MILLISECONDS[bucket]);
  const column = grouping === 'model' ? 'model' : 'target';
  const from = BigInt(toEpochMilliseconds(range.from, 'from'));
  const to = BigInt(toEpochMilliseconds(range.to, 'to'));
  const partition = sql`partition by ${sql.ref('bucket_start')}, ${sql.ref('group_value')}`;
  // Nearest rank: the ⌈n·p⌉-th smallest, in integer arithmetic ((n·p + 99) / 100) on both engines.
  const rank = (count: string, percent: number) => sql`((${sql.ref(count)} * ${sql.lit(percent)} + 99) / 100)`;
  const result = await sql<Record<string, unknown>>`
    with picked as (
      select (at - (at % ${length})) as bucket_start, ${sql.ref(column)} as group_value, latency_ms, first_byte_ms,
        case when error_code is null then 0 else 1 end as failed
      from request_log
      where at >= ${from} and at < ${to} and ${sql.ref(column)} is not null and ${sql.ref(column)} <> ''
    ),
    ranked as (
      select bucket_start, group_value, latency_ms, first_byte_ms, failed,
        row_number() over (${partition} order by latency_ms) as latency_rank,
        count(*) over (${partition}) as requests,
        row_number() over (${partition} order by case when first_byte_ms is null then 1 else 0 end, first_byte_ms) as first_byte_rank,
        count(first_byte_ms) over (${partition}) as first_bytes
      from picked
    )
    select bucket_start, group_value,
      max(requests) as requests,
      sum(failed) as errors,
      max(case when latency_rank = ${rank('requests', 50)} then latency_ms end) as latency_p50,
      max(case when latency_rank = ${rank('requests', 95)} then latency_ms end) as latency_p95,
      max(latency_ms) as latency_max,
      max(first_bytes) as first_bytes,
      max(case when first_byte_rank = ${rank('first_bytes', 50)} then first_byte_ms end) as first_byte_p50,
      max(case when first_byte_rank = ${rank('first_bytes', 95)} then first_byte_ms end) as first_byte_p95,
      max(first_byte_ms) as first_byte_max
    from ranked
    group by bucket_start, group_value
    order by bucket_start, group_value`.execute(db);
  return result.rows.map((row) => ({
    bucketStart: new Date(toSafeNumber(row.bucket_start, 'health.bucket_start')),
    group: toText(row.group_value, 'health.group'),
    requests: toSafeNumber(row.requests, 'health.requests'),
    errors: toSafeNumber(row.errors, 'health.errors'),
    latencyMs: { p50: toSafeNumber(row.latency_p50, 'health.latency_p50'), p95: toSafeNumber(row.latency_p95, 'health.latency_p95'), max: toSafeNumber(row.latency_max, 'health.latency_max') },
    firstByteMs:
      toSafeNumber(row.first_bytes, 'health.first_bytes') === 0
        ? null
        : { p50: toSafeNumber(row.first_byte_p50, 'health.first_byte_p50'), p95: toSafeNumber(row.first_byte_p95, 'health.first_byte_p95'), max: toSafeNumber(row.first_byte_max, 'health.first_byte_max') },
  }));
}

/** Opens a rotation row: this instance took the target out. */
export async function openTargetRotation(db: Kysely<Database>, rotation: NewTargetRotation): Promise<void> {
  await db
    .insertInto('target_rotations')
    .values({
      target: rotation.target,
      scope: rotation.scope,
      provider: rotation.provider,
      instance: rotation.instance,
      down_at: toEpochMilliseconds(rotation.downAt, 'down_at'),
      up_at: null,
      failure_kind: rotation.failureKind,
      failure_status: rotation.failureStatus,
      cooling_until: rotation.coolingUntil === null ? null : toEpochMilliseconds(rotation.coolingUntil, 'cooling_until'),
    })
    .execute();
}

/** Closes this instance's open rows of the target: it answered again. */
export async function closeTargetRotation(db: Kysely<Database>, closing: { target: string; instance: string; upAt: Date }): Promise<void> {
  await db
    .updateTable('target_rotations')
    .set({ up_at: toEpochMilliseconds(closing.upAt, 'up_at') })
    .where('instance', '=', closing.instance)
    .where('target', '=', closing.target)
    .where('up_at', 'is', null)
    .execute();
}

/**
 * Rotations newest first that overlap `[from, to)`: taken out before `to` and not back before
 * `from` (still out, or back at or after it). At most `limit`.
 */
export async function listTargetRotations(db: Kysely<Database>, filter: { from: Date; to: Date; target?: string; limit: number }): Promise<TargetRotation[]> {
  const from = toEpochMilliseconds(filter.from, 'from');
  let query = db
    .selectFrom('target_rotations')
    .selectAll()
    .where('down_at', '<', BigInt(toEpochMilliseconds(filter.to, 'to')))
    .where((where) => where.or([where('up_at', 'is', null), where('up_at', '>=', BigInt(from))]));
  if (filter.target !== undefined) query = query.where('target', '=', filter.target);
  const rows = await query.orderBy('down_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
  return rows.map((row) => ({
    id: toSafeNumber(row.id, 'target_rotations.id'),
    target: toText(row.target, 'target_rotations.target'),
    scope: row.scope === 'provider' ? 'provider' : 'target',
    provider: toText(row.provider, 'target_rotations.provider'),
    instance: toText(row.instance, 'target_rotations.instance'),
    downAt: toDate(row.down_at, 'target_rotations.down_at'),
    upAt: toNullableDate(row.up_at, 'target_rotations.up_at'),
    failureKind: toNullableText(row.failure_kind, 'target_rotations.failure_kind'),
    failureStatus: toNullableSafeNumber(row.failure_status, 'target_rotations.failure_status'),
    coolingUntil: toNullableDate(row.cooling_until, 'target_rotations.cooling_until'),
  }));
}
