/**
 * The audio-to-text requests as the gateway reads them (docs/wire-protocols.md §9, §15): the
 * multipart fields of `/v1/audio/transcriptions` and `/v1/audio/translations`, with OpenAI's 400s
 * naming the field, and the file's duration read from the file itself (music-metadata), since the
 * duration is what these endpoints are billed by. A file that is not audio, or whose duration
 * cannot be read, is refused before anything is held. The upstream's `usage` (tokens, or seconds)
 * is read here too, for the bill. music-metadata is imported by the first file read, not at start
 * (docs/architecture.md, "What a process loads").
 */
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { fileList, textField, textList, type UploadedFile, type UploadFields } from './upload-fields.js';
import { InvalidRequestError, isSaneUsage, type PricedUnits, type Usage } from './canonical.js';
import { invalidType, invalidValue, missingParameter, optionalNumber, unknownParameter, unsupportedParameter, unsupportedValue } from './field-checks.js';

export type AudioTextEndpoint = 'transcriptions' | 'translations';

export const TRANSCRIPTION_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
export type TranscriptionFormat = (typeof TRANSCRIPTION_FORMATS)[number];

/** The formats whose answer is JSON; the others are text documents (plain text, SRT, WebVTT). */
export function isJsonFormat(format: TranscriptionFormat): boolean {
  return format === 'json' || format === 'verbose_json';
}

export const TIMESTAMP_GRANULARITIES = ['word', 'segment'] as const;
export type TimestampGranularity = (typeof TIMESTAMP_GRANULARITIES)[number];

/** Longest audio the gateway accepts: a header claiming more is not a real recording. */
export const MAX_AUDIO_SECONDS = 24 * 60 * 60;

let audioReader: Promise<typeof import('music-metadata')> | undefined;

export interface TranscriptionRequest {
  endpoint: AudioTextEndpoint;
  model: string;
  file: UploadedFile;
  /** The file's duration, read from the file, in whole milliseconds (rounded up). */
  durationMs: number;
  responseFormat: TranscriptionFormat;
  prompt?: string;
  /** Transcriptions only. */
  language?: string;
  temperature?: number;
  timestampGranularities?: TimestampGranularity[];
  includeLogprobs: boolean;
  /** Transcriptions only: server-sent events asked for. */
  stream: boolean;
  /** The fields as the client sent them, in order: what a pass-through forwards (model replaced). */
  fields: UploadFields;
}

/** Every field, by endpoint (`name[]` is the SDKs' spelling of an array field). */
const TRANSLATION_FIELDS = new Set(['file', 'model', 'prompt', 'response_format', 'temperature']);
const TRANSCRIPTION_FIELDS = new Set([
  ...TRANSLATION_FIELDS,
  'language',
  'stream',
  'timestamp_granularities',
  'timestamp_granularities[]',
  'include',
  'include[]',
  'chunking_strategy',
]);
/** Fields of OpenAI's transcriptions that the gateway does not serve (speaker references, diarization hints). */
const UNSERVED_FIELDS = new Set(['known_speaker_names', 'known_speaker_names[]', 'known_speaker_references', 'known_speaker_references[]', 'keywords', 'keywords[]', 'languages', 'languages[]']);
/** The fields of a `server_vad` chunking strategy, as form fields (`chunking_strategy[threshold]`). */
const VAD_NUMBERS = new Set(['prefix_padding_ms', 'silence_duration_ms', 'threshold']);

function checkFieldNames(fields: UploadFields, endpoint: AudioTextEndpoint): void {
  const known = endpoint === 'transcriptions' ? TRANSCRIPTION_FIELDS : TRANSLATION_FIELDS;
  for (const name of fields.keys()) {
    if (known.has(name)) continue;
    const vad = /^chunking_strategy\[([a-z_]+)\]$/.exec(name);
    if (endpoint === 'transcriptions' && vad !== null && (vad[1] === 'type' || VAD_NUMBERS.has(vad[1]!))) continue;
    if (endpoint === 'transcriptions' && UNSERVED_FIELDS.has(name)) {
      const param = name.replace('[]', '');
      throw unsupportedParameter(param, `'${param}' (speaker diarization) is not served by this gateway.`);
    }
    throw unknownParameter(name);
  }
}

function theFile(fields: UploadFields): UploadedFile {
  const files = fileList(fields, 'file');
  const file = files[0];
  if (file === undefined) throw missingParameter('file');
  if (files.length > 1) throw new InvalidRequestError("Invalid value for 'file': expected a single file.", 'file', 'invalid_value');
  if (file.size === 0) throw new InvalidRequestError('The audio file is empty.', 'file', 'invalid_value');
  return file;
}

