/**
 * Upstream doubles with a prompt cache, each keeping it the way its provider does
 * (docs/wire-protocols.md §21), so a test can tell whether the gateway sent the hint a provider
 * needs:
 *
 * - Anthropic Messages (`POST /v1/messages`): only a prefix that ends at a block carrying
 *   `cache_control` is cached; the first call writes it (`cache_creation_input_tokens`), a later
 *   one that repeats it reads it (`cache_read_input_tokens`).
 * - Bedrock ConverseStream (`POST /model/{id}/converse-stream`, SigV4 checked with AWS's signer):
 *   the same, with `cachePoint` blocks as the breakpoints (`cacheWriteInputTokens`,
 *   `cacheReadInputTokens`).
 * - OpenAI Chat (`POST /v1/chat/completions`) and Gemini (`…:streamGenerateContent`): every prefix
 *   is cached unasked; a later call reads the longest one it repeats (`cached_tokens`, in 128s as
 *   OpenAI reports them; `cachedContentTokenCount`).
 *
 * A prefix is cached only from 1,024 tokens, as on every one of them. Tokens are counted one per
 * four characters of a piece's JSON (without its cache marker), plus a few for the turn's framing.
 * Each answer is the same short text; `reports` lists what each call reported. Test-only code.
 */
import { createServer, type ServerResponse } from 'node:http';
import { eventMessage, longTermKey, verifySigV4 } from './bedrock-upstream.js';
import { listenOnLoopback, playFrames } from './loopback-server.js';
import { startUpstreamDouble, type ReceivedRequest, type UpstreamDouble } from './upstream-double.js';

export const ANSWER = 'Cached or not, here I am.';
export const OUTPUT_TOKENS = 7;
/** Tokens of a turn's framing, never cached. */
const FRAMING_TOKENS = 4;
/** The shortest prefix a provider caches. */
const MIN_CACHED_TOKENS = 1_024;

/** What a call reported of its input: all of it, the part read from the cache, the part written to it. */
export interface CacheReport {
  wire: 'anthropic' | 'chat' | 'gemini' | 'converse';
  total: number;
  read: number;
  written: number;
}

function tokensOf(pieces: readonly unknown[]): number {
  return pieces.reduce<number>((sum, piece) => sum + Math.ceil(JSON.stringify(piece).length / 4), 0);
}

/** One provider's cache: the prefixes it holds, by their JSON. */
class PromptCache {
  readonly #held = new Set<string>();

