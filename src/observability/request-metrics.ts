/**
 * Records one routed `/v1` answer in the metrics once its response has ended, from the request's
 * outcome (request-outcome.ts). Label values are bounded here: a model outside the catalog counts
 * as `unknown`, a surface outside the three as `unknown`. The label children are bound once per
 * model (and per surface and status on first use), so that an answer costs a few map lookups and
 * increments, with no label objects built per request.
 */
import type { Usage } from '../protocol/canonical.js';
import type { Metrics } from './metrics.js';
import type { RequestOutcome } from './request-outcome.js';

/** The label value for a model or surface outside the bounded set. */
export const UNKNOWN_LABEL = 'unknown';

/** Both spellings of each surface (the client's path name and the canonical one) map to one label. */
const SURFACE_LABELS: ReadonlyMap<string, string> = new Map([
  ['chat', 'chat'],
  ['chat-completions', 'chat'],
  ['responses', 'responses'],
  ['messages', 'messages'],
  ['anthropic-messages', 'messages'],
  ['embeddings', 'embeddings'],
  ['moderations', 'moderations'],
  ['speech', 'speech'],
  ['image-generations', 'image-generations'],
  ['image-edits', 'image-edits'],
  ['transcriptions', 'transcriptions'],
  ['translations', 'translations'],
]);

/** The bounded `surface` label of a surface (either spelling), `unknown` for anything else. */
export function surfaceLabel(surface: string): string {
  return SURFACE_LABELS.get(surface) ?? UNKNOWN_LABEL;
}

interface Increment {
  inc(value: number): void;
}
interface Observe {
  observe(value: number): void;
}
interface Timings {
  duration: Observe;
  firstByte: Observe;
}

interface ModelInstruments {
  model: string;
  input: Increment;
  cachedInput: Increment;
  cacheWriteInput: Increment;
  output: Increment;
  reasoning: Increment;
  cost: Increment;
  /** surface label → HTTP status → bound histogram children. */
  timings: Map<string, Map<number, Timings>>;
}

export class RequestMetrics {
  private readonly byModel = new Map<string, ModelInstruments>();
  private readonly unknownModel: ModelInstruments;

  constructor(
    private readonly metrics: Metrics,
    modelIds: Iterable<string>,
    /** Whether a model id is in the catalog served now (a model added at runtime gets its own label). */
    private readonly isCatalogModel: (id: string) => boolean = () => false,
  ) {
    for (const id of modelIds) this.byModel.set(id, this.bind(id));
    this.unknownModel = this.byModel.get(UNKNOWN_LABEL) ?? this.bind(UNKNOWN_LABEL);
  }

  /**
   * One answer whose response has ended: `elapsedMs` since the request arrived (the response's
   * own clock) and `now`, on the clock `outcome.firstByteAt` was taken with.
   */
  record(outcome: RequestOutcome, status: number, elapsedMs: number, now: number): void {
    const instruments = this.byModel.get(outcome.model) ?? this.bindAdded(outcome.model);
    const timings = this.timings(instruments, surfaceLabel(outcome.surface), status);
    timings.duration.observe(elapsedMs / 1000);
    if (outcome.firstByteAt !== null) {
      const arrivedAt = now - elapsedMs;
      timings.firstByte.observe(Math.max(0, outcome.firstByteAt - arrivedAt) / 1000);
    }
    if (outcome.usage !== null) countTokens(instruments, outcome.usage);
    // A counter is a float: exact up to 2^53 nano-USD (about 9 million USD) per model and process,
    // which is plenty for a rate; the ledger is what holds money.
    if (outcome.costNanos > 0n) instruments.cost.inc(Number(outcome.costNanos));
  }

  private timings(instruments: ModelInstruments, surface: string, status: number): Timings {
    let byStatus = instruments.timings.get(surface);
    if (byStatus === undefined) instruments.timings.set(surface, (byStatus = new Map()));
    let timings = byStatus.get(status);
    if (timings === undefined) {
      const labels = [surface, instruments.model, String(status)] as const;
      timings = { duration: this.metrics.requestDuration.labels(...labels), firstByte: this.metrics.timeToFirstByte.labels(...labels) };
      byStatus.set(status, timings);
    }
    return timings;
  }

  /** A model the catalog gained at runtime (docs/architecture.md, "The catalog at runtime"), bound once; anything else is `unknown`. */
  private bindAdded(model: string): ModelInstruments {
    if (!this.isCatalogModel(model)) return this.unknownModel;
    const instruments = this.bind(model);
    this.byModel.set(model, instruments);
    return instruments;
  }

  private bind(model: string): ModelInstruments {
    const tokens = (kind: string) => this.metrics.tokens.labels(model, kind);
    return {
      model,
      input: tokens('input'),
      cachedInput: tokens('cached_input'),
      cacheWriteInput: tokens('cache_write_input'),
      output: tokens('output'),
      reasoning: tokens('reasoning'),
      cost: this.metrics.cost.labels(model),
      timings: new Map(),
    };
  }
}

/** `input` includes the cached and cache-write input tokens, `output` the reasoning tokens, as in Usage. */
function countTokens(instruments: ModelInstruments, usage: Usage): void {
  if (usage.inputTokens > 0) instruments.input.inc(usage.inputTokens);
  if (usage.cachedInputTokens > 0) instruments.cachedInput.inc(usage.cachedInputTokens);
  if ((usage.cacheWriteInputTokens ?? 0) > 0) instruments.cacheWriteInput.inc(usage.cacheWriteInputTokens ?? 0);
  if (usage.outputTokens > 0) instruments.output.inc(usage.outputTokens);
  if (usage.reasoningTokens > 0) instruments.reasoning.inc(usage.reasoningTokens);
}
