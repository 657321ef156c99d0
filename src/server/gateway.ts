/**
 * The composition root: builds every service from the config, the store and the limiter it is
 * given, plus the HTTP app on top. `serve` and the end-to-end tests both start here.
 */
import type { Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { createAlerts, type Alerts } from '../alerts/alerts.js';
import { createKeyBudgetChecker } from '../alerts/key-budget-checker.js';
import { createLowBalanceChecker } from '../alerts/low-balance-checker.js';
import { watchSlowAnswers } from '../alerts/slow-answers.js';
import { createSpendReportChecker } from '../alerts/spend-report-checker.js';
import { publishHealthChange } from '../alerts/target-events.js';
import { createRotationRecorder } from '../alerts/target-rotations.js';
import { publishKeyRefused } from '../alerts/upstream-key-events.js';
import { Authenticator } from '../auth/authenticator.js';
import { BillingService } from '../billing/billing-service.js';
import { HoldKeeper } from '../billing/hold-keeper.js';
import { inputBoundsFromConfig } from '../billing/input-bounds.js';
import { usdToNanos } from '../billing/money.js';
import { pricesFromConfig } from '../billing/prices.js';
import { QuotaSlices } from '../billing/quota-slices.js';
import { createSettleRetrier, type SettleRetrier } from '../billing/settle-retry.js';
import type { ConfigFile } from '../config/schema.js';
import type { Provider } from '../providers/provider.js';
import { describeDowngrade, downgradedEfforts } from '../providers/shared/effort-budgets.js';
import type { Limiter } from '../ratelimit/limiter.js';
import type { Catalog } from '../routing/catalog.js';
import { Router, type RouterOptions } from '../routing/router.js';
import type { Store } from '../store/store.js';
import { createAdminServer } from '../http/admin/admin-listener.js';
import { buildApp, type AppDeps } from '../http/app.js';
import { AuthGuards } from '../http/auth-guards.js';
import { InFlight } from '../http/v1/in-flight.js';
import { createMetrics, type Metrics } from '../observability/metrics.js';
import { watchSilentConnections } from '../http/silent-connections.js';
import { createRequestLog, type RequestLog } from '../request-log/request-log.js';
import type { RequestTracer } from '../observability/request-tracer.js';
import { warmUpTokenizer } from '../protocol/tokens.js';
import { idSuffix } from '../lib/ids.js';
import type { Sealer } from '../lib/seal.js';
import { sealerFromEnv } from './seal-key.js';
import { createCatalogRuntime, type CatalogRuntime } from './catalog-runtime.js';

export interface GatewayOptions {
  config: ConfigFile;
  store: Store;
  limiter: Limiter;
  logger: Logger;
  env?: Readonly<Record<string, string | undefined>>;
  now?: () => number;
  router?: RouterOptions;
  /** How often to look for key/account changes made by other processes. */
  revisionPollMs?: number;
  /** How often to release holds left behind by a crash. */
  holdSweepMs?: number;
  metrics?: Metrics;
  /** What `/metrics` answers instead of `metrics`' own registry (the cluster's sum under workers). */
  scrapeMetrics?: () => Promise<string>;
  /** Traces requests and their upstream calls; absent when tracing is off (server/tracing.ts). */
  tracer?: RequestTracer;
  /** Serve the admin API on a server of its own (`adminServer`), and not through `app`'s listener. */
  adminListener?: boolean;
  /** Request log tuning for tests: batch writer options and how often expired rows are pruned. */
  requestLog?: Pick<Parameters<typeof createRequestLog>[0], 'writer' | 'pruneIntervalMs'>;
  /** Tells the other instances of a key or account change made through the admin API (Redis). */
  announceKeyChange?: () => Promise<void>;
}

export interface Gateway {
  app: FastifyInstance;
  /** With `adminListener`: the admin API's server, for the caller to `listen` once `app` is ready. */
  adminServer?: Server;
  authenticator: Authenticator;
  billing: BillingService;
  /** The request log's writer and pruning; absent with `log.enabled: false`. */
  requestLog?: RequestLog;
  /** Stops background work, closes the app and the upstream pools (not the store or limiter). */
  close(): Promise<void>;
}

export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const now = options.now ?? Date.now;
  // Before anything opens: a webhook whose secret is missing stops the startup. Nothing runs until start().
  const alerts = createAlerts({
    config: options.config.alerts,
    store: options.store,
    env: options.env ?? process.env,
    logger: options.logger,
    now,
    checkers: [createLowBalanceChecker(options.store), createKeyBudgetChecker(options.store), createSpendReportChecker(options.store, options.config.alerts.spend_report)],
  });
  const catalogRuntime = createCatalogRuntime({
    config: options.config,
    store: options.store,
    env: options.env ?? process.env,
    logger: options.logger,
    retireMs: options.config.billing.hold_ttl_seconds * 1000,
    onBuilt: (built) => {
      watchUpstreamKeys(built.providers, { alerts, metrics, logger: options.logger });
      for (const downgrade of downgradedEfforts(built.catalog)) options.logger.warn({ model: downgrade.model, effort: downgrade.effort }, describeDowngrade(downgrade));
    },
  });
  const sealer = sealerFromEnv(options.env ?? process.env, options.logger);
  // Before the first request, so that it does not pay for the tokenizer's start (protocol/tokens.ts).
  warmUpTokenizer();
  const catalog = catalogRuntime.live;
  const metrics = options.metrics ?? createMetrics();
  const rotations = createRotationRecorder(options.store, options.logger, now);
  const router = new Router({
    now,
    ...(options.tracer === undefined ? {} : { observeAttempt: options.tracer.observeAttempt }),
    ...options.router,
    onTargetFailure: (target, error, requestId) => {
      metrics.upstreamFailures.inc({ target: target.label, kind: error.kind });
      const level = error.kind === 'credentials' ? 'error' : 'warn';
      options.logger[level]({ requestId, target: target.label, kind: error.kind, status: error.status, reason: error.message }, 'upstream target failed');
      options.router?.onTargetFailure?.(target, error, requestId);
    },
    onHealthChange: (change) => {
      if (change.transition === 'down') options.logger.warn({ target: change.label, scope: change.scope, coolingUntil: change.coolingUntil }, 'target taken out of rotation');
      else options.logger.info({ target: change.label, scope: change.scope }, 'target back in rotation');
      publishHealthChange(alerts, change);
      rotations.record(change);
      options.router?.onHealthChange?.(change);
    },
  });
  const authenticator = new Authenticator({ store: options.store, now });
  const holdTtlMs = options.config.billing.hold_ttl_seconds * 1000;
  const checkpointMs = Math.max(50, Math.min(options.config.billing.checkpoint_seconds * 1000, holdTtlMs / 3));
  const slices = quotaSlices(options, holdTtlMs, now);
  metrics.countQuotaSlices = () => slices?.size ?? 0;
  const billing = new BillingService({
    store: options.store,
    prices: pricesFromConfig(catalogRuntime.current().catalog.models),
    inputBounds: inputBoundsFromConfig(catalogRuntime.current().catalog),
    now: () => new Date(now()),
    holdTtlSeconds: options.config.billing.hold_ttl_seconds,
    keyBudget: (keyId) => authenticator.keyBudget(keyId),
    spendable: async (accountId) => {
      const account = await options.store.findAccount(accountId);
      if (account === undefined) return undefined;
      // A disabled account has nothing to spend, whatever its balance.
      if (account.disabled) return 0n;
      const sliced = slices === undefined ? [] : await options.store.listSlices(accountId);
      return sliced.reduce((left, slice) => left - slice.amountNanos, account.balanceNanos - account.reservedNanos);
    },
    ...(slices === undefined ? {} : { slices }),
    onAdmitted: (path) => metrics.holdsAdmitted.inc({ path }),
  });
  const holdKeeper = new HoldKeeper({
    store: options.store,
    billing,
    // Often enough to extend a hold within its first third, however short its TTL.
    intervalMs: checkpointMs,
    extendAfterMs: holdTtlMs / 3,
    converted: (hold) => billing.converted(hold),
    now,
    onError: (error) => options.logger.warn({ err: error }, 'checkpointing running holds failed'),
    onMeterError: (error, hold) => {
      metrics.answerFaults.inc({ stage: 'metering' });
      options.logger.error({ err: error, requestId: hold.requestId, holdId: hold.id, stage: 'metering' }, 'the gateway failed inside an answer');
    },
  });
  metrics.countHoldsOpen = () => holdKeeper.size;
  const inFlight = new InFlight();
  const settleRetrier = createSettleRetrier({
    settle: (hold, usage) => billing.settle(hold, usage),
    logger: options.logger,
    maxAgeMs: options.config.billing.hold_ttl_seconds * 1000,
    abandoned: (hold) => billing.abandoned(hold),
  });
  const requestLog = options.config.log.enabled
    ? createRequestLog({
        config: options.config,
        store: options.store,
        logger: options.logger,
        registry: metrics.registry,
        now,
        observe: watchSlowAnswers(alerts, options.config.alerts, now),
        ...(catalogRuntime.source === 'database' ? { catalogModels: () => catalogRuntime.current().catalog.models } : {}),
        ...options.requestLog,
      })
    : undefined;
  await catalogRuntime.start(billing);
  const app = buildApp(appParts({ options, now, catalog, catalogRuntime, router, billing, holdKeeper, authenticator, inFlight, settleRetrier, metrics, requestLog, sealer }));
  const adminServer = options.adminListener === true ? createAdminServer(app, options.config.limits) : undefined;
  const endSilentAdminConnections = adminServer === undefined ? undefined : watchSilentConnections(adminServer);

  await authenticator.checkRevision();
  await billing.releaseExpired();
  const timers = [
    setInterval(() => {
      authenticator.checkRevision().catch((error: unknown) => options.logger.warn({ err: error }, 'key revision check failed'));
      catalogRuntime.checkRevision().catch((error: unknown) => options.logger.warn({ err: error }, 'catalog revision check failed: the catalog served is unchanged'));
    }, options.revisionPollMs ?? 500),
    setInterval(() => {
      billing.releaseExpired().catch((error: unknown) => options.logger.warn({ err: error }, 'releasing expired holds failed'));
    }, options.holdSweepMs ?? Math.min(30_000, (options.config.billing.hold_ttl_seconds * 1000) / 2)),
  ];
  for (const timer of timers) timer.unref();
  alerts.start();

  // Idempotent: a drain and a later shutdown may both ask.
  let closing: Promise<void> | undefined;
  return {
    app,
    ...(adminServer === undefined ? {} : { adminServer }),
    authenticator,
    billing,
    ...(requestLog === undefined ? {} : { requestLog }),
    close: () => (closing ??= shutDown()),
  };

  async function shutDown(): Promise<void> {
    for (const timer of timers) clearInterval(timer);
    if (adminServer?.listening === true) {
      const closed = new Promise<void>((resolve) => adminServer.close(() => resolve()));
      adminServer.closeIdleConnections();
      endSilentAdminConnections?.();
      await closed;
    }
    await app.close();
    // Streams cut by the drain settle asynchronously after their connection is gone.
    await inFlight.drained();
    await alerts.close();
    await rotations.flush();
    await settleRetrier.close();
    // Every hold has settled: what the slices did not admit goes back to the accounts.
    await slices?.close();
    // Last: every answer has ended, so every row is queued; the store is closed by the caller.
    await requestLog?.close();
    await catalogRuntime.close();
  }
}

