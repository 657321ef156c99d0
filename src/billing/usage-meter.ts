/**
 * Meters one answer's usage from its canonical events. Output is always counted as it streams,
 * with the real tokenizer, in bounded batches so that memory per stream stays constant; the
 * upstream's own report wins when it passes a sanity check, and the metered count stands in when
 * it does not (absurd or negative figures, or none at all: a stream cut short). Counting stops once
 * the output reaches what the hold covers, since nothing beyond it can be billed.
 *
 * The input is billed from the moment the upstream accepted the request (`accepted`): it has read
 * the whole prompt by then, whatever happens to the answer. When no sane report comes, the input
 * billed is the gateway's exact count of the request as sent, made only then (or for a checkpoint
 * of a running answer), a slice at a time with pauses in between: never the hold's bound.
 */
import { runYielding } from '../lib/run-yielding.js';
import { isSaneUsage, type CanonicalEvent, type InputUsage, type PricedUnits, type Usage } from '../protocol/canonical.js';
import { countTextTokens, utf8Length } from '../protocol/tokens.js';

/**
 * Characters buffered before they are counted: small, because an open stream keeps them (as a
 * rope of many small strings), and 5,000 open streams multiply it; large enough that a typical
 * delta is not tokenized on its own.
 */
const BATCH_CHARACTERS = 256;

// The sanity check of a report lives with the Usage type, where providers read it too.
export { isSaneUsage, MAX_REPORTED_TOKENS } from '../protocol/canonical.js';

/**
 * The gateway's count of the input: a number, or the work that counts it, pausing (yielding)
 * between slices (protocol/tokens.ts, countInputTokens), started only when the count is needed.
 */
const NO_INPUT: InputUsage = Object.freeze({ inputTokens: 0, cachedInputTokens: 0 });

/** The checkpoint of a running answer at which its input is counted, if no report has come (10 s at the default 2 s). */
export const COUNT_AT_CHECKPOINT = 5;

export type InputCount = number | (() => Generator<void, number>);

export class UsageMeter {
  private reported: Usage | undefined;
  private countedOutput = 0;
  private countedReasoning = 0;
  private pendingOutput = '';
  private pendingReasoning = '';
  private sawOutput = false;
  private wasAccepted = false;
  /** Checkpoints taken of the running answer. */
  private checkpoints = 0;
  /** What is billed per unit once the upstream accepted the request (images, audio, characters); see `billUnits`. */
  private units: PricedUnits | undefined;
  /** What the tokenizer threw, if it ever did (a gateway bug); see `countingFault`. */
  private fault: { error: unknown } | undefined;

  /** The input's count once known. */
  private input: number | undefined;
  /** What the upstream reported of the input before answering (sane only): billed over `input`. */
  private reportedInput: InputUsage | undefined;
  /** What counts it, until it has (then dropped, with the request it holds). */
  private countInputWork: (() => Generator<void, number>) | undefined;
  private counting: Promise<void> | undefined;

  /**
   * @param input the gateway's count of the input, billed once the upstream accepted the request
   * when no sane report comes; work is run once, when first needed (most answers carry a sane
   * report and never need it)
   * @param maxOutputTokens what the hold covers: counting stops there
   */
  constructor(
    input: InputCount,
    private readonly maxOutputTokens: number = Number.MAX_SAFE_INTEGER,
  ) {
    if (typeof input === 'number') this.input = input;
    else this.countInputWork = input;
  }

  /**
   * The upstream accepted the request (it answered 2xx, and the router committed to it): it has
   * the whole prompt, so from here on the input is billed even if no output ever comes.
   */
  accepted(): void {
    this.wasAccepted = true;
  }

  /**
   * Units billed each, on top of the tokens, once the answer is billable: what the request measured
   * (a file's duration, the characters to speak) from the start, replaced by what the upstream
   * reported (the images it made) when it does. A checkpoint carries them, so a crash bills them.
   */
  billUnits(units: PricedUnits): void {
    this.units = units;
  }

  /**
   * The upstream sent an error in its own stream (not a cut, a timeout or a client leaving). Before
   * any sign of an answer (output, or a report of its input or usage) that is a refusal after its
   * 200, as Anthropic sends `overloaded_error`: the upstream bills nothing for it, and neither do we.
   */
  refusedInBand(): void {
    if (!this.sawOutput && this.reported === undefined && this.reportedInput === undefined) this.wasAccepted = false;
  }

  observe(event: CanonicalEvent): void {
    switch (event.type) {
      case 'usage':
        this.reported = event.usage;
        return;
      case 'input-usage':
        if (isSaneUsage({ ...event.usage, outputTokens: 0, reasoningTokens: 0 })) this.reportedInput = event.usage;
        return;

      case 'text-delta':
      case 'tool-call-delta':
        this.sawOutput = true;
        if (this.full) return;
        this.pendingOutput += event.delta;
        if (this.pendingOutput.length >= BATCH_CHARACTERS) this.pendingOutput = this.countBefore(this.pendingOutput, 'output');
        return;
      case 'tool-call-start':
        this.sawOutput = true;
        if (!this.full) this.pendingOutput += event.name;
        return;
      case 'reasoning-delta':
        this.sawOutput = true;
        if (this.full) return;
        this.pendingReasoning += event.delta;
        if (this.pendingReasoning.length >= BATCH_CHARACTERS) this.pendingReasoning = this.countBefore(this.pendingReasoning, 'reasoning');
        return;
      // A search the upstream ran is work done: the answer is billable even if nothing else follows.
      case 'web-search':
        this.sawOutput = true;
        return;
      default:
        return;
    }
  }