  /** A call whose cache needs breakpoints: `breakpoints` are the lengths of the marked prefixes. */
  explicit(pieces: readonly unknown[], breakpoints: readonly number[]): Omit<CacheReport, 'wire'> {
    const total = tokensOf(pieces) + FRAMING_TOKENS;
    const cacheable = breakpoints.filter((length) => tokensOf(pieces.slice(0, length)) >= MIN_CACHED_TOKENS);
    const hits = cacheable.filter((length) => this.#held.has(JSON.stringify(pieces.slice(0, length))));
    const read = hits.length === 0 ? 0 : tokensOf(pieces.slice(0, Math.max(...hits)));
    const last = cacheable.length === 0 ? 0 : Math.max(...cacheable);
    const written = last === 0 || hits.includes(last) ? 0 : tokensOf(pieces.slice(0, last)) - read;
    for (const length of cacheable) this.#held.add(JSON.stringify(pieces.slice(0, length)));
    return { total, read, written };
  }

  /** A call to a cache that holds every prefix unasked; `granule` rounds the read down (OpenAI: 128). */
  implicit(pieces: readonly unknown[], granule = 1): Omit<CacheReport, 'wire'> {
    const total = tokensOf(pieces) + FRAMING_TOKENS;
    let read = 0;
    for (let length = pieces.length; length > 0 && read === 0; length -= 1) {
      const tokens = tokensOf(pieces.slice(0, length));
      if (tokens >= MIN_CACHED_TOKENS && this.#held.has(JSON.stringify(pieces.slice(0, length)))) read = Math.floor(tokens / granule) * granule;
    }
    for (let length = 1; length <= pieces.length; length += 1) this.#held.add(JSON.stringify(pieces.slice(0, length)));
    return { total, read, written: 0 };
  }
}

/** A block without its cache marker, and whether it had one. */
function unmarked(block: unknown): { piece: unknown; marked: boolean } {
  if (typeof block !== 'object' || block === null || !('cache_control' in block)) return { piece: block, marked: false };
  const { cache_control: control, ...piece } = block as Record<string, unknown>;
  return { piece, marked: control !== undefined && control !== null };
}

/** Pieces in order and the breakpoints after marked ones. */
function explicitPieces(blocks: readonly unknown[], isMark: (block: unknown) => boolean = () => false): { pieces: unknown[]; breakpoints: number[] } {
  const pieces: unknown[] = [];
  const breakpoints: number[] = [];
  for (const block of blocks) {
    if (isMark(block)) {
      if (pieces.length > 0) breakpoints.push(pieces.length);
      continue;
    }
    const { piece, marked } = unmarked(block);
    pieces.push(piece);
    if (marked) breakpoints.push(pieces.length);
  }
  return { pieces, breakpoints };
}

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : value === undefined || value === null ? [] : [value]);

function anthropicBlocks(body: Record<string, unknown>): unknown[] {
  const system = typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : asArray(body.system);
  const messages = asArray(body.messages).flatMap((message) => {
    const { role, content } = message as { role: string; content: unknown };
    return (typeof content === 'string' ? [{ type: 'text', text: content }] : asArray(content)).map((block) => ({ role, ...(block as object) }));
  });
  return [...asArray(body.tools), ...system, ...messages];
}

function sseOf(events: Array<[string | undefined, unknown]>): string {
  return events.map(([name, data]) => `${name === undefined ? '' : `event: ${name}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`).join('');
}

function answerAnthropic(request: ReceivedRequest, response: ServerResponse, report: CacheReport): void {
  const usage = { input_tokens: report.total - report.read - report.written, cache_creation_input_tokens: report.written, cache_read_input_tokens: report.read };
  const model = String(request.body.model ?? 'claude');
  const message = { id: 'msg_cache01', type: 'message', role: 'assistant', model, stop_sequence: null };
  if (request.body.stream !== true) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ ...message, content: [{ type: 'text', text: ANSWER }], stop_reason: 'end_turn', usage: { ...usage, output_tokens: OUTPUT_TOKENS } }));
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.end(
    sseOf([
      ['message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } }],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ANSWER } }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: OUTPUT_TOKENS } }],
      ['message_stop', { type: 'message_stop' }],
    ]),
  );
}

function answerChat(request: ReceivedRequest, response: ServerResponse, report: CacheReport): void {
  const usage = { prompt_tokens: report.total, completion_tokens: OUTPUT_TOKENS, total_tokens: report.total + OUTPUT_TOKENS, prompt_tokens_details: { cached_tokens: report.read } };
  const base = { id: 'chatcmpl-cache01', created: 1_760_000_000, model: String(request.body.model ?? 'gpt') };
  if (request.body.stream !== true) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: ANSWER }, finish_reason: 'stop' }], usage }));
    return;
  }
  const chunk = { ...base, object: 'chat.completion.chunk' };
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.end(
    sseOf([
      [undefined, { ...chunk, choices: [{ index: 0, delta: { role: 'assistant', content: ANSWER }, finish_reason: null }] }],
      [undefined, { ...chunk, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }],
      [undefined, { ...chunk, choices: [], usage }],
      [undefined, '[DONE]'],
    ]),
  );
}

function answerGemini(response: ServerResponse, report: CacheReport): void {
  const usageMetadata = { promptTokenCount: report.total, cachedContentTokenCount: report.read, candidatesTokenCount: OUTPUT_TOKENS, totalTokenCount: report.total + OUTPUT_TOKENS };
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.end(sseOf([[undefined, { candidates: [{ content: { role: 'model', parts: [{ text: ANSWER }] }, finishReason: 'STOP', index: 0 }], usageMetadata, modelVersion: 'gemini-2.5-flash' }]]));
}

export interface CachingUpstream {
  /** Base address with `/v1`, for Anthropic and OpenAI providers. */
  baseUrl: string;
  /** Base address with `/v1beta`, for a Gemini provider. */
  geminiBaseUrl: string;
  requests: ReceivedRequest[];
  reports: CacheReport[];
  close(): Promise<void>;
}

/** Anthropic, OpenAI Chat and Gemini at their paths, each with a cache of its own. */
export async function startCachingUpstream(): Promise<CachingUpstream> {
  const caches = { anthropic: new PromptCache(), chat: new PromptCache(), gemini: new PromptCache() };
  const reports: CacheReport[] = [];
  const double: UpstreamDouble = await startUpstreamDouble((request, response) => {
    const body = request.body;
    if (request.path.startsWith('/v1/messages')) {
      const { pieces, breakpoints } = explicitPieces(anthropicBlocks(body));
      const report: CacheReport = { wire: 'anthropic', ...caches.anthropic.explicit(pieces, breakpoints) };
      reports.push(report);
      answerAnthropic(request, response, report);
    } else if (request.path.startsWith('/v1/chat/completions')) {
      const report: CacheReport = { wire: 'chat', ...caches.chat.implicit([...asArray(body.tools), ...asArray(body.messages)], 128) };
      reports.push(report);
      answerChat(request, response, report);
    } else if (request.path.includes(':streamGenerateContent')) {
      const report: CacheReport = { wire: 'gemini', ...caches.gemini.implicit([body.systemInstruction, ...asArray(body.tools), ...asArray(body.contents)]) };
      reports.push(report);
      answerGemini(response, report);
    } else {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: `no such path ${request.path}` } }));
    }
  });
  return { baseUrl: double.baseUrl, geminiBaseUrl: `${new URL(double.baseUrl).origin}/v1beta`, requests: double.requests, reports, close: () => double.close() };
}

export interface CachingBedrock {
  endpoint: string;
  requests: Array<Record<string, unknown>>;
  reports: CacheReport[];
  close(): Promise<void>;
}

/** ConverseStream only, signed with one long-term key. */
export async function startCachingBedrock(options: { region: string; accessKeyId: string; secretAccessKey: string }): Promise<CachingBedrock> {
  const cache = new PromptCache();
  const requests: Array<Record<string, unknown>> = [];
  const reports: CacheReport[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        const raw = Buffer.concat(chunks);
        const rawPath = (request.url ?? '/').split('?', 1)[0] ?? '/';
        const auth = await verifySigV4(request, rawPath, raw, options.region, longTermKey(options.accessKeyId, options.secretAccessKey));
        if ('status' in auth || !rawPath.endsWith('/converse-stream')) {
          response.writeHead('status' in auth ? auth.status : 404, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ message: 'status' in auth ? auth.message : 'Unknown operation' }));
          return;
        }
        const body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
        requests.push(body);
        const isMark = (block: unknown): boolean => typeof block === 'object' && block !== null && 'cachePoint' in block;
        const messages = asArray(body.messages).flatMap((message) => {
          const { role, content } = message as { role: string; content: unknown[] };
          return content.map((block) => (isMark(block) ? block : { role, ...(block as object) }));
        });
        const tools = asArray((body.toolConfig as { tools?: unknown } | undefined)?.tools);
        const { pieces, breakpoints } = explicitPieces([...tools, ...asArray(body.system), ...messages], isMark);
        const report: CacheReport = { wire: 'converse', ...cache.explicit(pieces, breakpoints) };
        reports.push(report);
        const usage = { inputTokens: report.total - report.read - report.written, outputTokens: OUTPUT_TOKENS, cacheReadInputTokens: report.read, cacheWriteInputTokens: report.written, totalTokens: report.total + OUTPUT_TOKENS };
        response.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
        playFrames(
          response,
          [
            eventMessage('messageStart', { role: 'assistant' }),
            eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: { text: ANSWER } }),
            eventMessage('contentBlockStop', { contentBlockIndex: 0 }),
            eventMessage('messageStop', { stopReason: 'end_turn' }),
            eventMessage('metadata', { usage, metrics: { latencyMs: 12 } }),
          ],
          0,
        );
      })();
    });
  });
  const { origin, close } = await listenOnLoopback(server);
  return { endpoint: origin, requests, reports, close };
}