/**
 * This process's quota slices (docs/architecture.md, Money: "Quota slices"), unless turned off:
 * `auto` turns them on with PostgreSQL, where a hold's own write is a round trip and a flush, and
 * off with SQLite, where it is a local transaction. Leased for the hold TTL, as a hold is.
 */
function quotaSlices(options: GatewayOptions, holdTtlMs: number, now: () => number): QuotaSlices | undefined {
  const config = options.config.billing.slices;
  const enabled = config.enabled === 'auto' ? options.store.engine === 'postgres' : config.enabled;
  if (!enabled) return undefined;
  return new QuotaSlices({
    store: options.store,
    owner: `process_${idSuffix()}`,
    maxNanos: usdToNanos(config.size_usd),
    headroom: config.headroom,
    idleMs: config.idle_seconds * 1000,
    leaseMs: holdTtlMs,
    tickMs: SLICE_TICK_MS,
    recallWaitMs: SLICE_RECALL_WAIT_MS,
    now,
    onError: (error, step) => options.logger.warn({ err: error }, `${step} failed`),
  });
}

/** How often a process answers recalls of its slices: what a refused hold on a sliced account may wait. */
const SLICE_TICK_MS = 100;
/** The longest a refused hold waits for the slices it recalled (an owner that died never answers). */
const SLICE_RECALL_WAIT_MS = 1_500;

