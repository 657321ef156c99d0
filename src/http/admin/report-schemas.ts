/**
 * The zod schemas of the request log and usage routes (see schemas.ts for the rest): they validate
 * the queries, shape the JSON answers and describe the CSV exports in the OpenAPI document.
 */
import { z } from 'zod';
import { USAGE_GROUPINGS } from '../../admin/usage.js';
import { SURFACES } from '../../protocol/canonical.js';

/** The endpoints as the request log and the usage report name them, for the descriptions. */
const SURFACE_NAMES = SURFACES.map((surface) => `\`${surface}\``).join(', ');

/** An endpoint of `/v1` by its surface name, as the request log's `surface` filter takes it. */
export const requestLogSurface = z.enum(SURFACES);

/** A time as the CLI takes it: an ISO 8601 date (UTC midnight) or date-time; checked by the service. */
export const isoInstant = z.string().max(40).describe('ISO 8601 date (UTC midnight) or date-time, like 2026-11-01 or 2026-11-01T12:00:00Z.');

export const exportFormat = z.enum(['json', 'csv']).default('json').describe('`csv`: the result as CSV (text/csv) instead of JSON: every matching row (the request log: up to its export bound), not a page.');

export const requestLogEntrySchema = z
  .object({
    id: z.number().int(),
    at: z.string().describe('When the request arrived.'),
    request_id: z.string(),
    account_id: z.string().nullable().describe('Null for a request refused before its key was known (a 401).'),
    account_name: z.string().nullable().describe("The account's name as it is now (joined when the log is read); null when the row has no account."),
    key_id: z.string().nullable(),
    key_name: z.string().nullable().describe("The key's name as it is now; null when the row has no key or the key no name."),
    surface: z.string().nullable().describe(`The endpoint (${SURFACE_NAMES}); null for another \`/v1\` route (an unknown one's 404).`),
    model: z.string().nullable().describe('The catalog model; null when refused before one was named.'),
    target: z.string().nullable().describe('The upstream target that answered (provider/model); when none did, the last one tried that failed; null when none was tried.'),
    status: z.number().int(),
    error_code: z
      .string()
      .nullable()
      .describe('What the client was told the error was, also mid-stream (then with status 200): the error body\'s `code`, or its `type` where it has no code (an empty one, or Anthropic\'s shape).'),
    stream: z.boolean(),
    latency_ms: z.number().int(),
    first_byte_ms: z.number().int().nullable().describe('Time to the first byte of the answer.'),
    input_tokens: z.number().int(),
    cached_input_tokens: z.number().int(),
    cache_write_input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    reasoning_tokens: z.number().int(),
    cost_usd: z.string(),
    request_body: z.string().nullable().describe('Only for models with `log_bodies` in the catalog, cut at its `max_bytes`.'),
    response_body: z.string().nullable(),
  })
  .meta({ id: 'RequestLogEntry' });

const usageTotals = {
  requests: z.number().int().describe('Charged requests (from the ledger).'),
  input_tokens: z.number().int(),
  cached_input_tokens: z.number().int(),
  cache_write_input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  reasoning_tokens: z.number().int(),
  errors: z.number().int().describe('Requests that ended with an error code (from the request log).'),
  cost_usd: z.string(),
  excess_usd: z.string().describe('Reported by upstreams beyond the holds: recorded, not billed.'),
};

export const usageGrouping = z.enum(USAGE_GROUPINGS);

export const usageReportSchema = z
  .object({
    account_id: z.string().nullable(),
    from: z.string().nullable(),
    to: z.string().nullable(),
    by: usageGrouping,
    rows: z.array(
      z.object({
        group: z
          .string()
          .describe(
            `The UTC day or hour (its start), the model id, the key id, the account id, or the endpoint (${SURFACE_NAMES}; \`unknown\` for charges billed before endpoints were recorded). \`""\` holds the errors that had no model, key or endpoint.`,
          ),
        ...usageTotals,
      }),
    ),
    total: z.object(usageTotals),
  })
  .meta({ id: 'UsageReport' });

export const accountUsageSchema = z
  .object({
    from: z.string().nullable(),
    to: z.string().nullable(),
    top: z.array(z.object({ account_id: z.string(), name: z.string(), ...usageTotals })).describe('The accounts with the highest spend (then the most requests), highest first.'),
    other_accounts: z.number().int().describe('How many more accounts had usage in the range; `others` sums them.'),
    others: z.object(usageTotals),
    no_account: z.object(usageTotals).describe('Requests refused before a key was known (their errors).'),
    total: z.object(usageTotals),
  })
  .meta({ id: 'AccountUsage' });

/** A 200 answer in JSON, or in CSV with `format=csv`. */
export function jsonOrCsv<T extends z.ZodType>(json: T, csvDescription: string) {
  return {
    description: 'JSON, or CSV with `format=csv`.',
    content: {
      'application/json': { schema: json },
      'text/csv': { schema: z.string().describe(csvDescription) },
    },
  };
}
