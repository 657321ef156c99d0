/**
 * The provider for Anthropic's Messages API (and compatible upstreams). A Messages client is passed
 * through (passthrough.ts); OpenAI's surfaces go through the canonical path: canonical request →
 * Messages body, Messages stream → canonical events.
 * Headers: https://docs.anthropic.com/en/api/versioning; errors: https://docs.anthropic.com/en/api/errors
 * (docs/wire-protocols.md §4.1, §4.5).
 */
import type { AnthropicProviderConfig } from '../../config/schema.js';
import type { CanonicalRequest } from '../../protocol/canonical.js';
import type { PassthroughCall, PassthroughResult, Provider, ProviderCall } from '../provider.js';
import { canonicalPath, type CanonicalRoute } from '../shared/canonical-stream.js';
import { readMessageErrorBody } from '../shared/error-body.js';
import { createUpstreamHttpClient, type UpstreamHttpClient } from '../shared/upstream-http.js';
import { toMessagesBody } from './messages-request.js';
import { ANTHROPIC_API, type MessagesWire } from './messages-wire.js';
import { runMessagesPassthrough } from './passthrough.js';
import { MessagesStreamTranslator, messageObjectEvents } from './messages-stream.js';
import { keepsMappedWebSearch } from '../shared/hosted-tools.js';

/**
 * Builds the provider. `env` supplies the secret named by `config.api_key_env` (sent as
 * `x-api-key`); a name that is configured but unset is a startup error, since a missing secret
 * would otherwise surface as 401s on live traffic. The secret never appears in any message.
 */
export function createAnthropicProvider(config: AnthropicProviderConfig, env: Readonly<Record<string, string | undefined>>): Provider {
  const client = createUpstreamHttpClient('anthropic', config, env, {
    authHeaders: (secret) => ({ 'x-api-key': secret }),
    headers: { 'anthropic-version': config.version },
    // Anthropic's body is {"type":"error","error":{"type","message"}}: the same `error.message` path as OpenAI's.
    // 429, 529 (overloaded) and other 5xx are failoverable by their status (UpstreamError.failoverable).
    readErrorBody: readMessageErrorBody,
  });

  return {
    name: config.name,

    ...canonicalPath(client, (request, call) => messagesRoute(client, request, call)),

    keepsHostedTool: keepsMappedWebSearch,
    passthrough(call: PassthroughCall): Promise<PassthroughResult> {
      return runMessagesPassthrough(client, call);
    },

    speaksNatively: (surface) => surface === 'anthropic-messages',

    ...(client.keys === undefined ? {} : { upstreamKeys: client.keys }),
    close: () => client.close(),
  };
}

/**
 * The canonical call of a Messages upstream. `wire` says where the body goes and how it is dressed
 * (Vertex AI's Claude, vertex/).
 */
export function messagesRoute(client: UpstreamHttpClient, request: CanonicalRequest, call: ProviderCall, wire: MessagesWire = ANTHROPIC_API): CanonicalRoute {
  return {
    path: wire.path(call.upstreamModel, true),
    body: wire.body(toMessagesBody(request, call)),
    translator: new MessagesStreamTranslator(),
    // A compatible upstream that ignored `stream: true` and sent a whole Message.
    wholeBody: (text: string) => messageObjectEvents(client.parseJsonObject(text)),
  };
}
