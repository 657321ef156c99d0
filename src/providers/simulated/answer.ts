/**
 * The simulated model's visible text: derived only from the request, so the same request always
 * gets the same answer, and short (a few dozen tokens) so tests and demos stay fast.
 */
import type { CanonicalRequest, InputItem, RequestedEffort } from '../../protocol/canonical.js';
import { createRandom, hashString } from './deterministic-random.js';
import { valueFromSchema, wordsOf } from './tool-arguments.js';

/** How many words of the user's message the answer quotes. */
const QUOTED_WORDS = 12;
/** Longest tool output quoted verbatim; longer ones are cut, the answer is not meant to echo files. */
const QUOTED_OUTPUT_CHARACTERS = 400;
const SENTENCE_COUNT = 3;

const WORDS = [
  'the', 'gateway', 'answer', 'stream', 'token', 'model', 'request', 'simple', 'steady', 'quiet',
  'river', 'signal', 'bright', 'careful', 'measure', 'window', 'balance', 'ledger', 'route', 'upstream',
  'clear', 'small', 'every', 'chunk', 'moves', 'holds', 'settles', 'counts', 'returns', 'follows',
  'gently', 'again', 'before', 'after', 'with', 'through', 'under', 'over', 'and', 'still',
] as const;

/** A stable seed for everything derived from the request's input. */
export function inputSeed(request: CanonicalRequest): number {
  return hashString(JSON.stringify([request.instructions ?? '', request.input]));
}

function messageText(item: InputItem): string {
  if (item.type !== 'message') return '';
  return item.content
    .map((part) => (part.type === 'text' ? part.text : part.type === 'refusal' ? part.refusal : ''))
    .filter((text) => text !== '')
    .join(' ');
}

/** All of a user message the simulated answer reads (it quotes, or draws words from, the beginning). */
const READ_CHARACTERS = 4_096;

/** The beginning of the last user message's text, '' when there is none. */
export function lastUserText(request: CanonicalRequest): string {
  for (let index = request.input.length - 1; index >= 0; index--) {
    const item = request.input[index];
    if (item?.type !== 'message' || item.role !== 'user') continue;
    const text = messageText(item);
    return text.length > READ_CHARACTERS ? text.slice(0, READ_CHARACTERS) : text;
  }
  return '';
}

/** The tool outputs at the end of the input (after parallel calls there can be several), oldest first. */
export function trailingToolOutputs(request: CanonicalRequest): string[] {
  const outputs: string[] = [];
  for (let index = request.input.length - 1; index >= 0; index--) {
    const item = request.input[index];
    if (item?.type !== 'function_call_output') break;
    outputs.unshift(item.output);
  }
  return outputs;
}

/**
 * Longest word quoted back: the answer is tokenized to be streamed, and BPE is quadratic in the
 * length of one word, so a client's 262,144-letter "word" must not reach it whole.
 */
const QUOTED_WORD_CHARACTERS = 32;

function quoteOf(text: string): string {
  const words = text.split(/\s+/).filter((word) => word !== '');
  const quoted = words
    .slice(0, QUOTED_WORDS)
    .map((word) => (word.length > QUOTED_WORD_CHARACTERS ? `${word.slice(0, QUOTED_WORD_CHARACTERS)}...` : word))
    .join(' ');
  return words.length > QUOTED_WORDS ? `${quoted}...` : quoted;
}

function sentence(random: () => number): string {
  const length = 6 + Math.floor(random() * 4);
  const words: string[] = [];
  for (let index = 0; index < length; index++) words.push(WORDS[Math.floor(random() * WORDS.length)] ?? 'the');
  const text = words.join(' ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

function plainAnswer(request: CanonicalRequest, upstreamModel: string): string {
  const random = createRandom(inputSeed(request));
  const outputs = trailingToolOutputs(request);
  if (outputs.length > 0) {
    return outputs
      .map((output) => {
        const quoted = output.length > QUOTED_OUTPUT_CHARACTERS ? `${output.slice(0, QUOTED_OUTPUT_CHARACTERS)}...` : output;
        return `The tool returned: ${quoted}.`;
      })
      .join(' ');
  }
  const quote = quoteOf(lastUserText(request));
  const opening = quote === '' ? `Simulated answer from ${upstreamModel}.` : `Simulated answer from ${upstreamModel} to "${quote}".`;
  const sentences: string[] = [];
  for (let index = 0; index < SENTENCE_COUNT; index++) sentences.push(sentence(random));
  return `${opening} ${sentences.join(' ')}`;
}

/**
 * The visible answer. Plain text normally; when the request asks for JSON (`json_schema` or
 * `json_object`), JSON of that shape, so structured-output clients can parse it.
 */
export function answerText(request: CanonicalRequest, upstreamModel: string): string {
  const plain = plainAnswer(request, upstreamModel);
  const format = request.responseFormat;
  if (format?.type === 'json_schema') return JSON.stringify(valueFromSchema(format.schema, wordsOf(lastUserText(request))));
  if (format?.type === 'json_object') return JSON.stringify({ answer: plain });
  return plain;
}

/** The reasoning summary streamed before the answer when the request sets an effort. */
export function reasoningText(request: CanonicalRequest, effort: RequestedEffort): string {
  const random = createRandom(inputSeed(request) ^ 0x5bd1e995);
  const quote = quoteOf(lastUserText(request));
  const subject = quote === '' ? 'the request' : `"${quote}"`;
  return `Considering ${subject} with ${effort} effort. ${sentence(random)}`;
}
