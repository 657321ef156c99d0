/**
 * The built-in `simulated` provider: a model that needs no network. Its answers are deterministic
 * (derived from the request), its usage is counted with the real tokenizer, it streams at a
 * configured pace, and it can be told to fail in each of the ways a real upstream fails, so the
 * gateway's failover, timeouts, aborts and billing can be exercised and demonstrated offline.
 */
import type { CanonicalEvent, CanonicalRequest } from '../../protocol/canonical.js';
import type { SimulatedProviderConfig } from '../../config/schema.js';
import { UpstreamError, type Provider, type ProviderCall } from '../provider.js';
import { abortableSleep } from './abortable-sleep.js';
import { planAnswer } from './answer-plan.js';
import { simulateEmbeddings } from './embeddings.js';
import { simulateImages } from './images.js';
import { simulateModerations } from './moderations.js';
import { simulateSpeech } from './speech.js';
import { simulateTranscription } from './transcriptions.js';

const MID_STREAM_ERROR: CanonicalEvent = Object.freeze({
  type: 'error',
  code: 'server_error',
  message: 'simulated upstream failure mid-stream',
});

/** Events that carry streamed content, each preceded by a `pace_ms` pause. */
function isChunk(event: CanonicalEvent): boolean {
  return event.type === 'reasoning-delta' || event.type === 'text-delta' || event.type === 'tool-call-delta';
}

/** The chunks `failure.after_chunks` counts: the visible answer's (text or tool arguments), not reasoning. */
function isAnswerChunk(event: CanonicalEvent): boolean {
  return event.type === 'text-delta' || event.type === 'tool-call-delta';
}

/**
 * `hang`: says nothing at all, like an upstream that accepted the connection and went silent. Ends
 * with a `timeout` failure when the caller aborts, or after `timeouts.first_byte_ms`, whichever
 * comes first.
 */
async function hang(config: SimulatedProviderConfig, signal: AbortSignal): Promise<never> {
  const timedOut = await abortableSleep(config.timeouts.first_byte_ms, signal);
  throw new UpstreamError(
    'timeout',
    timedOut
      ? `simulated upstream sent no first byte within ${config.timeouts.first_byte_ms} ms`
      : 'simulated upstream was silent until the call was aborted',
  );
}

async function* simulate(config: SimulatedProviderConfig, request: CanonicalRequest, call: ProviderCall): AsyncGenerator<CanonicalEvent, void, undefined> {
  const { signal } = call;
  if (signal.aborted) return;
  // Planned before any failure so a bad request is refused (400) as a real upstream would.
  const plan = planAnswer(request, call);
  const failure = config.failure.mode;
  if (failure === 'before_first_byte') throw new UpstreamError('status', 'simulated upstream failure', { status: 500 });
  if (failure === 'hang') await hang(config, signal);

  yield { type: 'response-start', upstreamModel: call.upstreamModel };
  let answerChunks = 0;
  for (const event of plan.deltas) {
    if (isChunk(event)) {
      if (!(await abortableSleep(config.pace_ms, signal))) return;
      if (failure === 'mid_stream' && isAnswerChunk(event) && answerChunks >= config.failure.after_chunks) {
        yield MID_STREAM_ERROR;
        return;
      }
    }
    // The consumer may abort between two events without a pause (pace 0): stop at once.
    if (signal.aborted) return;
    yield event;
    if (isAnswerChunk(event)) answerChunks++;
  }
  // An answer shorter than `after_chunks` still fails, before its usage: the mode always fails.
  if (failure === 'mid_stream') {
    if (!(await abortableSleep(config.pace_ms, signal))) return;
    yield MID_STREAM_ERROR;
    return;
  }
  if (signal.aborted) return;
  yield { type: 'usage', usage: plan.usage };
  yield { type: 'finish', reason: plan.finishReason };
}

/**
 * Builds the simulated provider described by `config`.
 *
 * - Answers deterministically: text quoting the last user message (or the tool outputs that end the
 *   input), a tool call (two in parallel when allowed) when tools are offered, JSON when a
 *   response format asks for it, a reasoning summary first when an effort is set.
 * - Never exceeds `call.maxOutputTokens` (reasoning included); a cut answer finishes with `length`.
 * - Usage is counted with o200k_base (see token-count.ts for the input framing).
 * - `failure.mode`: `before_first_byte` throws a 500 `UpstreamError`; `mid_stream` yields an `error`
 *   event after `after_chunks` answer chunks; `hang` yields nothing and throws a `timeout`
 *   `UpstreamError` on abort or after `timeouts.first_byte_ms`.
 * - Stops without further events when `call.signal` aborts, even in the middle of a pause.
 *
 * - Embeddings: deterministic unit vectors, inputs counted exactly (embeddings.ts); moderations:
 *   deterministic results that flag a few words (moderations.ts); speech: a tone, WAV or PCM
 *   (speech.ts); images: solid-colour PNGs, usage in tokens as gpt-image-1 reports it (images.ts).
 *
 * It has no pass-through path and holds no resources.
 */
export function createSimulatedProvider(config: SimulatedProviderConfig): Provider {
  return {
    name: config.name,
    stream: (request, call) => simulate(config, request, call),
    embed: (call) => simulateEmbeddings(config, call),
    moderate: (call) => simulateModerations(config, call),
    speak: (call) => simulateSpeech(config, call),
    images: (call) => simulateImages(config, call),
    transcribe: (call) => simulateTranscription(config, call),
  };
}
