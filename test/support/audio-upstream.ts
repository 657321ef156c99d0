/**
 * An audio-to-text upstream double: a real HTTP server on loopback speaking OpenAI's
 * `POST /v1/audio/transcriptions` and `POST /v1/audio/translations`. It reads the multipart body
 * with busboy (as a real server would), records every field and the file's bytes (for the test to
 * compare with the file it sent), and answers in the `response_format` asked: JSON, verbose JSON,
 * or text, SRT and WebVTT as `text/plain`. Its usage depends on the model's name: one containing
 * `tokens` reports `{type: "tokens"}` (10 audio tokens a second, one text token per prompt word,
 * one output token per word), one containing `duration` reports `{type: "duration"}` (the WAV's
 * duration, rounded down to the tenth of a second), any other reports none (whisper-1 in `json`).
 * With `stream=true` a model not named `whisper` streams `transcript.text.delta` events then
 * `transcript.text.done` (with its usage); a `whisper` model ignores `stream`, as OpenAI's does.
 * A prompt containing `answer-500` gets a 500, `answer-garbage` a truncated JSON body in a 200,
 * `answer-slowly` its answer after 3 s (or never, when the gateway hangs up first), and
 * `stream-breaks` one delta and then a cut connection.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Busboy } from '@fastify/busboy';

export interface ReceivedUpload {
  path: string;
  headers: IncomingHttpHeaders;
  /** The text fields, in the order received. */
  fields: Array<[string, string]>;
  files: Array<{ field: string; filename: string; mimeType: string; bytes: Buffer }>;
}

export interface AudioDouble {
  /** `<base>/v1`, for an `openai` provider. */
  baseUrl: string;
  requests: ReceivedUpload[];
  /** The usage each 200 answer reported (undefined: none), in order. */
  reported: Array<Record<string, unknown> | undefined>;
  abortedCount(): number;
  close(): Promise<void>;
}

/** A WAV's duration from its header (the data size over the byte rate); 0 for anything else. */
export function wavSeconds(bytes: Buffer): number {
  if (bytes.length < 44 || bytes.toString('ascii', 0, 4) !== 'RIFF') return 0;
  const byteRate = bytes.readUInt32LE(28);
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    if (id === 'data') return Math.min(size, bytes.length - offset - 8) / byteRate;
    offset += 8 + size + (size % 2);
  }
  return 0;
}

/** The double's transcript of a file: what it heard, by size and name. */
export function doubleTranscript(upload: { filename: string; bytes: Buffer }, endpoint: 'transcriptions' | 'translations'): string {
  return `${endpoint === 'translations' ? 'Translated' : 'Transcribed'} ${upload.bytes.length} bytes of ${upload.filename} in the double`;
}