function decodeTemperature(fields: UploadFields): number | undefined {
  const text = textField(fields, 'temperature');
  if (text === undefined) return undefined;
  const value = text.trim() === '' ? Number.NaN : Number(text);
  if (!Number.isFinite(value)) throw invalidType('temperature', 'a decimal', text);
  return optionalNumber(value, 'temperature', { minimum: 0, maximum: 1 });
}

function decodeStream(fields: UploadFields): boolean {
  const text = textField(fields, 'stream');
  if (text === undefined || text === 'false') return false;
  if (text === 'true') return true;
  throw invalidType('stream', 'a boolean', text);
}

function decodeFormat(fields: UploadFields): TranscriptionFormat {
  const text = textField(fields, 'response_format');
  if (text === undefined) return 'json';
  if (text === 'diarized_json') throw unsupportedValue('response_format', "response_format 'diarized_json' (speaker diarization) is not served by this gateway.");
  if (!(TRANSCRIPTION_FORMATS as readonly string[]).includes(text)) throw invalidValue('response_format', text, TRANSCRIPTION_FORMATS);
  return text as TranscriptionFormat;
}

function decodeGranularities(fields: UploadFields, format: TranscriptionFormat): TimestampGranularity[] | undefined {
  const values = textList(fields, 'timestamp_granularities');
  if (values === undefined) return undefined;
  for (const value of values) {
    if (!(TIMESTAMP_GRANULARITIES as readonly string[]).includes(value)) throw invalidValue('timestamp_granularities', value, TIMESTAMP_GRANULARITIES);
  }
  if (format !== 'verbose_json') {
    throw new InvalidRequestError("'timestamp_granularities' needs response_format 'verbose_json'.", 'timestamp_granularities', 'invalid_value');
  }
  return values as TimestampGranularity[];
}

function decodeInclude(fields: UploadFields): boolean {
  const values = textList(fields, 'include');
  if (values === undefined) return false;
  for (const value of values) if (value !== 'logprobs') throw invalidValue('include', value, ['logprobs']);
  return values.length > 0;
}

/** `chunking_strategy`: `auto`, a `server_vad` object as JSON text, or as bracketed form fields. */
function checkChunkingStrategy(fields: UploadFields): void {
  const text = textField(fields, 'chunking_strategy');
  const bracketed = [...fields.keys()].filter((name) => name.startsWith('chunking_strategy['));
  if (text !== undefined && bracketed.length > 0) {
    throw new InvalidRequestError("Invalid 'chunking_strategy': give either a value or its fields, not both.", 'chunking_strategy', 'invalid_value');
  }
  let strategy: Record<string, unknown> | undefined;
  if (text !== undefined) {
    if (text === 'auto') return;
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) strategy = parsed as Record<string, unknown>;
    } catch {
      // Reported below, as any other value that is neither `auto` nor an object.
    }
    if (strategy === undefined) throw invalidValue('chunking_strategy', text, ['auto', 'a server_vad object']);
  } else {
    if (bracketed.length === 0) return;
    strategy = {};
    for (const name of bracketed) {
      const key = name.slice('chunking_strategy['.length, -1);
      const value = textField(fields, name);
      strategy[key] = key === 'type' ? value : Number(value);
    }
  }
  for (const [key, value] of Object.entries(strategy)) {
    const param = `chunking_strategy.${key}`;
    if (key === 'type') {
      if (value !== 'server_vad') throw invalidValue(param, String(value), ['server_vad']);
    } else if (VAD_NUMBERS.has(key)) {
      if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidType(param, 'a number', value);
    } else throw unknownParameter(param);
  }
  if (strategy.type === undefined) throw missingParameter('chunking_strategy.type');
}

/**
 * The request, or the 400 OpenAI would answer: the fields checked first, the file's duration read
 * last (the only costly step). Unknown fields are refused (the schema is closed).
 */
