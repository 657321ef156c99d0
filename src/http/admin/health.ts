/**
 * `/admin/v1/health/requests` and `/admin/v1/health/rotations` (viewer and up): outages in sight
 * (docs/architecture.md, "Outages in sight"). The request log's figures per UTC hour or day and per
 * model or target, and the history of targets taken out of rotation and back.
 */
import { z } from 'zod';
import { HEALTH_BUCKETS, HEALTH_GROUPINGS, healthReport, MAX_ROTATIONS, rotationReason, targetRotations } from '../../admin/health.js';
import { parseIsoDate } from '../../admin/input.js';
import type { DurationFigures } from '../../store/store.js';
import { requireRole } from './auth.js';
import type { AdminApp, AdminRouteDeps } from './context.js';
import { isoInstant } from './report-schemas.js';
import { errorResponses } from './schemas.js';

const rangeQuery = {
  from: isoInstant.optional().describe('At or after this time (ISO 8601); a day before `to` when absent.'),
  to: isoInstant.optional().describe('Before this time (ISO 8601); now when absent.'),
};

const durationSchema = z.object({
  p50: z.number().int().describe('Median (nearest rank), milliseconds.'),
  p95: z.number().int().describe('95th percentile (nearest rank), milliseconds.'),
  max: z.number().int(),
});

const groupTotalsSchema = {
  requests: z.number().int(),
  errors: z.number().int().describe('Requests that ended with an error code (also mid-stream).'),
  error_rate: z.number().describe('errors / requests, 0 to 1, to four decimals.'),
};

const healthReportSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    bucket: z.enum(HEALTH_BUCKETS),
    by: z.enum(HEALTH_GROUPINGS),
    groups: z.array(z.object({ group: z.string(), ...groupTotalsSchema })).describe('Every model or target with requests in the range, most requests first.'),
    rows: z.array(
      z.object({
        bucket_start: z.string().describe('The UTC hour or day, its start.'),
        group: z.string().describe('The catalog model, or the target (`provider/model`) that answered or last failed.'),
        ...groupTotalsSchema,
        first_byte_ms: durationSchema.nullable().describe('Time to the first byte of the answer, over the requests that were sent one; null when none was.'),
        duration_ms: durationSchema.describe('From arrival to the last byte, over every request.'),
      }),
    ),
  })
  .meta({ id: 'HealthReport' });

const rotationSchema = z
  .object({
    id: z.number().int(),
    target: z.string().describe('`provider/model`, or the provider with scope `provider`.'),
    scope: z.enum(['target', 'provider']).describe('`provider`: the provider refused our credentials, and every target of it was taken out.'),
    provider: z.string(),
    instance: z.string().describe('The gateway process that saw it (host:pid): target health is kept per process.'),
    out_at: z.string().describe('When it was taken out of rotation.'),
    back_at: z.string().nullable().describe('When the same process saw it answer again; null while still out (or if that process stopped first).'),
    out_ms: z.number().int().nullable().describe('How long it was out, milliseconds; null while still out.'),
    reason: z.string().nullable().describe('The failure that took it out: its kind (`status`, `network`, `timeout`, `credentials`…) and the upstream status when it answered, like `status 500`.'),
    cooling_until: z.string().nullable().describe('Until when it was to be skipped before being tried again.'),
  })
  .meta({ id: 'TargetRotation' });

export function registerHealthRoutes(app: AdminApp, deps: AdminRouteDeps): void {
  const read = { preValidation: requireRole('viewer') };

  app.get('/health/requests', {
    ...read,
    schema: {
      tags: ['health'],
      summary: 'Requests, errors, error rate, time to first byte and duration (p50, p95, max) per UTC hour or day and per model or target, from the request log',
      querystring: z.object({
        ...rangeQuery,
        bucket: z.enum(HEALTH_BUCKETS).default('hour').describe('One row per UTC hour or day (and group).'),
        by: z.enum(HEALTH_GROUPINGS).default('model').describe('Per catalog model, or per upstream target.'),
      }),
      response: { 200: healthReportSchema, ...errorResponses },
    },
  }, async (request) => {
    const { bucket, by } = request.query;
    const report = await healthReport(deps.store, { ...instants(request.query), bucket, by }, new Date(deps.now()));
    return {
      from: report.from.toISOString(),
      to: report.to.toISOString(),
      bucket: report.bucket,
      by: report.by,
      groups: report.groups.map((group) => ({ group: group.group, requests: group.requests, errors: group.errors, error_rate: group.errorRate })),
      rows: report.rows.map((row) => ({
        bucket_start: row.bucketStart.toISOString(),
        group: row.group,
        requests: row.requests,
        errors: row.errors,
        error_rate: row.errorRate,
        first_byte_ms: row.firstByteMs === null ? null : durationView(row.firstByteMs),
        duration_ms: durationView(row.latencyMs),
      })),
    };
  });

  app.get('/health/rotations', {
    ...read,
    schema: {
      tags: ['health'],
      summary: 'Targets taken out of rotation and back, newest first: every outage that overlaps the range, as each gateway process saw it',
      querystring: z.object({
        ...rangeQuery,
        target: z.string().max(300).optional().describe('One target (`provider/model`) or provider.'),
        limit: z.coerce.number().int().min(1).max(MAX_ROTATIONS).default(100),
      }),
      response: { 200: z.object({ from: z.string(), to: z.string(), data: z.array(rotationSchema) }), ...errorResponses },
    },
  }, async (request) => {
    const { target, limit } = request.query;
    const result = await targetRotations(deps.store, { ...instants(request.query), ...(target === undefined ? {} : { target }), limit }, new Date(deps.now()));
    return {
      from: result.from.toISOString(),
      to: result.to.toISOString(),
      data: result.rotations.map((rotation) => ({
        id: rotation.id,
        target: rotation.target,
        scope: rotation.scope,
        provider: rotation.provider,
        instance: rotation.instance,
        out_at: rotation.downAt.toISOString(),
        back_at: rotation.upAt?.toISOString() ?? null,
        out_ms: rotation.upAt === null ? null : rotation.upAt.getTime() - rotation.downAt.getTime(),
        reason: rotationReason(rotation),
        cooling_until: rotation.coolingUntil?.toISOString() ?? null,
      })),
    };
  });
}

function durationView(figures: DurationFigures) {
  return { p50: figures.p50, p95: figures.p95, max: figures.max };
}

function instants(query: { from?: string | undefined; to?: string | undefined }): { from?: Date; to?: Date } {
  return { ...(query.from === undefined ? {} : { from: parseIsoDate(query.from, 'from') }), ...(query.to === undefined ? {} : { to: parseIsoDate(query.to, 'to') }) };
}
