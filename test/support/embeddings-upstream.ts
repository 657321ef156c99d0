/**
 * An embeddings and moderations upstream double: a real HTTP server on loopback speaking OpenAI's
 * `POST /v1/embeddings` (floats, or little-endian float32 in base64 when `encoding_format` asks),
 * `POST /v1/moderations` (every second input flagged for violence), `POST /v1/audio/speech` (ten
 * chunks of `audio/mpeg` 20 ms apart, 300 ms for an input containing `speak-slowly`) and
 * Gemini's `POST /v1beta/models/{model}:batchEmbedContents` (at most 100 requests, `x-goog-api-key`
 * checked, refused as Gemini refuses). Vectors are drawn from the text, so a test can tell them
 * apart; each answer's reported token count and body are recorded for the test to bill against.
 * An input containing `answer-garbage` gets a truncated JSON body, `answer-short` no vectors, and
 * `answer-slowly` its answer after 3 s (or never, when the gateway hangs up first).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const DOUBLE_DIMENSIONS = 8;

export interface EmbeddingsDouble {
  /** `<base>/v1` for an `openai` provider; `<base>/v1beta` for a `gemini` one. */
  openaiBaseUrl: string;
  geminiBaseUrl: string;
  requests: Array<{ path: string; headers: IncomingMessage['headers']; body: Record<string, unknown> }>;
  /** The answers sent, in order: the body text and the token count it reported (null: none). */
  answers: Array<{ text: string; reportedTokens: number | null }>;
  /** Requests whose connection the gateway closed before the double answered (slow answers). */
  abortedCount(): number;
  /** Every chunk of speech sent, in order, and when each speech answer sent its last chunk. */
  spoken: Buffer[];
  speechEnds: number[];
  close(): Promise<void>;
}

export interface EmbeddingsDoubleOptions {
  /** The Gemini key the double accepts. */
  geminiKey?: string;
  /** Whether Gemini answers carry the undocumented `usageMetadata.promptTokenCount` (default false). */
  geminiReportsTokens?: boolean;
  /** The OpenAI `prompt_tokens` reported for the inputs (default: 3 per input plus 1 per word). */
  openaiTokens?: (inputs: unknown[]) => number;
}

/** One chunk of the double's "audio": an MP3 frame sync word, then 400 bytes drawn from the text and the chunk's index. */
/** What the double reports at the end of speech events. */
export const SPEECH_EVENT_USAGE = { input_tokens: 14, output_tokens: 101, total_tokens: 115 };

export function speechChunk(text: string, index: number): Buffer {
  const chunk = Buffer.alloc(402);
  chunk[0] = 0xff;
  chunk[1] = 0xfb;
  for (let position = 2; position < chunk.length; position += 1) chunk[position] = (text.charCodeAt(position % Math.max(text.length, 1)) + index) & 0xff;
  return chunk;
}

/** The double's vector for a text: its first characters' codes, scaled, then its length. */
export function doubleVector(text: string, dimensions = DOUBLE_DIMENSIONS): number[] {
  return Array.from({ length: dimensions }, (_, index) => (index === dimensions - 1 ? text.length / 1000 : (text.charCodeAt(index % Math.max(text.length, 1)) || 0) / 256));
}

function wordsIn(input: unknown): number {
  return typeof input === 'string' ? input.split(/\s+/).filter(Boolean).length : Array.isArray(input) ? input.length : 0;
}

function base64Of(values: number[]): string {
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((value, index) => bytes.writeFloatLE(value, index * 4));
  return bytes.toString('base64');
}

