/**
 * Meters one answer's usage from its canonical events. Output is always counted as it streams,
 * with the real tokenizer, in bounded batches so that memory per stream stays constant; the
 * upstream's own report wins when it passes a sanity check, and the metered count stands in when
 * it does not (absurd or negative figures, or none at all: a stream cut short). Counting stops once
 * the output reaches what the hold covers, since nothing beyond it can be billed.
 */
import { isSaneUsage, type CanonicalEvent, type Usage } from '../protocol/canonical.js';
import { countTextTokens, utf8Length } from '../protocol/tokens.js';

/**
 * Characters buffered before they are counted: small, because an open stream keeps them (as a
 * rope of many small strings), and 5,000 open streams multiply it; large enough that a typical
 * delta is not tokenized on its own.
 */
const BATCH_CHARACTERS = 256;

// The sanity check of a report lives with the Usage type, where providers read it too.
export { isSaneUsage, MAX_REPORTED_TOKENS } from '../protocol/canonical.js';

export class UsageMeter {
  private reported: Usage | undefined;
  private countedOutput = 0;
  private countedReasoning = 0;
  private pendingOutput = '';
  private pendingReasoning = '';
  private sawOutput = false;
  /** What the tokenizer threw, if it ever did (a gateway bug); see `countingFault`. */
  private fault: { error: unknown } | undefined;

  private estimatedInput: number | (() => number);

  /**
   * @param estimatedInput the gateway's count of the input, billed when no sane report comes; a
   * function is called once, when first needed (most answers carry a sane report and never need it)
   * @param maxOutputTokens what the hold covers: counting stops there
   */
  constructor(
    estimatedInput: number | (() => number),
    private readonly maxOutputTokens: number = Number.MAX_SAFE_INTEGER,
  ) {
    this.estimatedInput = estimatedInput;
  }

  observe(event: CanonicalEvent): void {
    switch (event.type) {
      case 'usage':
        this.reported = event.usage;
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
      default:
        return;
    }
  }

  /** Whether the upstream produced anything billable (output, or a usage report). */
  get producedAnything(): boolean {
    return this.sawOutput || this.reported !== undefined;
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

  /** The usage to bill: the upstream's report when it is sane, else what was counted so far. */
  usage(): Usage {
    if (this.reported !== undefined && isSaneUsage(this.reported)) return this.reported;
    return this.metered();
  }

  /** What the gateway counted itself: its input estimate and the output seen so far. */
  metered(): Usage {
    this.countedOutput += this.count(this.pendingOutput);
    this.pendingOutput = '';
    this.countedReasoning += this.count(this.pendingReasoning);
    this.pendingReasoning = '';
    if (typeof this.estimatedInput === 'function') this.estimatedInput = this.estimatedInput();
    return {
      inputTokens: this.estimatedInput,
      cachedInputTokens: 0,
      outputTokens: this.countedOutput + this.countedReasoning,
      reasoningTokens: this.countedReasoning,
    };
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
