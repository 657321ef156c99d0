/**
 * Alerts (README, "Alerts"; docs/architecture.md): webhooks from the catalog, their secrets read
 * from the environment once, the checkers that watch the database, events published by this
 * process (a target's health), and the deliverer. Nothing here runs on a request's path: a
 * published event is queued in memory and written to the outbox by the background loop.
 */
import type { Logger } from 'pino';
import type { AlertEventType, AlertsConfig } from '../config/schema.js';
import type { NewAlertDelivery, OperationsStore } from '../store/store.js';
import type { AlertChecker, AlertCheckContext } from './alert-checker.js';
import { deliveriesOf, webhookIdOf, type Webhook } from './alert-events.js';
import { createWebhookDeliverer } from './webhook-deliverer.js';

/** Published events held in memory while the outbox cannot be written (the oldest go first). */
const MAX_UNWRITTEN = 1_000;

export interface AlertsOptions {
  config: AlertsConfig;
  store: OperationsStore;
  env: Readonly<Record<string, string | undefined>>;
  logger: Pick<Logger, 'info' | 'warn' | 'error' | 'debug'>;
  now: () => number;
  /** The database checkers (low balance, …); each runs only if a webhook wants its events. */
  checkers: readonly AlertChecker[];
}

export interface Alerts {
  /** Whether any webhook receives `type`. */
  wants(type: AlertEventType): boolean;
  /** Queues an event that no claim guards (seen by this process alone); returns at once. */
  publish(type: AlertEventType, data: Record<string, unknown>): void;
  /** Starts the background loops: delivery every `delivery.poll_ms`, checks every `check_ms`. */
  start(): void;
  /** Stops them, writes what was published, and aborts deliveries under way (retried later). */
  close(): Promise<void>;
}

/** Reads each webhook's secret from the variable it names; a missing one stops the startup. */
export function resolveWebhooks(config: AlertsConfig, env: Readonly<Record<string, string | undefined>>): Webhook[] {
  return config.webhooks.map((webhook, index) => {
    const base = { id: webhookIdOf(webhook.url), url: webhook.url, format: webhook.format, events: new Set(webhook.events) };
    if (webhook.secret_env === undefined) return base;
    const secret = env[webhook.secret_env]?.trim() ?? '';
    if (secret === '') throw new Error(`alerts.webhooks[${index}]: environment variable ${webhook.secret_env} (its signing secret) is not set`);
    return { ...base, secret };
  });
}

export function createAlerts(options: AlertsOptions): Alerts {
  const { config, store, logger, now } = options;
  const webhooks = resolveWebhooks(config, options.env);
  const subscribed = new Set(webhooks.flatMap((webhook) => [...webhook.events]));
  const wants = (type: AlertEventType) => subscribed.has(type);
  if (webhooks.length === 0) return { wants, publish: () => undefined, start: () => undefined, close: async () => undefined };

  const checkers = options.checkers.filter((checker) => checker.eventTypes.some(wants));
  const deliverer = createWebhookDeliverer({ store, webhooks, delivery: config.delivery, logger, now });
  let unwritten: NewAlertDelivery[] = [];
  let flushScheduled = false;
  let checking: Promise<void> | undefined;
  const timers: NodeJS.Timeout[] = [];

  const deliver = () => {
    deliverer.poll().catch((error: unknown) => logger.warn({ err: error }, 'webhook delivery poll failed'));
  };

  async function flush(): Promise<void> {
    flushScheduled = false;
    if (unwritten.length === 0) return;
    const batch = unwritten;
    unwritten = [];
    try {
      await store.enqueueAlertDeliveries(batch);
    } catch (error) {
      unwritten = [...batch, ...unwritten].slice(-MAX_UNWRITTEN);
      logger.warn({ err: error, waiting: unwritten.length }, 'writing alerts to the outbox failed; will retry');
      return;
    }
    deliver();
  }

  const context = (): AlertCheckContext => ({
    now: new Date(now()),
    async raise(claim, type, data) {
      const raised = await store.claimAlert(claim, deliveriesOf(type, data, webhooks, new Date(now())));
      if (raised) {
        logger.info({ type, subject: claim.subjectId }, 'alert raised');
        deliver();
      }
      return raised;
    },
    rearm: (claim) => store.releaseAlertClaim(claim),
  });

  async function runChecks(): Promise<void> {
    for (const checker of checkers) {
      try {
        await checker.check(context());
      } catch (error) {
        logger.warn({ err: error, checker: checker.name }, 'alert check failed');
      }
    }
  }

  return {
    wants,
    publish(type, data) {
      const deliveries = deliveriesOf(type, data, webhooks, new Date(now()));
      if (deliveries.length === 0) return;
      unwritten.push(...deliveries);
      if (unwritten.length > MAX_UNWRITTEN) unwritten.splice(0, unwritten.length - MAX_UNWRITTEN);
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(() => void flush());
      }
    },
    start() {
      timers.push(
        setInterval(() => {
          void flush();
          deliver();
        }, config.delivery.poll_ms),
      );
      if (checkers.length > 0) {
        timers.push(
          setInterval(() => {
            checking ??= runChecks().finally(() => (checking = undefined));
          }, config.check_ms),
        );
      }
      for (const timer of timers) timer.unref();
      deliver();
    },
    async close() {
      for (const timer of timers) clearInterval(timer);
      await checking;
      await flush();
      await deliverer.close();
    },
  };
}