export async function startEmbeddingsUpstream(options: EmbeddingsDoubleOptions = {}): Promise<EmbeddingsDouble> {
  const requests: EmbeddingsDouble['requests'] = [];
  const answers: EmbeddingsDouble['answers'] = [];
  let aborted = 0;
  const spoken: Buffer[] = [];
  const speechEnds: number[] = [];
  const openaiTokens = options.openaiTokens ?? ((inputs: unknown[]) => inputs.reduce<number>((sum, input) => sum + 3 + wordsIn(input), 0));
  const send = (response: import('node:http').ServerResponse, status: number, body: unknown, reportedTokens: number | null = null): void => {
    const text = JSON.stringify(body);
    if (status === 200) answers.push({ text, reportedTokens });
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(text);
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '';
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      requests.push({ path, headers: request.headers, body });
      const marker = JSON.stringify(body.input ?? '');
      if (path === '/v1/audio/speech' && body.stream_format === 'sse') {
        speakEvents(response, String(body.input), marker.includes('answer-garbage'));
        return;
      }
      if (path === '/v1/audio/speech') {
        speak(response, String(body.input), marker.includes('speak-slowly') ? 300 : 20);
        return;
      }
      // Misbehaviour on request: garbage in a 200, a wrong number of vectors, or a slow answer.
      if (marker.includes('answer-garbage')) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{"object": "list", "data": [');
        return;
      }
      if (marker.includes('answer-short') && path === '/v1/embeddings') {
        send(response, 200, { object: 'list', data: [], model: String(body.model), usage: { prompt_tokens: 1, total_tokens: 1 } });
        return;
      }
      if (marker.includes('answer-slowly')) {
        const timer = setTimeout(() => send(response, 200, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0] }], model: 'x', usage: { prompt_tokens: 1, total_tokens: 1 } }), 3_000);
        response.on('close', () => {
          if (!response.writableFinished) {
            clearTimeout(timer);
            aborted += 1;
          }
        });
        return;
      }
      if (path === '/v1/embeddings') {
        const input = body.input;
        const inputs = typeof input === 'string' ? [input] : Array.isArray(input) && input.every((item) => typeof item === 'number') ? [input] : (input as unknown[]);
        const dimensions = typeof body.dimensions === 'number' ? body.dimensions : DOUBLE_DIMENSIONS;
        const data = inputs.map((item, index) => {
          const values = doubleVector(typeof item === 'string' ? item : JSON.stringify(item), dimensions);
          return { object: 'embedding', index, embedding: body.encoding_format === 'base64' ? base64Of(values) : values };
        });
        const tokens = openaiTokens(inputs);
        send(response, 200, { object: 'list', data, model: String(body.model), usage: { prompt_tokens: tokens, total_tokens: tokens } }, tokens);
        return;
      }
      if (path === '/v1/moderations') {
        const input = body.input;
        const count = typeof input === 'string' ? 1 : Array.isArray(input) && input.every((item) => typeof item === 'string') ? input.length : 1;
        const results = Array.from({ length: count }, (_, index) => ({ flagged: index % 2 === 1, categories: { violence: index % 2 === 1 }, category_scores: { violence: index % 2 === 1 ? 0.97 : 0.01 } }));
        send(response, 200, { id: `modr-double-${requests.length}`, model: String(body.model), results });
        return;
      }
      const gemini = /^\/v1beta\/models\/([^/:]+):batchEmbedContents$/.exec(path);
      if (gemini !== null) {
        if (request.headers['x-goog-api-key'] !== (options.geminiKey ?? 'gemini-test-key')) {
          send(response, 403, { error: { code: 403, message: 'Method doesn\'t allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.', status: 'PERMISSION_DENIED' } });
          return;
        }
        const batch = body.requests as Array<{ model: string; content: { parts: Array<{ text: string }> }; outputDimensionality?: number }>;
        if (batch.length > 100) {
          send(response, 400, { error: { code: 400, message: '* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch\n', status: 'INVALID_ARGUMENT' } });
          return;
        }
        if (batch.some((entry) => entry.model !== `models/${gemini[1]}`)) {
          send(response, 400, { error: { code: 400, message: 'Model in the request does not match the model in the path.', status: 'INVALID_ARGUMENT' } });
          return;
        }
        const embeddings = batch.map((entry) => ({ values: doubleVector(entry.content.parts.map((part) => part.text).join(''), entry.outputDimensionality ?? DOUBLE_DIMENSIONS) }));
        const tokens = batch.reduce((sum, entry) => sum + 2 + wordsIn(entry.content.parts[0]?.text), 0);
        if (options.geminiReportsTokens === true) send(response, 200, { embeddings, usageMetadata: { promptTokenCount: tokens, promptTokenDetails: [{ modality: 'TEXT', tokenCount: tokens }] } }, tokens);
        else send(response, 200, { embeddings });
        return;
      }
      send(response, 404, { error: { message: `no route ${path}` } });
    });
  });
  /**
   * gpt-4o-mini-tts's events: three `speech.audio.delta` (base64 of the same chunks as the audio),
   * then `speech.audio.done` with SPEECH_EVENT_USAGE; with `garbage`, a broken event after the first.
   */
  const speakEvents = (response: import('node:http').ServerResponse, text: string, garbage: boolean): void => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let index = 0; index < 3; index += 1) {
      response.write(`data: ${JSON.stringify({ type: 'speech.audio.delta', audio: speechChunk(text, index).toString('base64') })}\n\n`);
      if (garbage) {
        response.end('data: {"type": "speech.au\n\n');
        return;
      }
    }
    response.end(`data: ${JSON.stringify({ type: 'speech.audio.done', usage: SPEECH_EVENT_USAGE })}\n\n`);
  };
  /** Ten chunks of "audio" (an MP3 frame header then bytes drawn from the text), `delayMs` apart. */
  const speak = (response: import('node:http').ServerResponse, text: string, delayMs: number): void => {
    response.writeHead(200, { 'content-type': 'audio/mpeg', 'transfer-encoding': 'chunked' });
    let sent = 0;
    const next = () => {
      if (response.destroyed) {
        aborted += 1;
        return;
      }
      const chunk = speechChunk(text, sent);
      spoken.push(chunk);
      sent += 1;
      if (sent === 10) {
        speechEnds.push(Date.now());
        response.end(chunk);
        return;
      }
      response.write(chunk);
      setTimeout(next, delayMs);
    };
    next();
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    openaiBaseUrl: `http://127.0.0.1:${port}/v1`,
    geminiBaseUrl: `http://127.0.0.1:${port}/v1beta`,
    requests,
    answers,
    abortedCount: () => aborted,
    spoken,
    speechEnds,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
