/**
 * Outages in sight (docs/architecture.md, "Outages in sight"): the request log's figures per UTC
 * hour or day and per model or target over a time range (requests, errors, error rate, time to
 * first byte and duration, p50/p95/max computed by the database), and the history of targets taken
 * out of rotation and back. One service for the admin API (`/admin/v1/health/…`) and the console.
 */
import type { HealthGrouping, HealthRow, OperationsStore, TargetRotation } from '../store/store.js';
import { AdminError } from './admin-error.js';
import { requireOrderedRange, requireValidDate } from './input.js';

export const HEALTH_GROUPINGS = ['model', 'target'] as const satisfies readonly HealthGrouping[];
export const HEALTH_BUCKETS = ['hour', 'day'] as const;
export type HealthBucket = (typeof HEALTH_BUCKETS)[number];

const BUCKET_MILLISECONDS: Record<HealthBucket, number> = { hour: 3_600_000, day: 86_400_000 };
/** The most buckets a report spans (about 41 days by hour, 2 years by day): a chart, not an export. */
export const MAX_HEALTH_BUCKETS = 1_000;
/** Without `from`: the last day. */
const DEFAULT_SPAN_MS = 86_400_000;

export interface HealthReportRequest {
  from?: Date;
  to?: Date;
  bucket?: HealthBucket;
  by?: HealthGrouping;
}

export interface HealthGroupTotal {
  group: string;
  requests: number;
  errors: number;
  /** errors / requests, 0 to 1. */
  errorRate: number;
}

export interface HealthReport {
  from: Date;
  to: Date;
  bucket: HealthBucket;
  by: HealthGrouping;
  /** Every group in the range, most requests first (then by name). */
  groups: HealthGroupTotal[];
  rows: Array<HealthRow & { errorRate: number }>;
}

/** `to` defaults to now, `from` to a day before `to`. */
export function healthRange(request: { from?: Date; to?: Date }, now: Date): { from: Date; to: Date } {
  const to = request.to === undefined ? now : requireValidDate(request.to, 'to');
  const from = request.from === undefined ? new Date(to.getTime() - DEFAULT_SPAN_MS) : requireValidDate(request.from, 'from');
  requireOrderedRange(from, to);
  return { from, to };
}

export async function healthReport(store: Pick<OperationsStore, 'requestHealthBy'>, request: HealthReportRequest, now: Date): Promise<HealthReport> {
  const { from, to } = healthRange(request, now);
  const bucket = request.bucket ?? 'hour';
  const by = request.by ?? 'model';
  const buckets = Math.ceil((to.getTime() - from.getTime()) / BUCKET_MILLISECONDS[bucket]);
  if (buckets > MAX_HEALTH_BUCKETS) {
    throw new AdminError('invalid_input', `the range spans ${buckets} ${bucket}s; at most ${MAX_HEALTH_BUCKETS} (choose bucket=day or a shorter range)`);
  }
  const rows = await store.requestHealthBy(by, bucket, { from, to });
  const totals = new Map<string, HealthGroupTotal>();
  for (const row of rows) {
    const total = totals.get(row.group) ?? { group: row.group, requests: 0, errors: 0, errorRate: 0 };
    total.requests += row.requests;
    total.errors += row.errors;
    totals.set(row.group, total);
  }
  const groups = [...totals.values()]
    .map((total) => ({ ...total, errorRate: rate(total.errors, total.requests) }))
    .sort((left, right) => right.requests - left.requests || (left.group < right.group ? -1 : left.group > right.group ? 1 : 0));
  return { from, to, bucket, by, groups, rows: rows.map((row) => ({ ...row, errorRate: rate(row.errors, row.requests) })) };
}

/** The most rotations one listing returns. */
export const MAX_ROTATIONS = 500;

export async function targetRotations(
  store: Pick<OperationsStore, 'listTargetRotations'>,
  request: { from?: Date; to?: Date; target?: string; limit?: number },
  now: Date,
): Promise<{ from: Date; to: Date; rotations: TargetRotation[] }> {
  const { from, to } = healthRange(request, now);
  const limit = Math.min(Math.max(request.limit ?? 100, 1), MAX_ROTATIONS);
  const rotations = await store.listTargetRotations({ from, to, limit, ...(request.target === undefined ? {} : { target: request.target }) });
  return { from, to, rotations };
}

/** Why a target was taken out, in words: the failure's kind and the upstream's status when it answered. */
export function rotationReason(rotation: Pick<TargetRotation, 'failureKind' | 'failureStatus'>): string | null {
  if (rotation.failureKind === null) return null;
  return rotation.failureStatus === null ? rotation.failureKind : `${rotation.failureKind} ${rotation.failureStatus}`;
}

/** A ratio kept to four decimals, 0 for no requests. */
function rate(errors: number, requests: number): number {
  return requests === 0 ? 0 : Math.round((errors / requests) * 10_000) / 10_000;
}