function words(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** The usage the double reports for `model`. */
export function doubleUsage(model: string, seconds: number, prompt: string, text: string): Record<string, unknown> | undefined {
  if (model.includes('tokens')) {
    const audio = Math.ceil(seconds * 10);
    const promptTokens = words(prompt);
    const output = words(text);
    return { type: 'tokens', input_tokens: audio + promptTokens, input_token_details: { audio_tokens: audio, text_tokens: promptTokens }, output_tokens: output, total_tokens: audio + promptTokens + output };
  }
  if (model.includes('duration')) return { type: 'duration', seconds: Math.floor(seconds * 10) / 10 };
  return undefined;
}

function timestamp(seconds: number, separator: string): string {
  const millis = Math.round(seconds * 1000);
  const pad = (value: number, width: number): string => String(value).padStart(width, '0');
  return `${pad(Math.floor(millis / 3_600_000), 2)}:${pad(Math.floor(millis / 60_000) % 60, 2)}:${pad(Math.floor(millis / 1000) % 60, 2)}${separator}${pad(millis % 1000, 3)}`;
}

/** The text documents the double answers for `text`, `srt` and `vtt`. */
export function doubleDocument(format: 'text' | 'srt' | 'vtt', text: string, seconds: number): string {
  if (format === 'text') return `${text}\n`;
  if (format === 'srt') return `1\n${timestamp(0, ',')} --> ${timestamp(seconds, ',')}\n${text}\n\n`;
  return `WEBVTT\n\n${timestamp(0, '.')} --> ${timestamp(seconds, '.')}\n${text}\n\n`;
}

export async function startAudioUpstream(): Promise<AudioDouble> {
  const requests: ReceivedUpload[] = [];
  const reported: AudioDouble['reported'] = [];
  let aborted = 0;

  const json = (response: ServerResponse, status: number, body: unknown): void => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };

  const answer = (received: ReceivedUpload, response: ServerResponse): void => {
    const field = (name: string): string | undefined => received.fields.find(([key]) => key === name)?.[1];
    const endpoint = received.path.endsWith('/translations') ? 'translations' : 'transcriptions';
    const file = received.files.find((entry) => entry.field === 'file');
    if (file === undefined) {
      json(response, 400, { error: { message: "Missing required parameter: 'file'.", type: 'invalid_request_error', param: 'file', code: 'missing_required_parameter' } });
      return;
    }
    const model = field('model') ?? '';
    const prompt = field('prompt') ?? '';
    const format = field('response_format') ?? 'json';
    const seconds = wavSeconds(file.bytes);
    const text = doubleTranscript(file, endpoint);
    const usage = doubleUsage(model, seconds, prompt, text);
    if (prompt.includes('answer-500')) {
      json(response, 500, { error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } });
      return;
    }
    if (prompt.includes('answer-garbage')) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"text": "cut sho');
      return;
    }
    const send = (): void => {
      if (field('stream') === 'true' && !model.includes('whisper')) {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        const pieces = text.split(' ');
        pieces.forEach((piece, index) => response.write(`data: ${JSON.stringify({ type: 'transcript.text.delta', delta: index === 0 ? piece : ` ${piece}` })}\n\n`));
        if (prompt.includes('stream-breaks')) {
          // Once the deltas are on their way: a destroyed socket drops what it has not sent.
          setTimeout(() => response.socket?.destroy(), 50);
          return;
        }
        reported.push(usage);
        response.end(`data: ${JSON.stringify({ type: 'transcript.text.done', text, ...(usage === undefined ? {} : { usage }) })}\n\n`);
        return;
      }
      if (format === 'text' || format === 'srt' || format === 'vtt') {
        reported.push(undefined);
        response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        response.end(doubleDocument(format, text, seconds));
        return;
      }
      reported.push(usage);
      if (format === 'verbose_json') {
        const durationUsage = usage?.type === 'duration' ? { usage } : {};
        json(response, 200, {
          task: endpoint === 'translations' ? 'translate' : 'transcribe',
          language: 'english',
          duration: seconds,
          text,
          segments: [{ id: 0, seek: 0, start: 0, end: seconds, text, tokens: [1, 2], temperature: 0, avg_logprob: -0.1, compression_ratio: 1, no_speech_prob: 0 }],
          ...durationUsage,
        });
        return;
      }
      json(response, 200, { text, ...(usage === undefined ? {} : { usage }) });
    };
    if (prompt.includes('answer-slowly')) {
      const timer = setTimeout(send, 3_000);
      response.on('close', () => {
        if (!response.writableFinished) {
          clearTimeout(timer);
          aborted += 1;
        }
      });
      return;
    }
    send();
  };

  const server: Server = createServer((request, response) => {
    const path = request.url ?? '';
    if (path !== '/v1/audio/transcriptions' && path !== '/v1/audio/translations') {
      json(response, 404, { error: { message: `no route ${path}` } });
      return;
    }
    const received: ReceivedUpload = { path, headers: request.headers, fields: [], files: [] };
    let parser;
    try {
      parser = new Busboy({ headers: request.headers as { 'content-type': string }, limits: { fileSize: 64 * 1024 * 1024 } });
    } catch {
      json(response, 400, { error: { message: 'Invalid multipart body.', type: 'invalid_request_error', param: null, code: null } });
      return;
    }
    parser.on('field', (name, value) => void received.fields.push([name, value]));
    const fileChunks: Buffer[][] = [];
    parser.on('file', (name, stream, filename, _encoding, mimeType) => {
      const chunks: Buffer[] = [];
      fileChunks.push(chunks);
      received.files.push({ field: name, filename, mimeType, bytes: Buffer.alloc(0) });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    });
    parser.on('finish', () => {
      // Every part's bytes have been handed over by now.
      received.files.forEach((file, index) => (file.bytes = Buffer.concat(fileChunks[index]!)));
      requests.push(received);
      answer(received, response);
    });
    parser.on('error', () => json(response, 400, { error: { message: 'Invalid multipart body.', type: 'invalid_request_error', param: null, code: null } }));
    request.pipe(parser);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    reported,
    abortedCount: () => aborted,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
