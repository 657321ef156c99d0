/**
 * The zod schemas of the admin API: they validate requests, shape responses, and are the source of
 * its OpenAPI document (openapi.ts), so the three cannot drift apart.
 */
import { z } from 'zod';
import { MAX_USD_AMOUNT, usdAmountProblem } from '../../admin/input.js';

export const errorSchema = z
  .object({
    error: z.object({
      message: z.string(),
      type: z.string(),
      param: z.string().optional(),
      code: z.string(),
    }),
  })
  .meta({ id: 'Error' });

/** The error answers every authenticated route may give. */
export const errorResponses = {
  400: errorSchema,
  401: errorSchema,
  403: errorSchema,
  404: errorSchema,
} as const;

export const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('Most rows in one page (1–200).'),
  cursor: z.string().max(500).optional().describe('`next_cursor` of the previous page.'),
});

/** A page of `item`: `next_cursor` is null on the last page. */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), has_more: z.boolean(), next_cursor: z.string().nullable() });
}

/** Checked here, so that a bad amount's 400 names its field (`param`); zero is refused where it must be positive, by the services. */
export const usdAmount = z
  .string()
  .max(40)
  .superRefine((value, context) => {
    const problem = usdAmountProblem(value, { positive: false });
    if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
  })
  .describe(`A USD amount in decimal, like "5" or "0.25" (at most 9 decimals, at most ${MAX_USD_AMOUNT}).`);

export const accountSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    balance_usd: z.string(),
    reserved_usd: z.string(),
    disabled: z.boolean(),
    created_at: z.string(),
    low_balance_threshold_usd: z.string().nullable().describe('A `balance.low` alert fires when the balance less open holds drops below this; null: no alert.'),
  })
  .meta({ id: 'Account' });

export const accountActivitySchema = accountSchema
  .extend({
    spend_usd: z.string().describe("Charges over the list's `from`/`to` (the last 30 days by default)."),
    last_used_at: z.string().nullable().describe('Its latest request in the request log; null when the log holds none.'),
  })
  .meta({ id: 'AccountActivity' });

export const ledgerEntrySchema = z
  .object({
    id: z.number().int(),
    kind: z.enum(['credit', 'charge', 'excess', 'debit']),
    amount_usd: z.string(),
    request_id: z.string().nullable(),
    key_id: z.string().nullable(),
    model: z.string().nullable(),
    surface: z.string().nullable().describe('The endpoint a charge or excess paid for (its hold\'s); null for credits and debits, and for charges billed before endpoints were recorded.'),
    note: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'LedgerEntry' });

export const budgetPeriod = z.enum(['total', 'day', 'week', 'month']).describe('total never resets; day, week (from Monday) and month are calendar periods in UTC.');
export const keyStatus = z.enum(['active', 'disabled', 'expired', 'deleted']);

const keyBudgetSchema = z.object({ period: budgetPeriod, limit_usd: z.string() });

export const keySchema = z
  .object({
    id: z.string(),
    account_id: z.string(),
    name: z.string().nullable(),
    prefix: z.string().describe('The first characters of the secret, safe to show.'),
    models: z.array(z.string()).nullable().describe('Model ids the key may use; null: every model.'),
    requests_per_window: z.number().int().nullable().describe('Requests per rate-limit window; null: the configured default.'),
    tokens_per_minute: z.number().int().nullable().describe('Tokens per minute; null: the configured default.'),
    expires_at: z.string().nullable(),
    disabled: z.boolean(),
    status: keyStatus,
    budget: keyBudgetSchema.nullable().describe('The spend limit; null: none.'),
    created_at: z.string(),
    deleted_at: z.string().nullable(),
  })
  .meta({ id: 'Key' });

export const keyDetailsSchema = keySchema
  .extend({
    budget: keyBudgetSchema
      .extend({
        period_start: z.string(),
        resets_at: z.string().nullable().describe('When the budget starts afresh; null for a total budget.'),
        spent_usd: z.string(),
        reserved_usd: z.string().describe("Held by the key's requests still running."),
        remaining_usd: z.string(),
      })
      .nullable()
      .describe('The spend limit and its current period; null: none.'),
  })
  .meta({ id: 'KeyDetails' });

export const adminRole = z.enum(['owner', 'operator', 'viewer']);

export const adminTokenSchema = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    role: adminRole,
    prefix: z.string(),
    disabled: z.boolean(),
    created_at: z.string(),
  })
  .meta({ id: 'AdminToken' });

export const auditEntrySchema = z
  .object({
    id: z.number().int(),
    at: z.string(),
    admin_token_id: z.string().nullable(),
    action: z.string(),
    target_type: z.string(),
    target_id: z.string(),
    before: z.unknown(),
    after: z.unknown(),
  })
  .meta({ id: 'AuditEntry' });
