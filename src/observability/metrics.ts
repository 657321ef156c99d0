/**
 * Prometheus metrics (prom-client), one registry per process: answers by route and error code
 * (the closed GatewayError code set is the label), request durations and time to first byte,
 * tokens and cost by model, open streams, open holds, upstream failures, and decisions taken
 * without the limit store. Under `serve --workers N` the primary sums every worker's registry
 * (server/cluster-metrics.ts), so each gauge and counter here is one that adds up across processes.
 *
 * Label values are bounded: `model` is a catalog id (anything else is `unknown`), `surface` one of
 * three, `status` an HTTP status the app answers, `target` a catalog target, `kind` a closed set,
 * `provider` and `key` a catalog provider and the name of one of its pooled keys (never a secret).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { limiterFailureCounter } from '../ratelimit/failure-policy.js';

export interface Metrics {
  registry: Registry;
  answers: Counter<'route' | 'code'>;
  limiterFailures: Counter<'policy'>;
  /** Cost upstreams reported beyond the holds (nano-USD), recorded and not billed. */
  billingExcess: Counter<'model'>;
  /** Usage reports that failed the sanity check (the metered count was billed instead). */
  rejectedUsageReports: Counter<'model'>;
  /** Routed `/v1` answers, from the request to the end of the response (a stream's last byte). */
  requestDuration: Histogram<'surface' | 'model' | 'status'>;
  /** Routed `/v1` answers, from the request to the first byte of the answer. */
  timeToFirstByte: Histogram<'surface' | 'model' | 'status'>;
  /** Tokens billed, by kind: input, cached_input, cache_write_input, output, reasoning. */
  tokens: Counter<'model' | 'kind'>;
  /** Cost billed (nano-USD). */
  cost: Counter<'model'>;
  /** Streamed answers being written now. */
  openStreams: Gauge;
  /** Operations per group-committed hold transaction (its count is the number of commits). */
  holdCommits: Histogram;
  /** Holds of running requests (read from the hold keeper when scraped; see `countHoldsOpen`). */
  holdsOpen: Gauge;
  /** Upstream attempts that failed, by target and kind (connect, timeout, status, protocol, credentials, mid_stream). */
  upstreamFailures: Counter<'target' | 'kind'>;
  /** The gateway's own faults inside an answer (bugs, each logged at error level), by stage: metering, delivery. */
  answerFaults: Counter<'stage'>;
  /** Clients that closed the connection before their answer ended, by surface and stage (before_answer, mid_answer). */
  clientDisconnects: Counter<'surface' | 'stage'>;
  /** Where `holdsOpen` reads its value when scraped (the gateway sets it to its hold keeper's size). */
  countHoldsOpen: () => number;
  /** Holds admitted, by path: `slice` (in memory, from a quota slice) or `exact` (a hold row by its guarded UPDATE). */
  holdsAdmitted: Counter<'path'>;
  /** Where `tollgate_quota_slices` reads its value when scraped (the gateway sets it to its slices' count). */
  countQuotaSlices: () => number;
  /** Pooled upstream keys that were refused or began to cool down, by provider, key name and event. */
  upstreamKeyEvents: Counter<'provider' | 'key' | 'event'>;
  /** Where the pooled keys' states and calls are read when scraped (the gateway sets it to its providers' pools). */
  readUpstreamKeys: () => readonly UpstreamKeyReading[];
}

/** One pooled upstream key as `/metrics` shows it: by name, never by its secret. */
export interface UpstreamKeyReading {
  provider: string;
  key: string;
  state: 'ok' | 'cooling' | 'refused';
  /** Calls sent with it since the process started. */
  calls: number;
}

const UPSTREAM_KEY_STATES = ['ok', 'cooling', 'refused'] as const;

