/**
 * The provider for AWS Bedrock's runtime API (docs/wire-protocols.md §18). With `api: converse`,
 * every model family through Converse and ConverseStream (converse-request.ts, converse-stream.ts);
 * with `api: invoke`, Claude through InvokeModel(WithResponseStream) and Anthropic's own Messages
 * body (invoke-claude.ts), which also serves Messages clients by passing their body through. The
 * target's model is the Bedrock model id (or inference profile), in the path. Every call is signed
 * with SigV4 (sigv4-signer.ts) over credentials from the catalog's environment variables or AWS's
 * standard chain, renewed before they expire (aws-credentials.ts). Streams are AWS's binary event
 * stream (event-stream.ts). AWS's libraries are imported when the provider is built (aws-sdk.ts).
 */
import type { BedrockProviderConfig } from '../../config/schema.js';
import type { CanonicalRequest } from '../../protocol/canonical.js';
import { messageObjectEvents } from '../anthropic/messages-stream.js';
import { toMessagesBody } from '../anthropic/messages-request.js';
import type { PassthroughCall, PassthroughResult, Provider, ProviderCall } from '../provider.js';
import { canonicalPath, type CanonicalRoute } from '../shared/canonical-stream.js';
import { createUpstreamHttpClient, type UpstreamHttpClient } from '../shared/upstream-http.js';
import { AwsCredentialCache, credentialProviderOf, type AwsCredentialProvider } from './aws-credentials.js';
import { awsSdk, preloadAwsSdk } from './aws-sdk.js';
import { readBedrockErrorBody } from './bedrock-error-body.js';
import { toConverseBody } from './converse-request.js';
import { converseAnswerEvents, ConverseStreamTranslator } from './converse-stream.js';
import { EventStreamSplitter } from './event-stream.js';
import { invokeBody, invokePath, InvokeStreamTranslator, runInvokePassthrough } from './invoke-claude.js';
import { SigV4Credentials } from './sigv4-signer.js';

export interface BedrockProviderOptions {
  /** The clock credential expirations are read on (ms since epoch); the system clock by default. */
  now?: () => number;
  /** Where credentials come from instead of the catalog's choice (tests). */
  credentials?: AwsCredentialProvider;
}

/** Bedrock's runtime address in a region. */
export function defaultEndpoint(region: string): string {
  return `https://bedrock-runtime.${region}.amazonaws.com`;
}

/**
 * Builds the provider. `env` supplies the access key named by `credentials.*_env` when the catalog
 * names one (an unset variable is a startup error); otherwise credentials come from the standard
 * chain when the first call needs them. No credential appears in any message.
 */
export function createBedrockProvider(config: BedrockProviderConfig, env: Readonly<Record<string, string | undefined>>, options: BedrockProviderOptions = {}): Provider {
  preloadAwsSdk();
  const endpoint = config.endpoint ?? defaultEndpoint(config.region);
  const cache = new AwsCredentialCache({
    providerName: config.name,
    source: options.credentials ?? credentialProviderOf(config.name, config.credentials, env),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  const client = createUpstreamHttpClient('bedrock', { name: config.name, base_url: endpoint, timeouts: config.timeouts }, env, {
    authHeaders: () => ({}),
    readErrorBody: readBedrockErrorBody,
    credentials: new SigV4Credentials(cache, config.region, endpoint),
  });
  const invoke = config.api === 'invoke';

  return {
    name: config.name,

    ...canonicalPath(client, (request, call) => (invoke ? invokeRoute : converseRoute)(client, request, call)),

    ...(invoke
      ? {
          passthrough: (call: PassthroughCall): Promise<PassthroughResult> => runInvokePassthrough(client, call),
          speaksNatively: (surface) => surface === 'anthropic-messages',
        }
      : {}),

    close: () => client.close(),
  };
}

/** The canonical call through ConverseStream; a request Bedrock cannot take is thrown (a 400 `UpstreamError`). */
async function converseRoute(client: UpstreamHttpClient, request: CanonicalRequest, call: ProviderCall): Promise<CanonicalRoute> {
  const sdk = await awsSdk();
  return {
    path: `/model/${encodeURIComponent(call.upstreamModel)}/converse-stream`,
    body: toConverseBody(request, call),
    translator: new ConverseStreamTranslator(),
    wholeBody: (text) => converseAnswerEvents(client.parseJsonObject(text)),
    splitter: new EventStreamSplitter(sdk),
  };
}

/** The canonical call of Claude through InvokeModelWithResponseStream. */
async function invokeRoute(client: UpstreamHttpClient, request: CanonicalRequest, call: ProviderCall): Promise<CanonicalRoute> {
  const sdk = await awsSdk();
  return {
    path: invokePath(call.upstreamModel, true),
    // Anthropic's server tools (its web search) are not Bedrock's: hosted tools are dropped, and named so (no `keepsHostedTool`).
    body: invokeBody(toMessagesBody({ ...request, mapHostedTools: false }, call)),
    translator: new InvokeStreamTranslator(),
    wholeBody: (text) => messageObjectEvents(client.parseJsonObject(text)),
    splitter: new EventStreamSplitter(sdk),
  };
}
