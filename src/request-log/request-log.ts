/**
 * The request log as the gateway runs it: hooks that turn each answered `/v1` request into a row
 * (entry.ts) and hand it to the batch writer (writer.ts), the optional body capture for models
 * whose catalog entry turns on `log_bodies`, the background pruning (retention.ts), and the
 * metrics of rows dropped while the database is away. `close` flushes what is queued.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ConfigFile } from '../config/schema.js';
import type { OperationsStore, RequestLogEntry } from '../store/store.js';
import { capUtf8, requestLogEntry, type CapturedBodies } from './entry.js';
import { RequestLogRetention } from './retention.js';
import { RequestLogWriter, type RequestLogWriterOptions } from './writer.js';

export interface RequestLogOptions {
  config: ConfigFile;
  store: OperationsStore;
  logger: Logger;
  registry: Registry;
  now: () => number;
  /** How often expired rows are looked for (the first pass runs soon after start). */
  pruneIntervalMs?: number;
  writer?: Omit<RequestLogWriterOptions, 'write' | 'onDrop' | 'onError' | 'onRecovered'>;
  /**
   * The models of the catalog version served now (docs/architecture.md, "The catalog at runtime"),
   * whose `log_bodies` apply from the next answer on; the file's models when absent.
   */
  catalogModels?: () => ConfigFile['models'];
  /** Shown each row as it is recorded (the `slow_answer` alert watches them); must not throw. */
  observe?: (entry: RequestLogEntry) => void;
}

export interface RequestLog {
  writer: RequestLogWriter;
  retention: RequestLogRetention;
  /** Adds the hooks that record each answered `/v1` request. */
  register(app: FastifyInstance): void;
  /** Stops the pruning and writes what is queued. */
  close(): Promise<void>;
}

export function createRequestLog(options: RequestLogOptions): RequestLog {
  const dropped = counter(options.registry);
  let failing = false;
  const writer = new RequestLogWriter({
    ...options.writer,
    write: (entries) => options.store.appendRequestLog(entries),
    onDrop: (rows) => dropped.inc(rows),
    onError: (error, rows) => {
      // Once per outage, not once per retry.
      if (!failing) options.logger.warn({ err: error, rows }, 'writing request log rows failed; retrying with backoff (rows past the queue bound are dropped)');
      failing = true;
    },
    onRecovered: () => {
      failing = false;
      options.logger.info('request log rows are written again');
    },
  });
  queuedGauge(options.registry, () => writer.queued);
  const retention = new RequestLogRetention({ store: options.store, retentionDays: options.config.log.retention_days, now: options.now });
  const prune = () => {
    retention.pruneExpired().catch((error: unknown) => options.logger.warn({ err: error }, 'pruning the request log failed'));
  };
  const pruneIntervalMs = options.pruneIntervalMs ?? 600_000;
  const firstPrune = setTimeout(prune, Math.min(pruneIntervalMs, 10_000));
  const pruneTimer = setInterval(prune, pruneIntervalMs);
  firstPrune.unref();
  pruneTimer.unref();

  const limitsOf = (models: ConfigFile['models']) => new Map(models.flatMap((model) => (model.log_bodies === undefined ? [] : [[model.id, model.log_bodies.max_bytes] as const])));
  // Worked out again only when the served version changes (its models are a new array).
  let limits = { models: options.config.models, byModel: limitsOf(options.config.models) };
  const bodyLimits = (): ReadonlyMap<string, number> => {
    const models = options.catalogModels?.() ?? options.config.models;
    if (models !== limits.models) limits = { models, byModel: limitsOf(models) };
    return limits.byModel;
  };
  const answers = new WeakMap<FastifyRequest, string>();
  /** The request as the client sent it and a JSON answer, cut at the model's `log_bodies` size. */
  const bodiesOf = (request: FastifyRequest): CapturedBodies | undefined => {
    const maxBytes = request.outcome === null ? undefined : bodyLimits().get(request.outcome.model);
    if (maxBytes === undefined) return undefined;
    const answer = answers.get(request);
    return {
      requestBody: typeof request.body === 'string' ? capUtf8(request.body, maxBytes) : null,
      responseBody: answer === undefined ? null : capUtf8(answer, maxBytes),
    };
  };

  return {
    writer,
    retention,
    register(app) {
      const record = (request: FastifyRequest, reply: FastifyReply, status?: number) => {
        const entry = requestLogEntry(request, reply, options.now(), bodiesOf(request), status);
        if (entry === undefined) return;
        writer.record(entry);
        options.observe?.(entry);
      };
      // Only when some model keeps bodies, or may come to at runtime: a JSON answer as sent (a stream's is not kept).
      if (bodyLimits().size > 0 || options.catalogModels !== undefined) {
        app.addHook('onSend', async (request, _reply, payload) => {
          if (typeof payload === 'string' && request.outcome !== null && bodyLimits().has(request.outcome.model)) answers.set(request, payload);
          return payload;
        });
      }
      app.addHook('onRequest', async (request, reply) => {
        // Fastify runs no onResponse for a client that went away before the end: such an answer
        // is recorded once its handler is done (its hold settled), as 499 when nothing was sent.
        // `on`: 'close' is emitted once, and `once` would wrap the listener on every response.
        reply.raw.on('close', () => {
          const outcome = request.outcome;
          if (reply.raw.writableFinished || outcome === null) return;
          void outcome.ended.then(() => record(request, reply, reply.raw.headersSent ? reply.raw.statusCode : CLIENT_CLOSED));
        });
      });
      app.addHook('onResponse', async (request, reply) => record(request, reply));
    },
    async close() {
      clearTimeout(firstPrune);
      clearInterval(pruneTimer);
      await retention.stop();
      await writer.close();
    },
  };
}

/** The usual status for "client closed request" (nginx's). */
const CLIENT_CLOSED = 499;

const DROPPED = 'tollgate_request_log_dropped_total';
const QUEUED = 'tollgate_request_log_queued_rows';

function counter(registry: Registry): Counter {
  const existing = registry.getSingleMetric(DROPPED);
  if (existing instanceof Counter) return existing;
  return new Counter({ name: DROPPED, help: 'Request log rows dropped because the queue was full (the database was away) or a final write failed.', registers: [registry] });
}

function queuedGauge(registry: Registry, read: () => number): void {
  registry.removeSingleMetric(QUEUED);
  new Gauge({ name: QUEUED, help: 'Request log rows waiting to be written.', registers: [registry], collect() { this.set(read()); } });
}
