/**
 * Alerts (migration 0009): the low-balance query, the claims that make a crossing fire once
 * whatever the number of instances, and the webhook outbox. The database decides every race: a
 * claim is a primary key that only one insert gets, and a delivery is taken by a guarded UPDATE
 * on its next attempt time, so two deliverers never post the same attempt.
 */
import { sql, type Kysely } from 'kysely';
import { appendAudit, pageOf } from './admin-queries.js';
import type { Transact } from '../engine.js';
import { StoreDataError, toBigInt, toDate, toEpochMilliseconds, toNullableDate, toNullableText, toSafeNumber, toText } from './row-decoding.js';
import type { Database } from '../schema.js';
import type { AlertClaim, AlertDelivery, AlertDeliveryOutcome, AlertDeliveryState, AlertResend, LowBalanceCrossing, NewAlertDelivery, Page, PageRequest, SpendReport } from '../store.js';

export const LOW_BALANCE_KIND = 'balance.low';
/** Longest `last_error` kept: enough to read, never a whole answer body. */
const MAX_ERROR_LENGTH = 500;

/** Sets the threshold and drops the account's claim in one transaction (a new threshold re-arms). */
export async function setLowBalanceThreshold(transaction: Kysely<Database>, accountId: string, thresholdNanos: bigint | null): Promise<boolean> {
  if (thresholdNanos !== null && (typeof thresholdNanos !== 'bigint' || thresholdNanos < 0n)) {
    throw new RangeError(`low balance threshold must be null or a bigint ≥ 0, got ${String(thresholdNanos)}`);
  }
  const updated = await transaction.updateTable('accounts').set({ low_balance_threshold_nanos: thresholdNanos }).where('id', '=', accountId).executeTakeFirst();
  if (updated.numUpdatedRows !== 1n) return false;
  await releaseAlertClaim(transaction, { kind: LOW_BALANCE_KIND, subjectId: accountId, scope: '' });
  return true;
}

export async function lowBalanceCrossings(db: Kysely<Database>, limit: number): Promise<LowBalanceCrossing[]> {
  const rows = await db
    .selectFrom('accounts')
    .leftJoin('alert_claims', (join) =>
      join
        .onRef('alert_claims.subject_id', '=', 'accounts.id')
        .on('alert_claims.kind', '=', LOW_BALANCE_KIND)
        .on('alert_claims.scope', '=', ''),
    )
    .select(['accounts.id', 'accounts.name', 'accounts.balance_nanos', 'accounts.reserved_nanos', 'accounts.sliced_nanos', 'accounts.low_balance_threshold_nanos', 'alert_claims.claimed_at'])
    // Spelled as the partial index's own condition, so both engines use it.
    .where(sql<boolean>`accounts.low_balance_threshold_nanos is not null`)
    .where((eb) => {
      // Less what open holds reserve; a quota slice's unused part is the account's to spend (AccountRecord).
      const available = eb(eb(eb.ref('accounts.balance_nanos'), '-', eb.ref('accounts.reserved_nanos')), '+', eb.ref('accounts.sliced_nanos'));
      return eb.or([
        eb.and([eb('alert_claims.claimed_at', 'is', null), eb(available, '<', eb.ref('accounts.low_balance_threshold_nanos'))]),
        eb.and([eb('alert_claims.claimed_at', 'is not', null), eb(available, '>=', eb.ref('accounts.low_balance_threshold_nanos'))]),
      ]);
    })
    .orderBy('accounts.id')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    accountId: toText(row.id, 'accounts.id'),
    accountName: toText(row.name, 'accounts.name'),
    balanceNanos: toBigInt(row.balance_nanos, 'accounts.balance_nanos'),
    reservedNanos: toBigInt(row.reserved_nanos, 'accounts.reserved_nanos') - toBigInt(row.sliced_nanos, 'accounts.sliced_nanos'),
    thresholdNanos: toBigInt(row.low_balance_threshold_nanos, 'accounts.low_balance_threshold_nanos'),
    direction: row.claimed_at === null ? 'below' : 'recovered',
  }));
}

