/**
 * The text-to-speech request as the gateway reads it (docs/wire-protocols.md §10): OpenAI's fields
 * and 400s, `input` at most 4,096 characters. The binary answer carries no usage, so what is billed
 * is the request's own measure, known before the call: its characters (OpenAI prices `tts-1` per
 * million characters: the catalog's `characters` price). With `stream_format: "sse"` the answer is
 * events whose last one reports tokens (gpt-4o-mini-tts), and those are billed instead.
 */
import { InvalidRequestError } from './canonical.js';
import { invalidType, isRecord, missingParameter, optionalEnum, optionalNumber, optionalString, stringTooLong, unknownParameter } from './field-checks.js';

export const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

/** Most characters of `input` (and of `instructions`). */
export const MAX_SPEECH_CHARACTERS = 4_096;

export interface SpeechRequest {
  model: string;
  input: string;
  /** A voice name, or a custom voice's id. */
  voice: string;
  responseFormat: SpeechFormat;
  speed?: number;
  instructions?: string;
  /** `stream_format: "sse"`: the audio as base64 events, the last with the usage. */
  stream: boolean;
}

const KNOWN_FIELDS = new Set(['model', 'input', 'voice', 'instructions', 'response_format', 'speed', 'stream_format']);

function requiredString(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (value === undefined || value === null) throw missingParameter(field);
  if (typeof value !== 'string') throw invalidType(field, 'a string', value);
  return value;
}

function decodeVoice(value: unknown): string {
  if (value === undefined || value === null) throw missingParameter('voice');
  if (typeof value === 'string') return value;
  if (isRecord(value) && typeof value.id === 'string') return value.id;
  throw invalidType('voice', 'one of a string or an object with an id', value);
}

export function decodeSpeechRequest(body: unknown): SpeechRequest {
  if (!isRecord(body)) throw new InvalidRequestError(`Invalid type for request body: expected an object, but got ${Array.isArray(body) ? 'an array' : typeof body} instead.`, null, 'invalid_type');
  for (const key of Object.keys(body)) if (!KNOWN_FIELDS.has(key)) throw unknownParameter(key);
  const model = requiredString(body, 'model');
  const input = requiredString(body, 'input');
  if (input === '') throw new InvalidRequestError("Invalid 'input': empty string. Expected a string with minimum length 1, but got an empty string instead.", 'input', 'empty_string');
  const characters = speechCharacters(input);
  if (characters > MAX_SPEECH_CHARACTERS) throw stringTooLong('input', MAX_SPEECH_CHARACTERS, characters);
  const voice = decodeVoice(body.voice);
  const responseFormat = optionalEnum(body.response_format, 'response_format', SPEECH_FORMATS) ?? 'mp3';
  const speed = optionalNumber(body.speed, 'speed', { minimum: 0.25, maximum: 4 });
  const instructions = optionalString(body.instructions, 'instructions', MAX_SPEECH_CHARACTERS);
  const streamFormat = optionalEnum(body.stream_format, 'stream_format', ['audio', 'sse'] as const);
  return { model, input, voice, responseFormat, stream: streamFormat === 'sse', ...(speed === undefined ? {} : { speed }), ...(instructions === undefined ? {} : { instructions }) };
}

/** The characters of a text as billed: code points (an emoji is one character, not two). */
export function speechCharacters(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}
