/**
 * An images upstream double: a real HTTP server on loopback speaking OpenAI's
 * `POST /v1/images/generations` (JSON) and `POST /v1/images/edits` (multipart/form-data, read with
 * busboy as OpenAI's own server would read it: every field and file recorded, the files' bytes
 * whole, for a test to compare with what its client sent). A model whose name starts with
 * `gpt-image` answers as GPT image models do (base64 images, `size`, `quality`, `background`,
 * `output_format` and `usage` in tokens; with `stream`, `partial_images` partial events and the
 * `completed` one); any other answers as DALL·E does (a URL or base64, no usage, a `revised_prompt`).
 *
 * Usage reported: text tokens = 3 + the words of the prompt, image tokens = 100 per input file,
 * output tokens = IMAGE_OUTPUT_TOKENS per image. Markers in the prompt: `answer-garbage` gets a
 * truncated JSON body (a stream: an event that is not JSON), `answer-500` a 500, `answer-slowly`
 * its answer after 3 s (or never, when the gateway hangs up first), `stream-cut` a partial image
 * and then a cut connection, `stream-slow` partial images 400 ms apart.
 */
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import { Busboy, type BusboyHeaders } from '@fastify/busboy';
import { solidPng } from '../../src/providers/simulated/images.js';
import { listenOnLoopback } from './loopback-server.js';

/** The one picture the double answers with: a 1×1 red PNG. */
export const DOUBLE_PNG = solidPng(1, 1, [255, 0, 0]);
export const IMAGE_OUTPUT_TOKENS = 1_000;
export const INPUT_IMAGE_TOKENS = 100;

export interface RecordedFile {
  field: string;
  filename: string;
  contentType: string;
  bytes: Buffer;
}

export interface ImagesRequest {
  path: string;
  headers: IncomingMessage['headers'];
  /** The JSON body, or the form's text fields (the last value of each name). */
  body: Record<string, unknown>;
  /** The form's parts in order, as [name, text | file]. */
  parts: Array<[string, string | RecordedFile]>;
  files: RecordedFile[];
}

export interface ImagesDouble {
  baseUrl: string;
  requests: ImagesRequest[];
  /** Requests whose connection the gateway closed before the double had answered. */
  abortedCount(): number;
  close(): Promise<void>;
}

function wordsIn(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

function readForm(request: IncomingMessage): Promise<{ parts: ImagesRequest['parts']; files: RecordedFile[] }> {
  return new Promise((resolve, reject) => {
    const parts: ImagesRequest['parts'] = [];
    const files: RecordedFile[] = [];
    const form = new Busboy({ headers: request.headers as BusboyHeaders });
    form.on('field', (name, value) => parts.push([name, value]));
    form.on('file', (field, stream, filename, _encoding, contentType) => {
      const chunks: Buffer[] = [];
      const file: RecordedFile = { field, filename, contentType, bytes: Buffer.alloc(0) };
      parts.push([field, file]);
      files.push(file);
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        file.bytes = Buffer.concat(chunks);
      });
    });
    form.on('finish', () => resolve({ parts, files }));
    form.on('error', reject);
    request.pipe(form);
  });
}

function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}

export async function startImagesUpstream(): Promise<ImagesDouble> {
  const requests: ImagesRequest[] = [];
  let aborted = 0;
  const send = (response: ServerResponse, status: number, body: unknown): void => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  const answer = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = request.url ?? '';
    const edit = path === '/v1/images/edits';
    if (!edit && path !== '/v1/images/generations') return send(response, 404, { error: { message: `no route ${path}` } });
    let recorded: ImagesRequest;
    if (edit) {
      const { parts, files } = await readForm(request);
      const body: Record<string, unknown> = {};
      for (const [name, value] of parts) if (typeof value === 'string') body[name] = value;
      recorded = { path, headers: request.headers, body, parts, files };
    } else {
      recorded = { path, headers: request.headers, body: await readJson(request), parts: [], files: [] };
    }
    requests.push(recorded);
    const { body, files } = recorded;
    const prompt = String(body.prompt);
    const n = Number(body.n ?? 1);
    const model = String(body.model);
    const gptImage = model.startsWith('gpt-image');
    const stream = body.stream === true || body.stream === 'true';
    if (prompt.includes('answer-500')) return send(response, 500, { error: { message: 'The server had an error while processing your request.', type: 'server_error' } });
    if (prompt.includes('answer-garbage') && !stream) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"created": 1, "data": [');
      return;
    }
    const echo = gptImage
      ? {
          size: body.size === undefined || body.size === 'auto' ? '1024x1024' : String(body.size),
          quality: body.quality === undefined || body.quality === 'auto' ? 'high' : String(body.quality),
          background: 'opaque',
          output_format: String(body.output_format ?? 'png'),
        }
      : {};
    const textTokens = 3 + wordsIn(prompt);
    const imageTokens = INPUT_IMAGE_TOKENS * files.length;
    const usage = {
      total_tokens: textTokens + imageTokens + n * IMAGE_OUTPUT_TOKENS,
      input_tokens: textTokens + imageTokens,
      output_tokens: n * IMAGE_OUTPUT_TOKENS,
      input_tokens_details: { text_tokens: textTokens, image_tokens: imageTokens },
    };
    const b64 = DOUBLE_PNG.toString('base64');
    if (stream) {
      const prefix = edit ? 'image_edit' : 'image_generation';
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = (type: string, data: Record<string, unknown>): void => {
        response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
      };
      if (prompt.includes('answer-garbage')) {
        response.end('event: image_generation.partial_image\ndata: {not json\n\n');
        return;
      }
      const partials = Number(body.partial_images ?? 0);
      const pause = prompt.includes('stream-slow') ? 400 : 20;
      for (let index = 0; index < partials; index += 1) {
        if (response.destroyed) {
          aborted += 1;
          return;
        }
        event(`${prefix}.partial_image`, { b64_json: b64, created_at: 1_767_225_600, ...echo, partial_image_index: index });
        if (prompt.includes('stream-cut')) {
          // The event reaches the gateway, then the connection is cut.
          setTimeout(() => response.socket?.destroy(), 50);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
      if (response.destroyed) {
        aborted += 1;
        return;
      }
      event(`${prefix}.completed`, { b64_json: b64, created_at: 1_767_225_601, ...echo, usage });
      response.end();
      return;
    }
    const data = Array.from({ length: n }, (_, index) =>
      gptImage || body.response_format === 'b64_json'
        ? { b64_json: b64 }
        : { url: `https://images.example/${index}.png`, ...(model === 'dall-e-3' ? { revised_prompt: `A picture of ${prompt}` } : {}) },
    );
    const result = { created: 1_767_225_600, data, ...echo, ...(gptImage ? { usage } : {}) };
    if (prompt.includes('answer-slowly')) {
      const timer = setTimeout(() => send(response, 200, result), 3_000);
      response.on('close', () => {
        if (!response.writableFinished) {
          clearTimeout(timer);
          aborted += 1;
        }
      });
      return;
    }
    send(response, 200, result);
  };
  const server: Server = createServer((request, response) => {
    answer(request, response).catch((error: unknown) => send(response, 400, { error: { message: String(error) } }));
  });
  const listening = await listenOnLoopback(server);
  return {
    baseUrl: `${listening.origin}/v1`,
    requests,
    abortedCount: () => aborted,
    close: listening.close,
  };
}