  /**
   * Whether there is anything to bill: the upstream accepted the request, or produced output or a
   * usage report. An answer refused before its upstream accepted it bills nothing.
   */
  get billable(): boolean {
    return this.wasAccepted || this.sawOutput || this.reported !== undefined;
  }

  /** Whether the upstream reported usage that passes the sanity check (then it is what is billed). */
  private get saneReport(): boolean {
    return this.reported !== undefined && isSaneUsage(this.reported);
  }

  /** Whether the upstream reported usage that failed the sanity check (the metered count stands in). */
  get rejectedReport(): boolean {
    return this.reported !== undefined && !isSaneUsage(this.reported);
  }

  /**
   * What the tokenizer threw while counting this answer (a gateway bug, for the caller to log),
   * undefined when it never did. The text it failed on was counted by its UTF-8 bytes instead, an
   * upper bound of its tokens, so that metering never throws.
   */
  get countingFault(): { error: unknown } | undefined {
    return this.fault;
  }

  /**
   * The usage to bill: the upstream's report when it is sane, else what was counted so far, with
   * the input counted exactly (in slices; see InputCount) when it is billable.
   */
  async usage(): Promise<Usage> {
    if (this.reported !== undefined && this.saneReport) return this.withUnits(this.reported);
    if (this.billable && this.reportedInput === undefined) await this.countInput();
    return this.metered();
  }

  /**
   * The input as far as it can be told before the answer's first frame (what Messages'
   * `message_start` carries): what the upstream reported of it before answering, else the gateway's
   * own count, the one billed when no report comes (counted once, in slices). The answer's last
   * frame carries the usage billed.
   */
  async inputBeforeAnswer(): Promise<InputUsage> {
    if (this.reportedInput !== undefined) return this.reportedInput;
    if (this.reported !== undefined && this.saneReport) return this.reported;
    await this.countInput();
    return { inputTokens: this.input ?? 0, cachedInputTokens: 0 };
  }

  /**
   * What a checkpoint of the running answer records (billing/hold-keeper.ts): `metered()`. Once the
   * upstream accepted the request and the answer has run for COUNT_AT_CHECKPOINT checkpoints
   * without a report, the input is counted, in the background and at most once, so that a later
   * checkpoint carries it and a crash bills it. Not sooner: most answers end with a report, which
   * makes the count wasted work, and a short answer cut by a crash loses only its input.
   */
  checkpoint(): Usage {
    this.checkpoints += 1;
    if (this.checkpoints >= COUNT_AT_CHECKPOINT && this.wasAccepted && this.reportedInput === undefined && !this.saneReport) void this.countInput();
    return this.metered();
  }

  /**
   * What the gateway metered, without waiting: the output seen so far and, once it is billable, the
   * input the upstream reported before answering, else the gateway's own count as far as it is
   * counted (nothing yet while its count runs).
   */
  metered(): Usage {
    this.countedOutput += this.count(this.pendingOutput);
    this.pendingOutput = '';
    this.countedReasoning += this.count(this.pendingReasoning);
    this.pendingReasoning = '';
    const input: InputUsage = !this.billable ? NO_INPUT : (this.reportedInput ?? { inputTokens: this.input ?? 0, cachedInputTokens: 0 });
    return this.withUnits({ ...input, outputTokens: this.countedOutput + this.countedReasoning, reasoningTokens: this.countedReasoning });
  }

  /** `usage` with the units billed each, once the answer is billable. */
  private withUnits(usage: Usage): Usage {
    return this.units === undefined || !this.billable ? usage : { ...usage, units: this.units };
  }

  /**
   * Counts the input unless it is known; one count however often it is asked for. Never rejects: a
   * count that throws (a gateway bug) is kept as the meter's fault, for the settlement to report,
   * and the input is left out rather than the whole bill.
   */
  private countInput(): Promise<void> {
    const work = this.countInputWork;
    if (work === undefined) return Promise.resolve();
    return (this.counting ??= runYielding(work()).then(
      (tokens) => {
        this.input = tokens;
        this.countInputWork = undefined;
      },
      (error: unknown) => {
        this.fault ??= { error };
        this.countInputWork = undefined;
      },
    ));
  }

  private get full(): boolean {
    return this.countedOutput + this.countedReasoning >= this.maxOutputTokens;
  }

  /**
   * Counts `pending` up to its last space and returns the rest: tokens begin with their leading
   * space, so cutting there does not split a token, and the rest comes back as a flat string.
   */
  private countBefore(pending: string, kind: 'output' | 'reasoning'): string {
    const cut = pending.lastIndexOf(' ');
    const counted = cut > 0 ? pending.slice(0, cut) : pending;
    const tokens = this.count(counted);
    if (kind === 'output') this.countedOutput += tokens;
    else this.countedReasoning += tokens;
    return cut > 0 ? pending.slice(cut) : '';
  }

  private count(text: string): number {
    try {
      return countTextTokens(text);
    } catch (error) {
      this.fault ??= { error };
      return utf8Length(text);
    }
  }
}
