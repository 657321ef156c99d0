/**
 * The provider for OpenAI and OpenAI-compatible upstreams. The canonical path speaks Chat
 * Completions (the dialect every compatible server knows), or Responses when that is all the
 * upstream speaks; same-protocol calls are passed through.
 * Headers and errors: https://platform.openai.com/docs/api-reference/authentication,
 * https://platform.openai.com/docs/guides/error-codes (docs/wire-protocols.md §6).
 */
import type { CanonicalEvent, CanonicalRequest, Surface } from '../../protocol/canonical.js';
import type { OpenAIProviderConfig } from '../../config/schema.js';
import { UpstreamError, type PassthroughCall, type PassthroughResult, type Provider, type ProviderCall } from '../provider.js';
import { streamCanonical } from '../shared/canonical-stream.js';
import { readMessageErrorBody } from '../shared/error-body.js';
import { createUpstreamHttpClient } from '../shared/upstream-http.js';
import { ChatStreamTranslator, chatCompletionEvents, inBandErrorMessage, toChatBody } from './chat-wire.js';
import { runEmbeddings } from './embeddings.js';
import { runImages } from './images.js';
import { runModerations } from './moderations.js';
import { runSpeech } from './speech.js';
import { runTranscription } from './transcriptions.js';
import { runPassthrough } from './passthrough.js';
import { ResponsesStreamTranslator, responsesObjectEvents, toResponsesBody } from './responses-wire.js';

/**
 * Builds the provider. `env` supplies the secret named by `config.api_key_env` (sent as a bearer
 * token); a name that is configured but unset is a startup error (a missing secret would otherwise
 * surface as 401s on live traffic). The secret never appears in any message.
 */
export function createOpenAIProvider(config: OpenAIProviderConfig, env: Readonly<Record<string, string | undefined>>): Provider {
  const client = createUpstreamHttpClient('openai', config, env, {
    authHeaders: (secret) => ({ authorization: `Bearer ${secret}` }),
    readErrorBody: readMessageErrorBody,
  });

  const speaksNatively = (surface: Surface): boolean => {
    if (surface === 'chat-completions') return config.api === 'chat' || config.api === 'both';
    if (surface === 'responses') return config.api === 'responses' || config.api === 'both';
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

  return {
    name: config.name,

    stream(request: CanonicalRequest, call: ProviderCall): AsyncIterable<CanonicalEvent> {
      if (config.api === 'responses') {
        const route = { path: '/responses', body: toResponsesBody(request, call), translator: new ResponsesStreamTranslator(), wholeBody: wholeBody(responsesObjectEvents) };
        return streamCanonical(client, route, call);
      }
      const route = { path: '/chat/completions', body: toChatBody(request, call), translator: new ChatStreamTranslator(), wholeBody: wholeBody(chatCompletionEvents) };
      return streamCanonical(client, route, call);
    },

    async passthrough(call: PassthroughCall): Promise<PassthroughResult> {
      if (!speaksNatively(call.surface)) {
        throw new UpstreamError('protocol', `openai provider "${config.name}" does not speak ${call.surface} (api: ${config.api})`);
      }
      return runPassthrough(client, call);
    },

    speaksNatively,

    embed: (call) => runEmbeddings(client, call),
    moderate: (call) => runModerations(client, call),
    speak: (call) => runSpeech(client, call),
    images: (call) => runImages(client, call),
    transcribe: (call) => runTranscription(client, call),

    // The canonical path speaks Responses only to an upstream that speaks nothing else.
    keepsHostedTool: () => config.api === 'responses',

    close: () => client.close(),
  };
}
