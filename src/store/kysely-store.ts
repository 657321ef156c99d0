/**
 * The store: one class over an Engine (engine.ts), which open-store.ts picks from the database URL.
 * Its ports are built one on another so that no call is forwarded: store-core.ts (the engine, the
 * clock, migrate and close), account-store.ts (AccountStore), money-store.ts (MoneyStore), and here
 * the operations port (OperationsStore): stored responses (response-queries.ts, saved through the
 * engine), running instances (instance-queries.ts), the request log (request-log-queries.ts,
 * appended through the engine), usage (usage-queries.ts), alerts (alert-queries.ts) and outages
 * (health-queries.ts: the request log's figures, target rotations); and the catalog port
 * (CatalogStore): the runtime catalog's versions (catalog-queries.ts).
 */
import * as alerts from './queries/alert-queries.js';
import * as catalogVersions from './queries/catalog-queries.js';
import * as health from './queries/health-queries.js';
import * as instances from './queries/instance-queries.js';
import * as keys from './queries/key-queries.js';
import { KyselyMoneyStore } from './money-store.js';
import * as requestLog from './queries/request-log-queries.js';
import * as responses from './queries/response-queries.js';
import type {
  AlertClaim,
  AlertDelivery,
  AlertDeliveryOutcome,
  AlertDeliveryState,
  AlertResend,
  SpendReport,
  BudgetWindow,
  CatalogVersionRecord,
  NewCatalogVersion,
  ErrorCountRow,
  HealthGrouping,
  HealthRow,
  NewTargetRotation,
  TargetRotation,
  InstanceRecord,
  KeyBudgetLevel,
  LowBalanceCrossing,
  NewAlertDelivery,
  Page,
  PageRequest,
  RequestLogCursor,
  RequestLogEntry,
  RequestLogFilter,
  RequestLogRecord,
  Store,
  StoredResponse,
  UsageGrouping,
  UsageGroupRow,
  UsageRange,
  UsageRow,
} from './store.js';
import * as usage from './queries/usage-queries.js';

export class KyselyStore extends KyselyMoneyStore implements Store {
  latestCatalogVersionId(): Promise<number | null> {
    return catalogVersions.latestCatalogVersionId(this.db);
  }

  findCatalogVersion(id: number): Promise<CatalogVersionRecord | undefined> {
    return catalogVersions.findCatalogVersion(this.db, id);
  }

  listCatalogVersions(limit: number, before?: number): Promise<CatalogVersionRecord[]> {
    return catalogVersions.listCatalogVersions(this.db, limit, before);
  }

  async appendCatalogVersion(version: NewCatalogVersion): Promise<CatalogVersionRecord> {
    const appended = await this.transact((transaction) => catalogVersions.appendCatalogVersion(transaction, version, this.now()));
    if (appended === undefined) throw new Error('appending a catalog version wrote nothing');
    return appended;
  }

  seedCatalogVersion(version: NewCatalogVersion): Promise<CatalogVersionRecord | undefined> {
    return this.transact((transaction) => catalogVersions.appendCatalogVersion(transaction, version, this.now(), true));
  }

  saveResponse(response: StoredResponse): Promise<void> {
    return this.backend.saveResponse(response);
  }

  findResponse(id: string, accountId: string): Promise<StoredResponse | undefined> {
    return responses.findResponse(this.db, id, accountId);
  }

  deleteResponse(id: string, accountId: string): Promise<boolean> {
    return responses.deleteResponse(this.db, id, accountId);
  }

  heartbeat(instance: InstanceRecord): Promise<void> {
    return instances.heartbeat(this.db, instance);
  }

  liveInstances(since: Date): Promise<InstanceRecord[]> {
    return instances.liveInstances(this.db, since);
  }

  removeInstance(id: string): Promise<void> {
    return instances.removeInstance(this.db, id);
  }