export async function decodeTranscriptionRequest(fields: UploadFields, endpoint: AudioTextEndpoint): Promise<TranscriptionRequest> {
  checkFieldNames(fields, endpoint);
  const model = textField(fields, 'model');
  if (model === undefined) throw missingParameter('model');
  if (model === '') throw new InvalidRequestError("Invalid 'model': empty string. Expected a string with minimum length 1, but got an empty string instead.", 'model', 'empty_string');
  const file = theFile(fields);
  const responseFormat = decodeFormat(fields);
  const prompt = textField(fields, 'prompt');
  const language = textField(fields, 'language');
  const temperature = decodeTemperature(fields);
  const timestampGranularities = decodeGranularities(fields, responseFormat);
  const includeLogprobs = decodeInclude(fields);
  if (includeLogprobs && responseFormat !== 'json') throw new InvalidRequestError("'include[]=logprobs' needs response_format 'json'.", 'include', 'invalid_value');
  const stream = decodeStream(fields);
  checkChunkingStrategy(fields);
  const durationMs = await audioDurationMs(file);
  return {
    endpoint,
    model,
    file,
    durationMs,
    responseFormat,
    includeLogprobs,
    stream,
    fields,
    ...(prompt === undefined ? {} : { prompt }),
    ...(language === undefined ? {} : { language }),
    ...(temperature === undefined ? {} : { temperature }),
    ...(timestampGranularities === undefined ? {} : { timestampGranularities }),
  };
}

/** Bytes handed to the parser between two turns of the event loop. */
const BYTES_PER_TURN = 1024 * 1024;

/**
 * The file's chunks as a byte stream, giving the event loop a turn every BYTES_PER_TURN bytes:
 * a parser that must read through a large file (an MP3 without a header that says its length)
 * then never holds the loop for long. The chunks are handed on as they are, never joined.
 */
function chunkStream(chunks: readonly Buffer[]): Readable {
  async function* paced(): AsyncGenerator<Buffer> {
    let since = 0;
    for (const chunk of chunks) {
      yield chunk;
      since += chunk.length;
      if (since >= BYTES_PER_TURN) {
        since = 0;
        await nextTurn();
      }
    }
  }
  return Readable.from(paced(), { objectMode: false });
}

function notAudio(detail: string): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid file: ${detail} Supported formats: flac, m4a, mp3, mp4, mpeg, mpga, oga, ogg, wav, webm.`,
    'file',
    'invalid_value',
  );
}

/**
 * The file's duration in milliseconds (rounded up), read by music-metadata from its header when
 * it has one (WAV, an MP3 with a Xing/VBRI header, FLAC, MP4), else by reading its frames. A file
 * that is not audio, or whose duration cannot be read, is the client's 400 on `file`.
 */
export async function audioDurationMs(file: UploadedFile): Promise<number> {
  const { parseStream } = await (audioReader ??= import('music-metadata'));
  const source = chunkStream(file.chunks);
  let seconds: number | undefined;
  try {
    const metadata = await parseStream(
      source,
      { mimeType: file.contentType, size: file.size, path: file.filename },
      { duration: true, skipCovers: true, skipPostHeaders: true },
    );
    seconds = metadata.format.duration;
  } catch {
    throw notAudio('the file could not be read as audio.');
  } finally {
    source.destroy();
  }
  if (seconds === undefined || !Number.isFinite(seconds) || seconds <= 0) throw notAudio('the duration of the audio could not be read.');
  if (seconds > MAX_AUDIO_SECONDS) throw notAudio(`the audio claims to last ${Math.round(seconds)} seconds, more than the ${MAX_AUDIO_SECONDS} accepted.`);
  return secondsToMilliseconds(seconds);
}

/**
 * Seconds as whole milliseconds, rounded up: after rounding to the microsecond, so that a float's
 * noise (3.2 × 1000 = 3200.0000000000005) does not bill a millisecond more.
 */
export function secondsToMilliseconds(seconds: number): number {
  return Math.ceil(Math.round(seconds * 1_000_000) / 1000);
}

/**
 * What the upstream reported in `usage` (docs/wire-protocols.md §9.3), for the bill: `tokens`
 * (the token-billed models: input tokens, audio included, and output tokens) replaces the units
 * the request measured; `duration` bills its seconds by the millisecond. Anything else, or nothing,
 * reports nothing (the measured duration is billed).
 */
export function transcriptionReport(usage: unknown): { reportedUsage?: Usage; units?: PricedUnits } {
  if (typeof usage !== 'object' || usage === null) return {};
  const fields = usage as Record<string, unknown>;
  if (fields.type === 'tokens') {
    const { input_tokens: input, output_tokens: output } = fields;
    if (typeof input !== 'number' || typeof output !== 'number') return {};
    const reported: Usage = { inputTokens: input, cachedInputTokens: 0, outputTokens: output, reasoningTokens: 0 };
    return isSaneUsage(reported) ? { reportedUsage: reported, units: {} } : {};
  }
  if (fields.type === 'duration') {
    const seconds = fields.seconds;
    if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0 || seconds > MAX_AUDIO_SECONDS) return {};
    return { units: { audioMilliseconds: secondsToMilliseconds(seconds) } };
  }
  return {};
}
