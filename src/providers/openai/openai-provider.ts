/**
 * The provider for OpenAI and OpenAI-compatible upstreams. The canonical path speaks Chat
 * Completions (the dialect every compatible server knows), or Responses when that is all the
 * upstream speaks; same-protocol calls are passed through.
 */
import type { CanonicalEvent, CanonicalRequest, Surface } from '../../protocol/canonical.js';
import type { OpenAIProviderConfig } from '../../config/schema.js';
import { UpstreamError, type PassthroughCall, type PassthroughResult, type Provider, type ProviderCall } from '../provider.js';
import { streamCanonical } from './canonical-stream.js';
import { ChatStreamTranslator, chatCompletionEvents, toChatBody } from './chat-wire.js';
import { UpstreamHttpClient } from './http-client.js';
import { runPassthrough } from './passthrough.js';
import { ResponsesStreamTranslator, responsesObjectEvents, toResponsesBody } from './responses-wire.js';

/**
 * Builds the provider. `env` supplies the secret named by `config.api_key_env`; a name that is
 * configured but unset is a startup error (a missing secret would otherwise surface as 401s on
 * live traffic). The secret never appears in any message.
 */
export function createOpenAIProvider(config: OpenAIProviderConfig, env: Readonly<Record<string, string | undefined>>): Provider {
  const secret = resolveSecret(config, env);
  const client = new UpstreamHttpClient({ providerName: config.name, baseUrl: config.base_url, secret, timeouts: config.timeouts });

  const speaksNatively = (surface: Surface): boolean =>
    surface === 'chat-completions' ? config.api === 'chat' || config.api === 'both' : config.api === 'responses' || config.api === 'both';

  return {
    name: config.name,

    stream(request: CanonicalRequest, call: ProviderCall): AsyncIterable<CanonicalEvent> {
      if (config.api === 'responses') {
        return streamCanonical(client, { path: '/responses', body: toResponsesBody(request, call), translator: new ResponsesStreamTranslator(), jsonEvents: responsesObjectEvents }, call);
      }
      return streamCanonical(client, { path: '/chat/completions', body: toChatBody(request, call), translator: new ChatStreamTranslator(), jsonEvents: chatCompletionEvents }, call);
    },

    async passthrough(call: PassthroughCall): Promise<PassthroughResult> {
      if (!speaksNatively(call.surface)) {
        throw new UpstreamError('protocol', `openai provider "${config.name}" does not speak ${call.surface} (api: ${config.api})`);
      }
      return runPassthrough(client, call);
    },

    speaksNatively,

    close: () => client.close(),
  };
}

function resolveSecret(config: OpenAIProviderConfig, env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (config.api_key_env === undefined) return undefined;
  const secret = env[config.api_key_env];
  if (secret === undefined || secret.trim() === '') {
    throw new Error(`openai provider "${config.name}": environment variable ${config.api_key_env} (its API key) is not set`);
  }
  return secret.trim();
}