/** Seconds: a gateway answer lasts from a few milliseconds (a refusal) to many minutes (a long stream). */
const DURATION_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
/** Seconds: dominated by the upstream's own time to first token. */
const FIRST_BYTE_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const answers = new Counter({
    name: 'tollgate_answers_total',
    help: 'Answers by route and outcome (ok, or the gateway error code).',
    labelNames: ['route', 'code'] as const,
    registers,
  });
  const billingExcess = new Counter({
    name: 'tollgate_billing_excess_nanos_total',
    help: 'Cost upstreams reported beyond the requests\' holds, in nano-USD: recorded in the ledger as excess, not billed.',
    labelNames: ['model'] as const,
    registers,
  });
  const rejectedUsageReports = new Counter({
    name: 'tollgate_usage_reports_rejected_total',
    help: 'Upstream usage reports that failed the sanity check; the gateway\'s metered count was billed instead.',
    labelNames: ['model'] as const,
    registers,
  });
  const requestDuration = new Histogram({
    name: 'tollgate_request_duration_seconds',
    help: 'Routed /v1 requests, from arrival to the last byte of the answer, by surface, model and HTTP status.',
    labelNames: ['surface', 'model', 'status'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  const timeToFirstByte = new Histogram({
    name: 'tollgate_time_to_first_byte_seconds',
    help: 'Routed /v1 requests, from arrival to the first byte of the answer, by surface, model and HTTP status.',
    labelNames: ['surface', 'model', 'status'] as const,
    buckets: FIRST_BYTE_BUCKETS,
    registers,
  });
  const tokens = new Counter({
    name: 'tollgate_tokens_total',
    help: 'Tokens billed, by model and kind (input, cached_input, cache_write_input, output, reasoning).',
    labelNames: ['model', 'kind'] as const,
    registers,
  });
  const cost = new Counter({
    name: 'tollgate_cost_nanos_total',
    help: 'Cost billed to accounts, in nano-USD (1e-9 USD), by model.',
    labelNames: ['model'] as const,
    registers,
  });
  const openStreams = new Gauge({
    name: 'tollgate_open_streams',
    help: 'Streamed answers being written now.',
    registers,
  });
  const upstreamFailures = new Counter({
    name: 'tollgate_upstream_failures_total',
    help: 'Upstream attempts that failed, by target (provider/model) and kind (connect, timeout, status, protocol, credentials; mid_stream after the first byte).',
    labelNames: ['target', 'kind'] as const,
    registers,
  });
  const answerFaults = new Counter({
    name: 'tollgate_answer_faults_total',
    help: 'Faults of the gateway itself inside an answer (a bug, logged at error level with the request id), by stage: metering, delivery. The answer still ended and settled.',
    labelNames: ['stage'] as const,
    registers,
  });
  const clientDisconnects = new Counter({
    name: 'tollgate_client_disconnects_total',
    help: 'Clients that closed the connection before their /v1 answer ended, by surface and stage (before_answer: nothing sent yet; mid_answer: after the first byte).',
    labelNames: ['surface', 'stage'] as const,
    registers,
  });
  const holdCommits = new Histogram({
    name: 'tollgate_hold_batch_operations',
    help: 'Hold operations (opens, settlements, checkpoints) per group-committed database transaction.',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers,
  });
  // 1 per process, so that the sum over `serve --workers N` says how many workers it covers.
  new Gauge({
    name: 'tollgate_processes',
    help: 'Serving processes counted in these metrics (the workers, under serve --workers N).',
    registers,
  }).set(1);
  const metrics: Metrics = {
    registry,
    answers,
    limiterFailures: limiterFailureCounter(registry),
    billingExcess,
    rejectedUsageReports,
    requestDuration,
    timeToFirstByte,
    tokens,
    cost,
    openStreams,
    upstreamFailures,
    answerFaults,
    clientDisconnects,
    holdCommits,
    countHoldsOpen: () => 0,
    holdsAdmitted: new Counter({
      name: 'tollgate_holds_admitted_total',
      help: 'Holds admitted, by path: slice (in memory, from a quota slice of the account this process holds; no database write) or exact (a hold row through the guarded UPDATE).',
      labelNames: ['path'] as const,
      registers,
    }),
    countQuotaSlices: () => 0,
    upstreamKeyEvents: new Counter({
      name: 'tollgate_upstream_key_events_total',
      help: 'Pooled upstream keys refused by the upstream (401, 403: out of the pool) or cooling down after a 429, by provider, key name and event (refused, cooling).',
      labelNames: ['provider', 'key', 'event'] as const,
      registers,
    }),
    readUpstreamKeys: () => [],
    holdsOpen: new Gauge({
      name: 'tollgate_holds_open',
      help: 'Holds of requests running now (reserved, not settled yet).',
      registers,
      // Read when scraped: nothing to do per request.
      collect() {
        this.set(metrics.countHoldsOpen());
      },
    }),
  };
  new Gauge({
    name: 'tollgate_quota_slices',
    help: 'Quota slices this process admits holds from now (one per busy account at most).',
    registers,
    collect() {
      this.set(metrics.countQuotaSlices());
    },
  });
  // Read when scraped, from the pools themselves: nothing to do per request.
  new Gauge({
    name: 'tollgate_upstream_key_state',
    help: 'Each pooled upstream key\'s state, by provider and key name: 1 for its current state (ok, cooling, refused), 0 for the others. Summed over workers, the number of processes that see it so.',
    labelNames: ['provider', 'key', 'state'] as const,
    registers,
    collect() {
      this.reset();
      for (const reading of metrics.readUpstreamKeys()) {
        for (const state of UPSTREAM_KEY_STATES) this.set({ provider: reading.provider, key: reading.key, state }, reading.state === state ? 1 : 0);
      }
    },
  });
  new Counter({
    name: 'tollgate_upstream_key_calls_total',
    help: 'Upstream calls sent with each pooled key, by provider and key name (a call sent again on a sibling key counts once per key).',
    labelNames: ['provider', 'key'] as const,
    registers,
    collect() {
      this.reset();
      for (const reading of metrics.readUpstreamKeys()) this.inc({ provider: reading.provider, key: reading.key }, reading.calls);
    },
  });
  return metrics;
}
