/**
 * The provider for Google's Gemini API (`generateContent` wire format, API-key auth). It speaks no
 * OpenAI surface natively, so every request takes the canonical path: canonical request → Gemini
 * body → `streamGenerateContent?alt=sse` → canonical events. No pass-through.
 * Vendor reference: https://ai.google.dev/api/generate-content (docs/wire-protocols.md §5).
 */
import type { GeminiProviderConfig } from '../../config/schema.js';
import { isRecord, parseJson } from '../../lib/json-value.js';
import type { CanonicalEvent, CanonicalRequest } from '../../protocol/canonical.js';
import type { Provider, ProviderCall } from '../provider.js';
import { CUT_SHORT } from '../shared/canonical-reader.js';
import { canonicalPath, type CanonicalRoute } from '../shared/canonical-stream.js';
import { UnreadableStreamError } from '../shared/stream-translator.js';
import { createUpstreamHttpClient, type UpstreamHttpClient } from '../shared/upstream-http.js';
import { CallMemory } from './call-memory.js';
import { runGeminiEmbeddings } from './embeddings.js';
import { describeGeminiError, readGeminiError, readGeminiErrorBody } from './error-body.js';
import { toGeminiBody, UnmatchedCallOutputError, type GeminiRequestBody } from './request-body.js';
import { GeminiStreamTranslator } from './stream-translator.js';
import { keepsMappedWebSearch } from '../shared/hosted-tools.js';

/**
 * Builds the provider. `env` supplies the secret named by `config.api_key_env`; a name that is
 * configured but unset is a startup error (a missing secret would otherwise surface as refusals on
 * live traffic). The secret goes in the `x-goog-api-key` header only (never in the URL, because
 * URLs end up in logs), and never into a message.
 */
export function createGeminiProvider(config: GeminiProviderConfig, env: Readonly<Record<string, string | undefined>>): Provider {
  const client = createUpstreamHttpClient('gemini', config, env, {
    authHeaders: (secret) => ({ 'x-goog-api-key': secret }),
    readErrorBody: readGeminiErrorBody,
  });
  const memory = new CallMemory();

  return {
    name: config.name,

    ...canonicalPath(client, (request, call) => geminiRoute(client, memory, request, call)),

    embed: (call) => runGeminiEmbeddings(client, call),

    keepsHostedTool: keepsMappedWebSearch,
    ...(client.keys === undefined ? {} : { upstreamKeys: client.keys }),
    close: () => client.close(),
  };
}

/** `models/{model}:streamGenerateContent?alt=sse`; without `alt=sse` Gemini streams a JSON array. */
export function streamPath(upstreamModel: string): string {
  // The catalog may name the model the way Google's own listings do, `models/gemini-…`.
  const model = upstreamModel.replace(/^models\//, '');
  return `/models/${encodeURIComponent(model)}:streamGenerateContent?alt=sse`;
}

/**
 * The canonical call of a Gemini upstream; a request Gemini cannot take is thrown (a 400
 * `UpstreamError`). Vertex AI's Gemini calls it too, with its own client and path (vertex/).
 */
export function geminiRoute(client: UpstreamHttpClient, memory: CallMemory, request: CanonicalRequest, call: ProviderCall, path = streamPath(call.upstreamModel)): CanonicalRoute {
  const body = buildBody(client, memory, request, call);
  const translator = new GeminiStreamTranslator({ onFunctionCall: (callId, remembered) => memory.remember(callId, remembered) });
  return {
    path,
    body,
    translator,
    // Not a stream after all (a proxy, or a misrouted request): read whole.
    wholeBody: (text: string) => wholeAnswerEvents(client, translator, text),
  };
}

function buildBody(client: UpstreamHttpClient, memory: CallMemory, request: CanonicalRequest, call: ProviderCall): GeminiRequestBody {
  try {
    return toGeminiBody(request, call, (callId) => memory.recall(callId));
  } catch (error) {
    if (!(error instanceof UnmatchedCallOutputError)) throw error;
    // The request itself is wrong and would be wrong on every target: a 400, not a failover.
    throw client.failure('status', error.message, { status: 400, clientMessage: error.message });
  }
}

/**
 * The events of a whole JSON answer: one response object, or the array `alt=sse` avoids. An error
 * object in it fails over, since nothing has been yielded yet; a chunk that cannot be read ends
 * the answer with an `error` event, as it would in a stream.
 */
function wholeAnswerEvents(client: UpstreamHttpClient, translator: GeminiStreamTranslator, text: string): CanonicalEvent[] {
  const parsed = parseJson(text);
  if (!parsed.ok) throw client.failure('protocol', 'the answer body is neither an event stream nor JSON');
  const chunks = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
  for (const chunk of chunks) {
    const error = isRecord(chunk) ? readGeminiError(chunk.error) : undefined;
    if (error !== undefined) throw client.failure('protocol', `upstream answered 200 with an error: ${client.safeText(describeGeminiError(error))}`);
  }
  const events: CanonicalEvent[] = [];
  try {
    for (const chunk of chunks) events.push(...translator.read(chunk));
  } catch (error) {
    if (!(error instanceof UnreadableStreamError)) throw error;
    events.push({ type: 'error', code: 'upstream_error', message: error.message });
    return events;
  }
  events.push(...(translator.endOfBody() ?? [{ type: 'error', code: 'upstream_error', message: CUT_SHORT }]));
  return events;
}