  async usageReport(filter: { accountId?: string; since?: Date }): Promise<UsageRow[]> {
    const rows = await usage.usageBy(this.db, 'model', { accountId: filter.accountId, from: filter.since });
    return rows.map(({ group, ...totals }) => ({ model: group, ...totals }));
  }

  appendRequestLog(entries: readonly RequestLogEntry[]): Promise<void> {
    return this.backend.appendRequestLog(entries);
  }

  listRequestLog(filter: RequestLogFilter, page: PageRequest<RequestLogCursor>, options?: { bodies?: boolean }): Promise<Page<RequestLogRecord, RequestLogCursor>> {
    return requestLog.listRequestLog(this.db, filter, page, options);
  }

  pruneRequestLog(before: Date, limit: number): Promise<number> {
    return requestLog.pruneRequestLog(this.db, before, limit);
  }

  usageBy(grouping: UsageGrouping, range: UsageRange): Promise<UsageGroupRow[]> {
    return usage.usageBy(this.db, grouping, range);
  }

  requestErrorsBy(grouping: UsageGrouping, range: UsageRange): Promise<ErrorCountRow[]> {
    return usage.requestErrorsBy(this.db, grouping, range);
  }

  requestHealthBy(grouping: HealthGrouping, bucket: 'hour' | 'day', range: { from: Date; to: Date }): Promise<HealthRow[]> {
    return health.requestHealthBy(this.db, grouping, bucket, range);
  }

  openTargetRotation(rotation: NewTargetRotation): Promise<void> {
    return health.openTargetRotation(this.db, rotation);
  }

  closeTargetRotation(closing: { target: string; instance: string; upAt: Date }): Promise<void> {
    return health.closeTargetRotation(this.db, closing);
  }

  listTargetRotations(filter: { from: Date; to: Date; target?: string; limit: number }): Promise<TargetRotation[]> {
    return health.listTargetRotations(this.db, filter);
  }

  lowBalanceCrossings(limit: number): Promise<LowBalanceCrossing[]> {
    return alerts.lowBalanceCrossings(this.db, limit);
  }

  keyBudgetLevels(current: readonly BudgetWindow[], limit: number): Promise<KeyBudgetLevel[]> {
    return keys.keyBudgetLevels(this.db, current, limit);
  }

  spendReport(range: { from: Date; to: Date }, top: number): Promise<SpendReport> {
    return alerts.spendReport(this.db, range, top);
  }

  claimAlert(claim: AlertClaim, deliveries: readonly NewAlertDelivery[]): Promise<boolean> {
    return alerts.claimAlert(this.transact, claim, deliveries, this.now());
  }

  releaseAlertClaim(claim: AlertClaim): Promise<void> {
    return alerts.releaseAlertClaim(this.db, claim);
  }

  enqueueAlertDeliveries(deliveries: readonly NewAlertDelivery[]): Promise<void> {
    return alerts.enqueueAlertDeliveries(this.db, deliveries);
  }

  claimAlertDeliveries(request: { webhookIds: readonly string[]; now: Date; leaseUntil: Date; limit: number }): Promise<AlertDelivery[]> {
    return alerts.claimAlertDeliveries(this.db, request);
  }

  finishAlertDelivery(id: number, outcome: AlertDeliveryOutcome): Promise<void> {
    return alerts.finishAlertDelivery(this.db, id, outcome);
  }

  listAlertDeliveries(filter: { state?: AlertDeliveryState }, page: PageRequest<number>): Promise<Page<AlertDelivery, number>> {
    return alerts.listAlertDeliveries(this.db, filter, page);
  }

  resendAlertDelivery(resend: AlertResend): Promise<AlertDelivery | undefined> {
    return alerts.resendAlertDelivery(this.transact, resend, this.now());
  }

  pruneAlertDeliveries(before: Date, limit: number): Promise<number> {
    return alerts.pruneAlertDeliveries(this.db, before, limit);
  }
}
