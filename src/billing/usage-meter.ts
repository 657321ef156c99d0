/**
 * Meters one answer's usage from its canonical events. The upstream's own usage wins when it
 * reports one; until then (and for a stream cut short) output is counted as it streams, with the
 * real tokenizer, in bounded batches so that memory per stream stays constant.
 */
import type { CanonicalEvent, Usage } from '../protocol/canonical.js';
import { countTextTokens } from '../protocol/tokens.js';

/**
 * Characters buffered before they are counted: small, because an open stream keeps them (as a
 * rope of many small strings), and 5,000 open streams multiply it; large enough that a typical
 * delta is not tokenized on its own.
 */
const BATCH_CHARACTERS = 256;

export class UsageMeter {
  private reported: Usage | undefined;
  private countedOutput = 0;
  private countedReasoning = 0;
  private pendingOutput = '';
  private pendingReasoning = '';
  private sawOutput = false;

  constructor(private readonly estimatedInputTokens: number) {}

  observe(event: CanonicalEvent): void {
    switch (event.type) {
      case 'usage':
        this.reported = event.usage;
        return;
      case 'text-delta':
      case 'tool-call-delta':
        this.sawOutput = true;
        if (this.reported !== undefined) return;
        this.pendingOutput += event.delta;
        if (this.pendingOutput.length >= BATCH_CHARACTERS) this.pendingOutput = this.countBefore(this.pendingOutput, 'output');
        return;
      case 'tool-call-start':
        this.sawOutput = true;
        if (this.reported === undefined) this.pendingOutput += event.name;
        return;
      case 'reasoning-delta':
        this.sawOutput = true;
        if (this.reported !== undefined) return;
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

  /** The usage to bill: the upstream's report, or what was counted so far. */
  usage(): Usage {
    if (this.reported !== undefined) return this.reported;
    this.flushOutput();
    this.flushReasoning();
    return {
      inputTokens: this.estimatedInputTokens,
      cachedInputTokens: 0,
      outputTokens: this.countedOutput + this.countedReasoning,
      reasoningTokens: this.countedReasoning,
    };
  }

  /**
   * Counts `pending` up to its last space and returns the rest: tokens begin with their leading
   * space, so cutting there does not split a token, and the rest comes back as a flat string.
   */
  private countBefore(pending: string, kind: 'output' | 'reasoning'): string {
    const cut = pending.lastIndexOf(' ');
    const counted = cut > 0 ? pending.slice(0, cut) : pending;
    const tokens = countTextTokens(counted);
    if (kind === 'output') this.countedOutput += tokens;
    else this.countedReasoning += tokens;
    return cut > 0 ? pending.slice(cut) : '';
  }

  private flushOutput(): void {
    this.countedOutput += countTextTokens(this.pendingOutput);
    this.pendingOutput = '';
  }

  private flushReasoning(): void {
    this.countedReasoning += countTextTokens(this.pendingReasoning);
    this.pendingReasoning = '';
  }
}