/** The charges of a period: two grouped reads of the ledger (by its time index), the top accounts named. */
export async function spendReport(db: Kysely<Database>, range: { from: Date; to: Date }, top: number): Promise<SpendReport> {
  const from = BigInt(toEpochMilliseconds(range.from, 'from'));
  const to = BigInt(toEpochMilliseconds(range.to, 'to'));
  const charges = db.selectFrom('ledger').where('ledger.kind', '=', 'charge').where('ledger.created_at', '>=', from).where('ledger.created_at', '<', to);
  const total = await charges
    .select([
      sql<bigint>`cast(coalesce(sum(ledger.amount_nanos), 0) as bigint)`.as('cost_nanos'),
      sql<bigint>`cast(count(*) as bigint)`.as('requests'),
      sql<bigint>`cast(count(distinct ledger.account_id) as bigint)`.as('accounts'),
    ])
    .executeTakeFirstOrThrow();
  const cost = sql<bigint>`cast(sum(ledger.amount_nanos) as bigint)`;
  const rows = await charges
    .innerJoin('accounts', 'accounts.id', 'ledger.account_id')
    .select(['ledger.account_id', 'accounts.name', cost.as('cost_nanos'), sql<bigint>`cast(count(*) as bigint)`.as('requests')])
    .groupBy(['ledger.account_id', 'accounts.name'])
    .orderBy(cost, 'desc')
    .orderBy('ledger.account_id')
    .limit(top)
    .execute();
  return {
    totalNanos: toBigInt(total.cost_nanos, 'spend.cost_nanos'),
    requests: toSafeNumber(total.requests, 'spend.requests'),
    accounts: toSafeNumber(total.accounts, 'spend.accounts'),
    top: rows.map((row) => ({
      accountId: toText(row.account_id, 'ledger.account_id'),
      accountName: toText(row.name, 'accounts.name'),
      costNanos: toBigInt(row.cost_nanos, 'spend.cost_nanos'),
      requests: toSafeNumber(row.requests, 'spend.requests'),
    })),
  };
}

/** Inserts the claim; only the transaction that inserted it queues the deliveries. */
export async function claimAlert(transact: Transact, claim: AlertClaim, deliveries: readonly NewAlertDelivery[], now: Date): Promise<boolean> {
  return transact(async (transaction) => {
    const inserted = await transaction
      .insertInto('alert_claims')
      .values({ kind: claim.kind, subject_id: claim.subjectId, scope: claim.scope, claimed_at: toEpochMilliseconds(now, 'now') })
      .onConflict((conflict) => conflict.columns(['kind', 'subject_id', 'scope']).doNothing())
      .executeTakeFirst();
    if (inserted.numInsertedOrUpdatedRows !== 1n) return false;
    await enqueueAlertDeliveries(transaction, deliveries);
    return true;
  });
}

export async function releaseAlertClaim(db: Kysely<Database>, claim: AlertClaim): Promise<void> {
  await db
    .deleteFrom('alert_claims')
    .where('kind', '=', claim.kind)
    .where('subject_id', '=', claim.subjectId)
    .where('scope', '=', claim.scope)
    .execute();
}

export async function enqueueAlertDeliveries(db: Kysely<Database>, deliveries: readonly NewAlertDelivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  await db
    .insertInto('alert_outbox')
    .values(
      deliveries.map((delivery) => {
        const createdAt = toEpochMilliseconds(delivery.createdAt, 'createdAt');
        return {
          event_id: delivery.eventId,
          event_type: delivery.eventType,
          webhook_id: delivery.webhookId,
          body: delivery.body,
          next_attempt_at: createdAt,
          created_at: createdAt,
        };
      }),
    )
    .onConflict((conflict) => conflict.columns(['event_id', 'webhook_id']).doNothing())
    .execute();
}

export async function claimAlertDeliveries(
  db: Kysely<Database>,
  request: { webhookIds: readonly string[]; now: Date; leaseUntil: Date; limit: number },
): Promise<AlertDelivery[]> {
  if (request.webhookIds.length === 0) return [];
  const now = toEpochMilliseconds(request.now, 'now');
  const leaseUntil = toEpochMilliseconds(request.leaseUntil, 'leaseUntil');
  const due = await db
    .selectFrom('alert_outbox')
    .selectAll()
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', BigInt(now))
    .where('webhook_id', 'in', [...request.webhookIds])
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(request.limit)
    .execute();
  const taken: AlertDelivery[] = [];
  for (const row of due) {
    // Taken only if nobody moved its next attempt since we read it.
    const updated = await db
      .updateTable('alert_outbox')
      .set({ next_attempt_at: leaseUntil, attempts: sql<number>`attempts + 1` })
      .where('id', '=', row.id)
      .where('state', '=', 'pending')
      .where('next_attempt_at', '=', row.next_attempt_at)
      .executeTakeFirst();
    if (updated.numUpdatedRows !== 1n) continue;
    const delivery = decodeAlertDelivery(row);
    taken.push({ ...delivery, attempts: delivery.attempts + 1, nextAttemptAt: new Date(leaseUntil) });
  }
  return taken;
}

