/**
 * The AWS credentials a `bedrock` provider signs with (docs/wire-protocols.md §18.2): an access key
 * read from the environment variables the catalog names, or AWS's standard chain
 * (`@aws-sdk/credential-provider-node`: environment, SSO, web identity token file for Kubernetes,
 * shared config and credentials files with an optional profile, the container and instance
 * metadata endpoints).
 *
 * Temporary credentials (those with an `expiration`) are kept until a margin before they expire (a
 * tenth of their remaining life when they came, at most five minutes) and then fetched again from
 * the chain with `forceRefresh`; calls that need them meanwhile share the one fetch in flight. A
 * call already under way keeps what it was signed with: AWS checks the signature when the request
 * arrives, so a stream outlives the credentials it began with. Credentials AWS refused (403) are
 * dropped, and the next call fetches anew.
 *
 * A fetch that fails is an `UpstreamError` of kind `credentials` (the router takes the provider
 * out, docs/architecture.md) whose message says why, and holds no key, secret or token.
 */
import type { BedrockCredentialsConfig } from '../../config/schema.js';
import { UpstreamError } from '../provider.js';
import { resolveSecret } from '../shared/provider-secret.js';
import { RenewingValue, type Renewable } from '../shared/renewing-value.js';
import { awsSdk } from './aws-sdk.js';

/** A set of AWS credentials, as AWS's libraries pass them. */
export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string | undefined;
  readonly expiration?: Date | undefined;
}

/** Where credentials come from: AWS's provider functions have this shape. */
export type AwsCredentialProvider = (options?: { forceRefresh?: boolean }) => Promise<AwsCredentials>;

/** The margin before expiry at which credentials are renewed: a tenth of their life, at most five minutes. */
export function renewalMargin(lifeMs: number): number {
  return Math.min(5 * 60_000, Math.max(0, Math.floor(lifeMs / 10)));
}

/** The provider's failure reasons are cut to this length (chains list every source they tried). */
const REASON_LIMIT = 300;

/**
 * The source the catalog names: the access key in its environment variables (read now: an unset
 * one is a startup error), or the standard chain, with its profile when one is named (built at the
 * first fetch, once AWS's libraries are in: aws-sdk.ts).
 */
export function credentialProviderOf(providerName: string, config: BedrockCredentialsConfig | undefined, env: Readonly<Record<string, string | undefined>>): AwsCredentialProvider {
  if (config?.access_key_id_env === undefined) {
    const chainOptions = config?.profile === undefined ? {} : { profile: config.profile };
    let chain: Promise<AwsCredentialProvider> | undefined;
    return async (options) => {
      chain ??= awsSdk().then((sdk) => sdk.defaultProvider(chainOptions));
      return (await chain)(options);
    };
  }
  const read = (variable: string | undefined, what: string): string | undefined => resolveSecret('bedrock', { name: providerName, api_key_env: variable }, env, what);
  const accessKeyId = read(config.access_key_id_env, 'its AWS access key id') ?? '';
  const secretAccessKey = read(config.secret_access_key_env, 'its AWS secret access key') ?? '';
  const sessionToken = read(config.session_token_env, 'its AWS session token');
  const credentials: AwsCredentials = { accessKeyId, secretAccessKey, ...(sessionToken === undefined ? {} : { sessionToken }) };
  return () => Promise.resolve(credentials);
}

export interface AwsCredentialCacheOptions {
  /** The provider's name in the catalog, for messages. */
  providerName: string;
  source: AwsCredentialProvider;
  /** The clock expirations are read on (ms since epoch); the system clock by default. */
  now?: () => number;
}

export class AwsCredentialCache {
  readonly #label: string;
  readonly #source: AwsCredentialProvider;
  readonly #now: () => number;
  readonly #held: RenewingValue<AwsCredentials>;
  /** Set once credentials were had: the next fetch asks the chain for new ones, not its memo. */
  #renewing = false;
  /** The secrets of the credentials in use (the current ones and those before, which a running call may hold). */
  #secrets: readonly string[] = [];

  constructor(options: AwsCredentialCacheOptions) {
    this.#label = `bedrock provider "${options.providerName}"`;
    this.#source = options.source;
    this.#now = options.now ?? Date.now;
    this.#held = new RenewingValue(() => this.#fetch(), this.#now);
  }

  /** Credentials valid beyond the renewal margin: those held, or the one fetch in flight. */
  get(): Promise<AwsCredentials> {
    return this.#held.get();
  }

  /** AWS refused the credentials: the next call fetches new ones. */
  refused(): void {
    this.#held.drop();
  }

  /** Strips every key, secret and token handed out from a text. */
  redact(text: string): string {
    let result = text;
    for (const secret of this.#secrets) if (secret !== '' && result.includes(secret)) result = result.split(secret).join('[redacted]');
    return result;
  }

  async #fetch(): Promise<Renewable<AwsCredentials>> {
    const renewing = this.#renewing;
    let credentials: AwsCredentials;
    try {
      credentials = await this.#source(renewing ? { forceRefresh: true } : {});
    } catch (error) {
      const reason = error instanceof Error && error.message !== '' ? (error.message.split(/\r?\n/, 1)[0] ?? '').slice(0, REASON_LIMIT) : 'no reason given';
      throw new UpstreamError('credentials', this.redact(`${this.#label}: could not get AWS credentials (${reason})`), { cause: error });
    }
    if (credentials.accessKeyId === '' || credentials.secretAccessKey === '') throw new UpstreamError('credentials', `${this.#label}: the AWS credential source gave an empty access key`);
    this.#renewing = true;
    this.#secrets = [...this.#secrets.slice(-3), credentials.accessKeyId, credentials.secretAccessKey, ...(credentials.sessionToken === undefined ? [] : [credentials.sessionToken])];
    const now = this.#now();
    const expiresAt = credentials.expiration?.getTime();
    const renewAt = expiresAt === undefined || !Number.isFinite(expiresAt) ? Number.POSITIVE_INFINITY : expiresAt - renewalMargin(expiresAt - now);
    return { value: credentials, renewAt };
  }
}
