/**
 * `/admin/v1/requests` (the request log) and `/admin/v1/usage`: viewer and up. Both answer JSON, or
 * CSV with `format=csv`: the request log's export streams the matching rows, newest first, a page
 * at a time with the event loop free between two, up to `log.export_max_rows` (the `x-next-cursor`
 * trailer says where the next export continues); the usage export is the report's rows.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { parseIsoDate } from '../../admin/input.js';
import { exportRequestLogCsv, searchRequestLog, type RequestLogCsvExport, type RequestLogSearch } from '../../admin/request-log.js';
import { accountUsageSummary, MAX_TOP_ACCOUNTS, usageReport } from '../../admin/usage.js';
import { accountUsageView, REQUEST_LOG_CSV_COLUMNS, requestLogView, usageCsv, usageReportView } from '../../admin/views.js';
import type { RequestLogCursor } from '../../store/store.js';
import { requireRole } from './auth.js';
import type { AdminApp, AdminRouteDeps } from './context.js';
import { decodeRequestLogCursor, encodeRequestLogCursor } from './cursor.js';
import { accountUsageSchema, exportFormat, isoInstant, jsonOrCsv, requestLogEntrySchema, requestLogSurface, usageGrouping, usageReportSchema } from './report-schemas.js';
import { errorResponses, pageOf, pageQuery } from './schemas.js';

const CSV_TYPE = 'text/csv; charset=utf-8';

/** The time range of a listing's query: `from` inclusive, `to` exclusive. */
export const timeRangeQuery = {
  from: isoInstant.optional().describe('At or after this time (ISO 8601).'),
  to: isoInstant.optional().describe('Before this time (ISO 8601).'),
};

const range = {
  ...timeRangeQuery,
  account: z.string().max(200).optional().describe('Account id or name.'),
};

/** The trailer of a request log export: the cursor to continue from, empty when the export holds every matching row. */
const NEXT_CURSOR_TRAILER = 'x-next-cursor';