export async function finishAlertDelivery(db: Kysely<Database>, id: number, outcome: AlertDeliveryOutcome): Promise<void> {
  const query = db.updateTable('alert_outbox').where('id', '=', id).where('state', '=', 'pending');
  if (outcome.state === 'delivered') {
    await query.set({ state: 'delivered', finished_at: toEpochMilliseconds(outcome.at, 'at'), last_error: null }).execute();
  } else if (outcome.state === 'pending') {
    await query.set({ next_attempt_at: toEpochMilliseconds(outcome.nextAttemptAt, 'nextAttemptAt'), last_error: outcome.error.slice(0, MAX_ERROR_LENGTH) }).execute();
  } else {
    await query.set({ state: 'abandoned', finished_at: toEpochMilliseconds(outcome.at, 'at'), last_error: outcome.error.slice(0, MAX_ERROR_LENGTH) }).execute();
  }
}

export async function listAlertDeliveries(
  db: Kysely<Database>,
  filter: { state?: AlertDeliveryState },
  page: PageRequest<number>,
): Promise<Page<AlertDelivery, number>> {
  let query = db.selectFrom('alert_outbox').selectAll();
  if (filter.state !== undefined) query = query.where('state', '=', filter.state);
  if (page.after !== undefined) query = query.where('id', '<', page.after);
  const rows = await query.orderBy('id', 'desc').limit(page.limit + 1).execute();
  return pageOf(rows.map(decodeAlertDelivery), page.limit, (delivery) => delivery.id);
}

/**
 * Queues a delivery again as a new outbox row (the original keeps its history): a new event id,
 * so a receiver that dropped the first as a repeat takes this one, the envelope's `resend_of`
 * naming the first, and the audit row in the same transaction. Undefined when no such delivery.
 */
export async function resendAlertDelivery(transact: Transact, resend: AlertResend, now: Date): Promise<AlertDelivery | undefined> {
  return transact(async (transaction) => {
    const row = await transaction.selectFrom('alert_outbox').selectAll().where('id', '=', resend.id).executeTakeFirst();
    if (row === undefined) return undefined;
    const original = decodeAlertDelivery(row);
    const envelope = JSON.parse(original.body) as Record<string, unknown>;
    const body = JSON.stringify({ ...envelope, id: resend.eventId, resend_of: original.eventId });
    await enqueueAlertDeliveries(transaction, [{ eventId: resend.eventId, eventType: original.eventType, webhookId: original.webhookId, body, createdAt: now }]);
    const created = await transaction.selectFrom('alert_outbox').selectAll().where('event_id', '=', resend.eventId).where('webhook_id', '=', original.webhookId).executeTakeFirstOrThrow();
    const copy = decodeAlertDelivery(created);
    await appendAudit(
      transaction,
      {
        adminTokenId: resend.adminTokenId,
        action: 'alert_delivery.resend',
        targetType: 'alert_delivery',
        targetId: String(original.id),
        before: { id: original.id, event_id: original.eventId, type: original.eventType, webhook_id: original.webhookId, state: original.state, attempts: original.attempts },
        after: { id: copy.id, event_id: copy.eventId, type: copy.eventType, webhook_id: copy.webhookId, state: copy.state, resend_of: original.eventId },
      },
      now,
    );
    return copy;
  });
}

export async function pruneAlertDeliveries(db: Kysely<Database>, before: Date, limit: number): Promise<number> {
  const ids = db.selectFrom('alert_outbox').select('id').where('created_at', '<', BigInt(toEpochMilliseconds(before, 'before'))).orderBy('id').limit(limit);
  const deleted = await db.deleteFrom('alert_outbox').where('id', 'in', ids).executeTakeFirst();
  return Number(deleted.numDeletedRows);
}

interface AlertOutboxRow {
  id: unknown;
  event_id: unknown;
  event_type: unknown;
  webhook_id: unknown;
  body: unknown;
  state: unknown;
  attempts: unknown;
  next_attempt_at: unknown;
  created_at: unknown;
  finished_at: unknown;
  last_error: unknown;
}

function decodeAlertDelivery(row: AlertOutboxRow): AlertDelivery {
  const state = toText(row.state, 'alert_outbox.state');
  if (state !== 'pending' && state !== 'delivered' && state !== 'abandoned') throw new StoreDataError(`alert_outbox.state: unknown state ${JSON.stringify(state)}`);
  return {
    id: toSafeNumber(row.id, 'alert_outbox.id'),
    eventId: toText(row.event_id, 'alert_outbox.event_id'),
    eventType: toText(row.event_type, 'alert_outbox.event_type'),
    webhookId: toText(row.webhook_id, 'alert_outbox.webhook_id'),
    body: toText(row.body, 'alert_outbox.body'),
    state,
    attempts: toSafeNumber(row.attempts, 'alert_outbox.attempts'),
    nextAttemptAt: toDate(row.next_attempt_at, 'alert_outbox.next_attempt_at'),
    createdAt: toDate(row.created_at, 'alert_outbox.created_at'),
    finishedAt: toNullableDate(row.finished_at, 'alert_outbox.finished_at'),
    lastError: toNullableText(row.last_error, 'alert_outbox.last_error'),
  };
}
