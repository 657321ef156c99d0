/**
 * The one implementation of an OpenAI-compatible upstream, shared by the `openai` and `azure`
 * provider types: the canonical path speaks Chat Completions (the dialect every compatible server
 * knows), or Responses when that is all the upstream speaks; same-protocol calls are passed
 * through; embeddings, images, speech, transcriptions and moderations are forwarded. What differs
 * between the types comes in as parameters: the HTTP client (base address, authentication, how
 * error bodies read) and where each call goes (`EndpointPath`) (docs/wire-protocols.md §1–§3,
 * §6–§11, §17; docs/architecture.md, "Hub and spoke").
 */
import type { CanonicalEvent, CanonicalRequest, Surface } from '../../protocol/canonical.js';
import { UpstreamError, type PassthroughCall, type PassthroughResult, type Provider, type ProviderCall } from '../provider.js';
import { canonicalPath, type CanonicalRoute } from '../shared/canonical-stream.js';
import { responsesTool } from '../shared/hosted-tools.js';
import type { UpstreamHttpClient } from '../shared/upstream-http.js';
import { ChatStreamTranslator, chatCompletionEvents, inBandErrorMessage, toChatBody } from './chat-wire.js';
import { runEmbeddings } from './embeddings.js';
import type { EndpointPath } from './endpoint-path.js';
import { runImages } from './images.js';
import { runModerations } from './moderations.js';
import { runPassthrough } from './passthrough.js';
import { ResponsesStreamTranslator, responsesObjectEvents, toResponsesBody } from './responses-wire.js';
import { runSpeech } from './speech.js';
import { runTranscription } from './transcriptions.js';

export interface CompatibleProviderOptions {
  /** The provider's name in the catalog. */
  name: string;
  /** The provider type as messages name it (`openai`, `azure`). */
  providerType: string;
  /** Which creation endpoints the upstream speaks. */
  api: 'chat' | 'responses' | 'both';
  client: UpstreamHttpClient;
  pathOf: EndpointPath;
  /** Whether the upstream has OpenAI's `/moderations` (Azure OpenAI has none). */
  moderations: boolean;
  /**
   * The Chat body as this upstream accepts it, from the one the gateway would send OpenAI: a
   * vendor's differences (vendors.ts), on the canonical path and on a pass-through. As is by default.
   */
  chatBody?: (body: Readonly<Record<string, unknown>>) => Record<string, unknown>;
}

export function createCompatibleProvider(options: CompatibleProviderOptions): Provider {
  const { api, client, pathOf } = options;
  const chatBody = options.chatBody ?? ((body: Readonly<Record<string, unknown>>) => ({ ...body }));

  const speaksNatively = (surface: Surface): boolean => {
    if (surface === 'chat-completions') return api === 'chat' || api === 'both';
    if (surface === 'responses') return api === 'responses' || api === 'both';
    return false;
  };

  /** A whole JSON answer to a stream request: an error object in it fails over, like a 5xx. */
  const wholeBody =
    (toEvents: (body: Record<string, unknown>) => CanonicalEvent[]) =>
    (text: string): CanonicalEvent[] => {
      const json = client.parseJsonObject(text);
      if (json.error !== undefined && json.error !== null) {
        throw client.failure('protocol', `upstream answered 200 with an error: ${inBandErrorMessage(json.error)}`);
      }
      return toEvents(json);
    };

  const provider: Provider = {
    name: options.name,

    ...canonicalPath(client, (request: CanonicalRequest, call: ProviderCall): CanonicalRoute => {
      if (api === 'responses') {
        return { path: pathOf('/responses', call.upstreamModel), body: toResponsesBody(request, call), translator: new ResponsesStreamTranslator(), wholeBody: wholeBody(responsesObjectEvents) };
      }
      return { path: pathOf('/chat/completions', call.upstreamModel), body: chatBody({ ...toChatBody(request, call) }), translator: new ChatStreamTranslator(), wholeBody: wholeBody(chatCompletionEvents) };
    }),

    async passthrough(call: PassthroughCall): Promise<PassthroughResult> {
      if (!speaksNatively(call.surface)) {
        throw new UpstreamError('protocol', `${options.providerType} provider "${options.name}" does not speak ${call.surface} (api: ${api})`);
      }
      return runPassthrough(client, pathOf, call, chatBody);
    },

    speaksNatively,

    embed: (call) => runEmbeddings(client, pathOf, call),
    speak: (call) => runSpeech(client, pathOf, call),
    images: (call) => runImages(client, pathOf, call),
    transcribe: (call) => runTranscription(client, pathOf, call),

    // The canonical path speaks Responses only to an upstream that speaks nothing else; there a
    // Responses tool goes as sent and an Anthropic web search, when mapped, as Responses' own.
    keepsHostedTool: (tool, request) => api === 'responses' && responsesTool(tool, request) !== undefined,

    close: () => client.close(),
  };
  if (client.keys !== undefined) provider.upstreamKeys = client.keys;
  if (options.moderations) provider.moderate = (call) => runModerations(client, pathOf, call);
  return provider;
}