export function registerRequestLogRoutes(app: AdminApp, deps: AdminRouteDeps): void {
  const { store } = deps;
  const exportMaxRows = deps.config.log.export_max_rows;
  const read = { preValidation: requireRole('viewer') };

  app.get('/requests', {
    ...read,
    schema: {
      tags: ['request log'],
      summary: `Search the request log, newest first; \`format=csv\` exports the matching rows (after \`cursor\`, at most ${exportMaxRows}; the \`${NEXT_CURSOR_TRAILER}\` trailer continues a longer export)`,
      querystring: pageQuery.extend({
        ...range,
        key: z.string().max(200).optional().describe('Key id.'),
        model: z.string().max(200).optional().describe('Catalog model id.'),
        surface: requestLogSurface.optional().describe('The endpoint the request was sent to.'),
        status: z.coerce.number().int().min(100).max(599).optional().describe('HTTP status of the answer.'),
        request_id: z.string().max(200).optional().describe('The `x-request-id` of one request.'),
        errors: z
          .enum(['true', 'false'])
          .optional()
          .describe('`true`: only the errors, a status of 400 or more or an error code (a stream that failed midway answered 200).'),
        cursor: pageQuery.shape.cursor.describe(`\`next_cursor\` of the previous page; with \`format=csv\`, the \`${NEXT_CURSOR_TRAILER}\` trailer of the previous export.`),
        format: exportFormat,
      }),
      response: { 200: jsonOrCsv(pageOf(requestLogEntrySchema), `Columns: ${REQUEST_LOG_CSV_COLUMNS.join(', ')} (no bodies).`), ...errorResponses },
    },
  }, async (request, reply) => {
    const query = request.query;
    const search: RequestLogSearch = {
      ...instants(query.from, query.to),
      ...(query.account === undefined ? {} : { accountRef: query.account }),
      ...(query.key === undefined ? {} : { keyId: query.key }),
      ...(query.model === undefined ? {} : { model: query.model }),
      ...(query.surface === undefined ? {} : { surface: query.surface }),
      ...(query.status === undefined ? {} : { status: query.status }),
      ...(query.request_id === undefined ? {} : { requestId: query.request_id }),
      ...(query.errors === 'true' ? { errorsOnly: true } : {}),
    };
    if (query.format === 'csv') {
      // The filter is checked and the first page read before the first byte: a refusal is an error answer.
      const lines = await exportRequestLogCsv(store, search, { maxRows: exportMaxRows, ...optionalCursor(query.cursor) });
      let next: RequestLogCursor | undefined;
      const csv = untilReturned(lines, (cursor) => (next = cursor));
      // The typed reply knows the schema's bodies only. Fastify pipes the stream with backpressure,
      // sends the trailer once it has ended, and destroys it when the client goes (which ends the
      // generator, and with it the queries). A page at most is queued ahead of the socket.
      const untyped: FastifyReply = reply.type(CSV_TYPE).header('content-disposition', 'attachment; filename="requests.csv"');
      // A trailer needs the chunked coding, which an HTTP/1.0 client must not be sent (RFC 9112 §6.1).
      if (request.raw.httpVersion !== '1.0') untyped.trailer(NEXT_CURSOR_TRAILER, async () => encodeRequestLogCursor(next) ?? '');
      return untyped.send(Readable.from(csv, { highWaterMark: 1 }));
    }
    const page = await searchRequestLog(store, search, { limit: query.limit, ...optionalCursor(query.cursor) });
    return { data: page.rows.map(requestLogView), has_more: page.next !== undefined, next_cursor: encodeRequestLogCursor(page.next) };
  });

  app.get('/usage', {
    ...read,
    schema: {
      tags: ['usage'],
      summary: 'Requests, tokens, errors and cost per UTC day or hour, model, key, account or endpoint, over a time range',
      querystring: z.object({ ...range, by: usageGrouping.default('day').describe('One row per UTC day or hour, model, key, account or endpoint.'), format: exportFormat }),
      response: { 200: jsonOrCsv(usageReportSchema, 'The group (its column named after `by`), requests, tokens, errors, cost_usd, excess_usd; no total row.'), ...errorResponses },
    },
  }, async (request, reply) => {
    const { account, by, format } = request.query;
    const view = usageReportView(await usageReport(store, { ...(account === undefined ? {} : { accountRef: account }), ...instants(request.query.from, request.query.to), by }));
    if (format === 'csv') return reply.type(CSV_TYPE).header('content-disposition', `attachment; filename="usage-by-${by}.csv"`).send(usageCsv(view));
    return view;
  });

  app.get('/usage/accounts', {
    ...read,
    schema: {
      tags: ['usage'],
      summary: 'Usage by account over a time range: the top accounts by spend with their names, every other account summed in one row',
      querystring: z.object({ ...timeRangeQuery, top: z.coerce.number().int().min(1).max(MAX_TOP_ACCOUNTS).default(10).describe('How many accounts to name.') }),
      response: { 200: accountUsageSchema, ...errorResponses },
    },
  }, async (request) => {
    const { from, to, top } = request.query;
    return accountUsageView(await accountUsageSummary(store, { ...instants(from, to), top }));
  });
}

function optionalCursor(cursor: string | undefined) {
  const after = decodeRequestLogCursor(cursor);
  return after === undefined ? {} : { after };
}

/** `from` and `to` of a query, by the same date rules as the CLI's (admin/input.ts). */
export function instants(from: string | undefined, to: string | undefined): { from?: Date; to?: Date } {
  return { ...(from === undefined ? {} : { from: parseIsoDate(from, 'from') }), ...(to === undefined ? {} : { to: parseIsoDate(to, 'to') }) };
}

/** The chunks of `lines`; once it has ended, `ended` gets what it returned (where the next export continues, if anywhere). */
async function* untilReturned(lines: RequestLogCsvExport, ended: (next: RequestLogCursor | undefined) => void): AsyncGenerator<string> {
  ended(yield* lines);
}