/**
 * The pools of upstream keys (docs/architecture.md, "Pools of upstream keys"): `/metrics` reads
 * their states when scraped; a key refused is logged at error level and alerted, a key limited is
 * logged; both are counted. Keys are named, never shown.
 */
function watchUpstreamKeys(providers: ReadonlyMap<string, Provider>, parts: { alerts: Alerts; metrics: Metrics; logger: Logger }): void {
  const pools = [...providers.values()].flatMap((provider) => (provider.upstreamKeys === undefined ? [] : [{ provider: provider.name, keys: provider.upstreamKeys }]));
  if (pools.length === 0) return;
  parts.metrics.readUpstreamKeys = () => pools.flatMap((pool) => pool.keys.list().map((key) => ({ provider: pool.provider, key: key.name, state: key.state, calls: key.calls })));
  for (const pool of pools) {
    pool.keys.onEvent((event) => {
      parts.metrics.upstreamKeyEvents.inc({ provider: pool.provider, key: event.key, event: event.type });
      if (event.type === 'refused') {
        parts.logger.error({ provider: pool.provider, key: event.key, status: event.status }, 'upstream key refused: it leaves the pool until restart');
        publishKeyRefused(parts.alerts, { provider: pool.provider, key: event.key, status: event.status });
      } else {
        parts.logger.warn({ provider: pool.provider, key: event.key, status: event.status, coolingUntil: new Date(event.until).toISOString() }, 'upstream key rate limited: it cools down');
      }
    });
  }
}

