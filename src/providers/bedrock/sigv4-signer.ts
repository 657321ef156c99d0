/**
 * AWS Signature Version 4 for Bedrock's calls (docs/wire-protocols.md §18.2), made by AWS's own
 * signer (`@smithy/signature-v4`, SHA-256 from `@smithy/hash-node`, imported by aws-sdk.ts): each
 * call is signed over its method, path, `host` and `content-type`, its body's hash and the time,
 * with the credentials of the cache (aws-credentials.ts). The headers it adds (`authorization`,
 * `x-amz-date`, `x-amz-content-sha256`, and `x-amz-security-token` for temporary credentials) go
 * out with the call, as the HTTP client's per-call credential.
 */
import type { SignatureV4 } from '@smithy/signature-v4';
import { soleLease, type CallCredentials, type CallRequest, type CredentialLease } from '../shared/call-credentials.js';
import type { AwsCredentialCache, AwsCredentials } from './aws-credentials.js';
import { awsSdk, type AwsSdk } from './aws-sdk.js';

/** Bedrock's signing name (the runtime API's host is `bedrock-runtime.…`, its signing name `bedrock`). */
export const SIGNING_SERVICE = 'bedrock';

/** The headers the signer is given besides its own: those it signs. */
const SIGNED_BY_CALLER = new Set(['host', 'content-type']);

export class SigV4Credentials implements CallCredentials {
  readonly #cache: AwsCredentialCache;
  readonly #region: string;
  readonly #endpoint: URL;
  /** The signer of the credentials last used (it keeps their derived signing keys), made anew when they change. */
  #signer: { credentials: AwsCredentials; signer: SignatureV4 } | undefined;

  constructor(cache: AwsCredentialCache, region: string, endpoint: string) {
    this.#cache = cache;
    this.#region = region;
    this.#endpoint = new URL(endpoint);
  }

  /** The call signed; a refused signature makes the next call fetch credentials anew (see `refused`). */
  async lease(request: CallRequest): Promise<CredentialLease> {
    return soleLease(await this.headers(request), () => this.refused());
  }

  async headers(request: CallRequest): Promise<Readonly<Record<string, string>>> {
    const [sdk, credentials] = await Promise.all([awsSdk(), this.#cache.get()]);
    const signer = this.#signerFor(sdk, credentials);
    const endpoint = this.#endpoint;
    const unsigned = new sdk.HttpRequest({
      method: 'POST',
      protocol: endpoint.protocol,
      hostname: endpoint.hostname,
      ...(endpoint.port === '' ? {} : { port: Number(endpoint.port) }),
      path: request.path,
      headers: { host: endpoint.host, 'content-type': 'application/json' },
      body: request.body ?? '',
    });
    const signed = await signer.sign(unsigned);
    const added: Record<string, string> = {};
    for (const [name, value] of Object.entries(signed.headers)) if (!SIGNED_BY_CALLER.has(name.toLowerCase())) added[name.toLowerCase()] = value;
    return added;
  }

  #signerFor(sdk: AwsSdk, credentials: AwsCredentials): SignatureV4 {
    if (this.#signer?.credentials !== credentials) {
      this.#signer = { credentials, signer: new sdk.SignatureV4({ credentials, region: this.#region, service: SIGNING_SERVICE, sha256: sdk.Hash.bind(null, 'sha256') }) };
    }
    return this.#signer.signer;
  }

  refused(): void {
    this.#cache.refused();
  }

  redact(text: string): string {
    return this.#cache.redact(text);
  }
}
