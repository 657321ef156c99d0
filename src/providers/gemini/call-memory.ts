/**
 * What a Gemini function call needs on its way back that an OpenAI client does not keep: the
 * call's `thoughtSignature`, and whether its id was Gemini's own. Gemini 3 answers a 400 when a
 * replayed `functionCall` part lacks the signature it came with (docs/wire-protocols.md §5.3,
 * https://ai.google.dev/gemini-api/docs/thought-signatures), and the canonical model has no field
 * for it, so the provider remembers it by call id (docs/wire-protocols.md §5.6: "remember the id →
 * signature pair for the next turn").
 *
 * The memory is per provider and per process, bounded, oldest first out. A call it does not know
 * (another gateway instance served it, the process restarted, it was evicted, or it came from
 * another model) is replayed with Google's documented sentinel instead; see request-body.ts.
 */

/** What is remembered of one function call the model made. */
export interface RememberedCall {
  /** The opaque `thoughtSignature` of the call's part, when it had one. */
  signature?: string;
  /** True when the call id is Gemini's own `functionCall.id` (sent back on the replay). */
  upstreamId: boolean;
}

export interface CallMemoryOptions {
  maxEntries?: number;
  /** Bound on the summed length of the remembered signatures. */
  maxSignatureCharacters?: number;
}

export class CallMemory {
  readonly #calls = new Map<string, RememberedCall>();
  readonly #maxEntries: number;
  readonly #maxCharacters: number;
  #characters = 0;

  constructor(options: CallMemoryOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 20_000;
    this.#maxCharacters = options.maxSignatureCharacters ?? 32 * 1024 * 1024;
  }

  /** Remembers a call; one with nothing worth remembering is not stored. */
  remember(callId: string, call: RememberedCall): void {
    if (call.signature === undefined && !call.upstreamId) return;
    const size = call.signature?.length ?? 0;
    // A signature larger than the whole memory could only evict everything else.
    if (size > this.#maxCharacters) return;
    this.#forget(callId);
    this.#calls.set(callId, call);
    this.#characters += size;
    for (const [oldest] of this.#calls) {
      if (this.#calls.size <= this.#maxEntries && this.#characters <= this.#maxCharacters) break;
      this.#forget(oldest);
    }
  }

  recall(callId: string): RememberedCall | undefined {
    return this.#calls.get(callId);
  }

  get size(): number {
    return this.#calls.size;
  }

  #forget(callId: string): void {
    const known = this.#calls.get(callId);
    if (known === undefined) return;
    this.#calls.delete(callId);
    this.#characters -= known.signature?.length ?? 0;
  }
}