/** What the composition root has built, for the app's parts to take what each needs. */
interface Built {
  options: GatewayOptions;
  now: () => number;
  catalog: Catalog;
  catalogRuntime: CatalogRuntime;
  router: Router;
  billing: BillingService;
  holdKeeper: HoldKeeper;
  authenticator: Authenticator;
  inFlight: InFlight;
  settleRetrier: SettleRetrier;
  metrics: Metrics;
  requestLog: RequestLog | undefined;
  sealer: Sealer;
}

/** One narrow dependency object per part of the app (http/app.ts). */
function appParts(built: Built): AppDeps {
  const { options, now, catalog, router, metrics, authenticator } = built;
  const { config, store, logger, limiter } = options;
  const authGuards = new AuthGuards({
    limiter,
    failuresPerMinute: config.rate_limits.auth_failures_per_minute,
    lookupsPerSecond: config.rate_limits.auth_lookups_per_second,
    now,
  });
  const separateListener = options.adminListener === true;
  return {
    edge: {
      limits: config.limits,
      trustedProxies: config.server.trusted_proxies,
      logger,
      metrics,
      observe: { metrics, catalog, now, ...(options.tracer === undefined ? {} : { tracer: options.tracer }) },
      ...(built.requestLog === undefined ? {} : { requestLog: built.requestLog }),
    },
    v1: {
      catalog,
      router,
      billing: built.billing,
      holdKeeper: built.holdKeeper,
      metrics,
      limiter,
      store,
      sealer: built.sealer,
      inFlight: built.inFlight,
      settleRetrier: built.settleRetrier,
      now,
      authenticator,
      authGuards,
      rateLimits: config.rate_limits,
      uploadLimits: config.limits.max_upload_bytes,
      socketLimits: { maxMessageBytes: config.limits.max_body_bytes, idleMs: config.limits.socket_idle_ms },
    },
    admin: {
      store,
      authGuards,
      accountsChanged: () => {
        authenticator.invalidate();
        // Without it (or when Redis is away) the other instances notice through the revision poll.
        options.announceKeyChange?.().catch((error: unknown) => logger.warn({ err: error }, 'announcing a key change through Redis failed'));
      },
      config,
      catalog,
      catalogControl: built.catalogRuntime,
      router,
      now,
      separateListener,
    },
    console: { store, authGuards, limiter, now, authenticator, config, catalog, catalogModels: () => built.catalogRuntime.current().catalog.models, router, separateAdminListener: separateListener },
    ops: {
      metrics,
      ...(options.scrapeMetrics === undefined ? {} : { scrapeMetrics: options.scrapeMetrics }),
      requireAdminToken: config.metrics.require_admin_token,
      adminTokens: { store, authGuards },
    },
  };
}
