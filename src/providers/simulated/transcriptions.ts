/**
 * The simulated provider's transcriptions and translations: a deterministic text drawn from the
 * file's measured duration and size (WORDS_PER_SECOND words, spread evenly over the audio), in
 * every format OpenAI answers (`json`, `text`, `srt`, `vtt`, `verbose_json` with segments and
 * words), or as `transcript.text.delta` events then `transcript.text.done`, `pace_ms` apart. It
 * reports no usage, so the measured duration is billed (docs/wire-protocols.md §15). The duration
 * comes with the decoded request: the file is not read again.
 */
import type { SimulatedProviderConfig } from '../../config/schema.js';
import type { TranscriptionRequest } from '../../protocol/transcriptions.js';
import type { TranscriptionCall, TranscriptionEvent, TranscriptionResult } from '../provider.js';
import { abortableSleep } from './abortable-sleep.js';
import { createRandom, hashString } from './deterministic-random.js';
import { startWholeCall } from './whole-call.js';

export const WORDS_PER_SECOND = 2.5;
/** Words per segment of `srt`, `vtt` and `verbose_json`. */
const WORDS_PER_SEGMENT = 8;

const VOCABULARY = [
  'the', 'gateway', 'heard', 'a', 'voice', 'saying', 'that', 'every', 'token', 'is', 'billed', 'to', 'nano',
  'simulated', 'audio', 'speaks', 'clearly', 'about', 'tolls', 'and', 'roads', 'quiet', 'morning', 'river',
  'light', 'over', 'hills', 'with', 'some', 'wind', 'today', 'again',
];

export interface SimulatedWord {
  word: string;
  /** Seconds from the start. */
  start: number;
  end: number;
}

/** The words the simulated model hears in a file of this duration and size, with their times. */
export function simulatedWords(request: Pick<TranscriptionRequest, 'endpoint' | 'durationMs'> & { file: { size: number } }): SimulatedWord[] {
  const count = Math.max(1, Math.round((request.durationMs / 1000) * WORDS_PER_SECOND));
  const random = createRandom(hashString(`${request.endpoint}:${request.file.size}:${request.durationMs}`));
  const span = request.durationMs / count;
  return Array.from({ length: count }, (_, index) => ({
    word: VOCABULARY[Math.floor(random() * VOCABULARY.length)]!,
    start: Math.round(index * span) / 1000,
    end: Math.round((index + 1) * span) / 1000,
  }));
}

/** The text of the words: a sentence, capitalised, with a full stop. */
export function simulatedText(words: readonly SimulatedWord[]): string {
  const text = words.map((entry) => entry.word).join(' ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

interface Segment {
  id: number;
  start: number;
  end: number;
  text: string;
}

function segmentsOf(words: readonly SimulatedWord[]): Segment[] {
  const text = simulatedText(words);
  const pieces = text.split(' ');
  const segments: Segment[] = [];
  for (let first = 0; first < words.length; first += WORDS_PER_SEGMENT) {
    const last = Math.min(first + WORDS_PER_SEGMENT, words.length) - 1;
    segments.push({ id: segments.length, start: words[first]!.start, end: words[last]!.end, text: pieces.slice(first, last + 1).join(' ') });
  }
  return segments;
}

/** `hh:mm:ss<separator>mmm`, as SRT (`,`) and WebVTT (`.`) write times. */
function timestamp(seconds: number, separator: string): string {
  const millis = Math.round(seconds * 1000);
  const pad = (value: number, width: number): string => String(value).padStart(width, '0');
  return `${pad(Math.floor(millis / 3_600_000), 2)}:${pad(Math.floor(millis / 60_000) % 60, 2)}:${pad(Math.floor(millis / 1000) % 60, 2)}${separator}${pad(millis % 1000, 3)}`;
}

/** The answer in `format`: the JSON body, or the text document. */
export function simulatedAnswer(request: TranscriptionRequest): TranscriptionResult {
  const words = simulatedWords(request);
  const text = simulatedText(words);
  switch (request.responseFormat) {
    case 'json':
      return { kind: 'json', body: { text, ...(request.includeLogprobs ? { logprobs: text.split(' ').map((token) => ({ token, logprob: 0, bytes: [...Buffer.from(token)] })) } : {}) } };
    case 'text':
      return { kind: 'text', contentType: 'text/plain; charset=utf-8', text: `${text}\n` };
    case 'srt':
      return {
        kind: 'text',
        contentType: 'text/plain; charset=utf-8',
        text: segmentsOf(words).map((segment) => `${segment.id + 1}\n${timestamp(segment.start, ',')} --> ${timestamp(segment.end, ',')}\n${segment.text}\n\n`).join(''),
      };
    case 'vtt':
      return {
        kind: 'text',
        contentType: 'text/plain; charset=utf-8',
        text: `WEBVTT\n\n${segmentsOf(words).map((segment) => `${timestamp(segment.start, '.')} --> ${timestamp(segment.end, '.')}\n${segment.text}\n\n`).join('')}`,
      };
    case 'verbose_json': {
      const granularities = request.timestampGranularities ?? ['segment'];
      const segments = segmentsOf(words).map((segment) => ({
        ...segment,
        seek: 0,
        tokens: [],
        temperature: request.temperature ?? 0,
        avg_logprob: 0,
        compression_ratio: 1,
        no_speech_prob: 0,
      }));
      return {
        kind: 'json',
        body: {
          task: request.endpoint === 'translations' ? 'translate' : 'transcribe',
          language: request.endpoint === 'translations' ? 'english' : (request.language ?? 'english'),
          duration: request.durationMs / 1000,
          text,
          ...(granularities.includes('word') ? { words } : {}),
          ...(granularities.includes('segment') ? { segments } : {}),
        },
      };
    }
  }
}

async function* deltas(config: SimulatedProviderConfig, request: TranscriptionRequest, signal: AbortSignal): AsyncGenerator<TranscriptionEvent> {
  const text = simulatedText(simulatedWords(request));
  const pieces = text.split(' ');
  for (const [index, piece] of pieces.entries()) {
    if (index > 0 && !(await abortableSleep(config.pace_ms, signal))) return;
    yield { data: { type: 'transcript.text.delta', delta: index === 0 ? piece : ` ${piece}` } };
  }
  if (signal.aborted) return;
  yield { data: { type: 'transcript.text.done', text } };
}

export async function simulateTranscription(config: SimulatedProviderConfig, call: TranscriptionCall): Promise<TranscriptionResult> {
  await startWholeCall(config, call.signal);
  if (call.request.stream) return { kind: 'events', events: deltas(config, call.request, call.signal) };
  return simulatedAnswer(call.request);
}
