/** `/admin/v1/accounts`: create, list, get, rename or set the low-balance threshold, disable/enable, credit, debit, ledger. */
import { z } from 'zod';
import {
  createAccount,
  creditAccount,
  debitAccount,
  listAccountActivity,
  listLedgerPage,
  requireAccount,
  setAccountDisabled,
  updateAccount,
} from '../../admin/accounts.js';
import { accountActivityView, accountView, ledgerEntryView } from '../../admin/views.js';
import type { AccountSort } from '../../store/store.js';
import { requireRole } from './auth.js';
import { actorOf, type AdminApp, type AdminRouteDeps } from './context.js';
import { decodeAccountListCursor, decodeIdCursor, encodeAccountListCursor, encodeIdCursor } from './cursor.js';
import { instants, timeRangeQuery } from './requests.js';
import { accountActivitySchema, accountSchema, errorResponses, errorSchema, ledgerEntrySchema, pageOf, pageQuery, usdAmount } from './schemas.js';

const tags = ['accounts'];
const ACCOUNT_SORTS = ['created', 'name', 'spend', 'last_used'] as const satisfies readonly AccountSort[];
const accountParams = z.object({ account: z.string().min(1).max(200).describe('Account id or name.') });
const adjustment = z
  .object({
    amount_usd: usdAmount,
    reason: z.string().trim().min(1).max(500).describe('Why: kept on the ledger entry and in the audit log.'),
  })
  .strict();

export function registerAccountRoutes(app: AdminApp, deps: AdminRouteDeps): void {
  const { store } = deps;
  const read = { preValidation: requireRole('viewer') };
  const write = { preValidation: requireRole('operator') };

  app.post('/accounts', {
    ...write,
    schema: {
      tags,
      summary: 'Create an account',
      body: z.object({ name: z.string().max(200), balance_usd: usdAmount.optional() }).strict(),
      response: { 201: accountSchema, 409: errorSchema, ...errorResponses },
    },
  }, async (request, reply) => {
    const account = await createAccount(store, { name: request.body.name, balanceUsd: request.body.balance_usd }, actorOf(request));
    return reply.code(201).send(accountView(account));
  });

  app.get('/accounts', {
    ...read,
    schema: {
      tags,
      summary: "List accounts with each one's spend over a time range and its last request, sorted on the server (oldest first unless `sort` says otherwise)",
      querystring: pageQuery.extend({
        name: z.string().max(200).optional().describe('Only accounts whose name contains this text.'),
        status: z.enum(['active', 'disabled']).optional(),
        sort: z.enum(ACCOUNT_SORTS).default('created').describe('`created`, `name`, `spend` (over `from`/`to`) or `last_used` (the latest request in the log); ties by id.'),
        order: z.enum(['asc', 'desc']).optional().describe('Ascending or descending; by default ascending for `created` and `name`, descending (largest, latest first) for `spend` and `last_used`, where never-used accounts come last.'),
        ...timeRangeQuery,
      }).describe('`from`/`to` bound the spend: by default the 30 days before `to`, or before now.'),
      response: { 200: pageOf(accountActivitySchema), ...errorResponses },
    },
  }, async (request) => {
    const { limit, cursor, name, status, sort: by, order, from, to } = request.query;
    const sort = { by, descending: (order ?? (by === 'spend' || by === 'last_used' ? 'desc' : 'asc')) === 'desc' };
    const after = decodeAccountListCursor(cursor, sort);
    const page = await listAccountActivity(store, { nameContains: name, status }, sort, instants(from, to), { limit, ...(after === undefined ? {} : { after }) });
    return { data: page.rows.map(accountActivityView), has_more: page.next !== undefined, next_cursor: encodeAccountListCursor(page.next) };
  });

  app.get('/accounts/:account', {
    ...read,
    schema: { tags, summary: 'Get an account', params: accountParams, response: { 200: accountSchema, ...errorResponses } },
  }, async (request) => accountView(await requireAccount(store, request.params.account)));

  app.patch('/accounts/:account', {
    ...write,
    schema: {
      tags,
      summary: 'Rename an account and/or set its low-balance alert threshold (each change audited)',
      params: accountParams,
      body: z
        .object({
          name: z.string().max(200).optional(),
          low_balance_threshold_usd: usdAmount
            .nullable()
            .optional()
            .describe('Fire `balance.low` when the balance less open holds drops below this USD amount (> 0); null removes it. A new threshold re-arms the alert.'),
        })
        .strict(),
      response: { 200: accountSchema, 409: errorSchema, ...errorResponses },
    },
  }, async (request) => {
    const { name, low_balance_threshold_usd: lowBalanceThresholdUsd } = request.body;
    const account = await updateAccount(store, request.params.account, { name, lowBalanceThresholdUsd }, actorOf(request));
    if (name !== undefined) deps.accountsChanged();
    return accountView(account);
  });

  for (const [action, disabled] of [['disable', true], ['enable', false]] as const) {
    app.post(`/accounts/:account/${action}`, {
      ...write,
      schema: {
        tags,
        summary: disabled ? "Disable an account (its keys are refused within a second)" : 'Enable an account',
        params: accountParams,
        response: { 200: accountSchema, ...errorResponses },
      },
    }, async (request) => {
      const account = await setAccountDisabled(store, request.params.account, disabled, actorOf(request));
      deps.accountsChanged();
      return accountView(account);
    });
  }

  app.post('/accounts/:account/credit', {
    ...write,
    schema: { tags, summary: 'Add credit (a ledger entry)', params: accountParams, body: adjustment, response: { 200: accountSchema, ...errorResponses } },
  }, async (request) => {
    const { amount_usd: amount, reason } = request.body;
    return accountView(await creditAccount(store, request.params.account, amount, reason, actorOf(request)));
  });

  app.post('/accounts/:account/debit', {
    ...write,
    schema: {
      tags,
      summary: 'Take credit off (a ledger entry); refused with 409 when the balance less open holds does not cover it',
      params: accountParams,
      body: adjustment,
      response: { 200: accountSchema, 409: errorSchema, ...errorResponses },
    },
  }, async (request) => {
    const { amount_usd: amount, reason } = request.body;
    return accountView(await debitAccount(store, request.params.account, amount, reason, actorOf(request)));
  });

  app.get('/accounts/:account/ledger', {
    ...read,
    schema: { tags, summary: "An account's ledger, newest first, in a time range", params: accountParams, querystring: pageQuery.extend(timeRangeQuery), response: { 200: pageOf(ledgerEntrySchema), ...errorResponses } },
  }, async (request) => {
    const { limit, cursor, from, to } = request.query;
    const page = await listLedgerPage(store, request.params.account, instants(from, to), { limit, after: decodeIdCursor(cursor) });
    return { data: page.rows.map(ledgerEntryView), has_more: page.next !== undefined, next_cursor: encodeIdCursor(page.next) };
  });
}
