/**
 * The simulated provider's speech: a WAV file (or raw `pcm`: 16-bit little-endian mono samples at
 * 24 kHz, as OpenAI's) of a tone drawn from the text, 60 ms per character, produced a chunk at a
 * time with `pace_ms` between chunks, so that a client reads it as it comes. It has no encoder for
 * the compressed formats: asked for mp3, opus, aac or flac, it refuses with a 400, as an upstream
 * refuses what it cannot do.
 */
import { Readable } from 'node:stream';
import type { SimulatedProviderConfig } from '../../config/schema.js';
import { speechCharacters } from '../../protocol/speech.js';
import { countTextTokens } from '../../protocol/tokens.js';
import { UpstreamError, type EventFrame, type SpeechCall, type SpeechResult } from '../provider.js';
import { abortableSleep } from './abortable-sleep.js';
import { hashString } from './deterministic-random.js';
import { startWholeCall } from './whole-call.js';

export const SAMPLE_RATE = 24_000;
export const MILLISECONDS_PER_CHARACTER = 60;
/** Samples per chunk: a tenth of a second. */
const CHUNK_SAMPLES = SAMPLE_RATE / 10;

/** A WAV header for `dataBytes` of 16-bit mono PCM at `sampleRate` (SAMPLE_RATE, the voice's, by default). */
export function wavHeader(dataBytes: number, sampleRate = SAMPLE_RATE): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/** The samples the simulated voice says for `text`. */
export function simulatedSampleCount(text: string): number {
  return Math.round((speechCharacters(text) * MILLISECONDS_PER_CHARACTER * SAMPLE_RATE) / 1000);
}

async function* audioChunks(text: string, withHeader: boolean, config: SimulatedProviderConfig, signal: AbortSignal): AsyncGenerator<Buffer> {
  const total = simulatedSampleCount(text);
  const frequency = 220 + (hashString(text) % 440);
  if (withHeader) yield wavHeader(total * 2);
  for (let start = 0; start < total; start += CHUNK_SAMPLES) {
    if (start > 0 && !(await abortableSleep(config.pace_ms, signal))) return;
    const count = Math.min(CHUNK_SAMPLES, total - start);
    const chunk = Buffer.alloc(count * 2);
    for (let index = 0; index < count; index += 1) chunk.writeInt16LE(Math.round(Math.sin((2 * Math.PI * frequency * (start + index)) / SAMPLE_RATE) * 8_000), index * 2);
    yield chunk;
  }
}

/** Audio tokens the simulated voice reports per second of speech (`stream_format: "sse"` only). */
export const OUTPUT_TOKENS_PER_SECOND = 10;

/** The usage the simulated voice reports for `text`: its tokens in, OUTPUT_TOKENS_PER_SECOND of its audio out. */
export function simulatedSpeechUsage(text: string): { input_tokens: number; output_tokens: number; total_tokens: number } {
  const input = countTextTokens(text);
  const output = Math.ceil((speechCharacters(text) * MILLISECONDS_PER_CHARACTER * OUTPUT_TOKENS_PER_SECOND) / 1000);
  return { input_tokens: input, output_tokens: output, total_tokens: input + output };
}

export async function simulateSpeech(config: SimulatedProviderConfig, call: SpeechCall): Promise<SpeechResult> {
  await startWholeCall(config, call.signal);
  const format = call.request.responseFormat;
  if (format !== 'wav' && format !== 'pcm') {
    const message = `The simulated provider speaks wav and pcm only, not ${format}.`;
    throw new UpstreamError('status', message, { status: 400, clientMessage: message });
  }
  const chunks = audioChunks(call.request.input, format === 'wav', config, call.signal);
  if (call.request.stream) return { events: speechEvents(call.request.input, chunks) };
  return { contentType: format === 'wav' ? 'audio/wav' : 'audio/pcm', audio: Readable.from(chunks) };
}

/** OpenAI's speech events: the audio in base64 deltas, then the usage. */
async function* speechEvents(text: string, chunks: AsyncIterable<Buffer>): AsyncGenerator<EventFrame> {
  for await (const chunk of chunks) yield { data: { type: 'speech.audio.delta', audio: chunk.toString('base64') } };
  const usage = simulatedSpeechUsage(text);
  const reportedUsage = { inputTokens: usage.input_tokens, cachedInputTokens: 0, outputTokens: usage.output_tokens, reasoningTokens: 0 };
  yield { data: { type: 'speech.audio.done', usage }, report: { reportedUsage, units: {} } };
}
