/**
 * AWS's libraries that a `bedrock` provider uses (its credential chain, its SigV4 signer and its
 * event-stream codec), imported together once, when the first `bedrock` provider is built: a
 * gateway whose catalog has none never loads them (docs/architecture.md, "What a process loads").
 * Each part of the provider awaits them where it is already asynchronous (a credential fetch, the
 * signing of a call, the opening of a stream), so no call waits once they are in.
 */
import type { defaultProvider } from '@aws-sdk/credential-provider-node';
import type { EventStreamCodec } from '@smithy/eventstream-codec';
import type { Hash } from '@smithy/hash-node';
import type { HttpRequest } from '@smithy/protocol-http';
import type { SignatureV4 } from '@smithy/signature-v4';
import type { fromUtf8, toUtf8 } from '@smithy/util-utf8';

export interface AwsSdk {
  defaultProvider: typeof defaultProvider;
  EventStreamCodec: typeof EventStreamCodec;
  Hash: typeof Hash;
  HttpRequest: typeof HttpRequest;
  SignatureV4: typeof SignatureV4;
  fromUtf8: typeof fromUtf8;
  toUtf8: typeof toUtf8;
}

let loading: Promise<AwsSdk> | undefined;

/** The libraries, imported on the first call; every later call gets the same promise. */
export function awsSdk(): Promise<AwsSdk> {
  loading ??= Promise.all([
    import('@aws-sdk/credential-provider-node'),
    import('@smithy/eventstream-codec'),
    import('@smithy/hash-node'),
    import('@smithy/protocol-http'),
    import('@smithy/signature-v4'),
    import('@smithy/util-utf8'),
  ]).then(([credentials, codec, hash, http, signature, utf8]) => ({
    defaultProvider: credentials.defaultProvider,
    EventStreamCodec: codec.EventStreamCodec,
    Hash: hash.Hash,
    HttpRequest: http.HttpRequest,
    SignatureV4: signature.SignatureV4,
    fromUtf8: utf8.fromUtf8,
    toUtf8: utf8.toUtf8,
  }));
  return loading;
}

/** Starts the import now (a provider being built), so that its first call finds it done; a failure is met by that call. */
export function preloadAwsSdk(): void {
  awsSdk().catch(() => undefined);
}
