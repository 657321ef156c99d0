/**
 * The provider for Google Vertex AI (docs/wire-protocols.md §19): one publisher's models in one
 * project and location, with a bearer token (vertex-credentials.ts). Gemini (`publisher: google`)
 * is the Gemini provider's translation (gemini/) at Vertex's address; Claude (`publisher:
 * anthropic`) is the Anthropic provider's (anthropic/), its pass-through included, with the model
 * in the address (`:streamRawPredict`, `:rawPredict`) and `anthropic_version` in the body.
 * Vertex's errors are Google's error object, or Anthropic's for Claude: one reader takes both.
 */
import type { VertexProviderConfig } from '../../config/schema.js';
import { messagesRoute } from '../anthropic/anthropic-provider.js';
import type { MessagesWire } from '../anthropic/messages-wire.js';
import { runMessagesPassthrough } from '../anthropic/passthrough.js';
import { CallMemory } from '../gemini/call-memory.js';
import { readGeminiErrorBody } from '../gemini/error-body.js';
import { geminiRoute } from '../gemini/gemini-provider.js';
import type { PassthroughCall, PassthroughResult, Provider } from '../provider.js';
import { canonicalPath } from '../shared/canonical-stream.js';
import { keepsMappedWebSearch } from '../shared/hosted-tools.js';
import { createUpstreamHttpClient, type UpstreamHttpClient } from '../shared/upstream-http.js';
import { vertexCredentials } from './vertex-credentials.js';
import { modelMethodPath, vertexBaseUrl } from './vertex-paths.js';

export interface VertexProviderOptions {
  /** The clock a service account's token expiry is read on (ms since epoch); the system clock by default. */
  now?: () => number;
}

/**
 * Builds the provider. Its credentials are read at startup (a named file that cannot be read is an
 * error then); its tokens are fetched on the first call and kept until shortly before they expire.
 */
export function createVertexProvider(config: VertexProviderConfig, env: Readonly<Record<string, string | undefined>>, options: VertexProviderOptions = {}): Provider {
  const tokens = vertexCredentials(config, env, options.now);
  // Google's error object (`{"error":{"code","message","status"}}`) has Anthropic's `error.message` path too.
  const client = createUpstreamHttpClient('vertex', { name: config.name, base_url: vertexBaseUrl(config), timeouts: config.timeouts }, env, {
    authHeaders: () => ({}),
    readErrorBody: readGeminiErrorBody,
    credentials: tokens,
  });
  const close = async (): Promise<void> => {
    await Promise.all([client.close(), tokens.close()]);
  };
  return config.publisher === 'google' ? { ...geminiOnVertex(config.name, client), close } : { ...claudeOnVertex(config, client), close };
}

/** Gemini: the Gemini API's body and stream at `…/publishers/google/models/{model}:streamGenerateContent?alt=sse`. */
function geminiOnVertex(name: string, client: UpstreamHttpClient): Provider {
  const memory = new CallMemory();
  return {
    name,
    ...canonicalPath(client, (request, call) => geminiRoute(client, memory, request, call, modelMethodPath(call.upstreamModel, 'streamGenerateContent?alt=sse'))),
    keepsHostedTool: keepsMappedWebSearch,
  };
}

/** Claude: Anthropic's Messages body without `model` (and without `service_tier`, which Vertex does not sell), with `anthropic_version`. */
export function claudeWire(anthropicVersion: string): MessagesWire {
  return {
    path: (upstreamModel, stream) => modelMethodPath(upstreamModel, stream ? 'streamRawPredict' : 'rawPredict'),
    body: (body) => {
      const sent: Record<string, unknown> = { anthropic_version: anthropicVersion, ...body };
      delete sent.model;
      delete sent.service_tier;
      return sent;
    },
  };
}

function claudeOnVertex(config: VertexProviderConfig, client: UpstreamHttpClient): Provider {
  const wire = claudeWire(config.anthropic_version);
  return {
    name: config.name,
    ...canonicalPath(client, (request, call) => messagesRoute(client, request, call, wire)),
    passthrough: (call: PassthroughCall): Promise<PassthroughResult> => runMessagesPassthrough(client, call, wire),
    speaksNatively: (surface) => surface === 'anthropic-messages',
    keepsHostedTool: keepsMappedWebSearch,
  };
}
