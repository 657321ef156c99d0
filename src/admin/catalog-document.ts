/**
 * The catalog document of the admin API (docs/architecture.md, "The catalog at runtime"):
 * providers and models, validated by the file's own schemas (config/schema.ts) and cross checks
 * (config/load.ts). A provider of a type that sends one key (openai, anthropic, gemini, azure) may
 * carry its upstream secret as `api_key`: it is sealed (lib/seal.ts) with `TOLLGATE_SECRETS_KEY`,
 * kept beside the document, and the document keeps only the marker `[stored]`, which is also what
 * a later document gives to keep the stored secret. At run time the secret reaches its provider as
 * an environment variable of the provider's own (`storedKeyEnv`), so providers read it as any key.
 */
import { ENV } from '../config/env.js';
import { catalogProblems, formatPath } from '../config/load.js';
import { catalogDocumentSchema, type CatalogDocument } from '../config/schema.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Sealer } from '../lib/seal.js';

/** What a document shows in place of a stored secret, and gives back to keep it. */
export const STORED_SECRET = '[stored]';

/** The purpose label secrets are sealed under (lib/seal.ts). */
export const SECRET_PURPOSE = 'catalog.api_key';

const SECRETS_KEY_ENV = ENV.secretsKey;

const SECRET_TYPES: ReadonlySet<string> = new Set(['openai', 'anthropic', 'gemini', 'azure']);

/** The environment variable name a provider's stored secret is handed to it under. */
export function storedKeyEnv(providerName: string): string {
  return `TOLLGATE_STORED_API_KEY_${Buffer.from(providerName, 'utf8').toString('hex')}`;
}

/** A document the API accepted: what is stored (secrets replaced) and the secrets, sealed. */
export interface AcceptedDocument {
  document: Record<string, unknown>;
  secrets: Record<string, string> | null;
  catalog: CatalogDocument;
}

/**
 * Validates a document put through the API. `previousSecrets` are the current version's (a
 * provider given `api_key: "[stored]"` keeps its own); `sealer` is absent when
 * `TOLLGATE_SECRETS_KEY` is unset, and then a new secret is refused (409).
 */
export function acceptDocument(raw: unknown, previousSecrets: Readonly<Record<string, string>> | null, sealer: Sealer | undefined): AcceptedDocument {
  if (!isObject(raw) || !Array.isArray(raw.providers)) return { ...validate(raw, {}), document: isObject(raw) ? raw : {}, secrets: null };
  const secrets: Record<string, string> = {};
  const providers = raw.providers.map((provider: unknown, index) => {
    if (!isObject(provider) || !('api_key' in provider)) return provider;
    const path = `providers[${index}].api_key`;
    const secret = provider.api_key;
    const name = typeof provider.name === 'string' ? provider.name : '';
    if (typeof secret !== 'string' || secret === '') throw invalid(path, 'a non-empty string: the upstream secret, or "[stored]" to keep the stored one');
    if (typeof provider.type !== 'string' || !SECRET_TYPES.has(provider.type)) throw invalid(path, 'only providers of type openai, anthropic, gemini and azure take an api_key');
    if (provider.api_key_env !== undefined || provider.api_keys !== undefined || provider.entra !== undefined) throw invalid(path, 'give one of api_key, api_key_env, api_keys and entra');
    if (secret === STORED_SECRET) {
      const stored = previousSecrets?.[name];
      if (stored === undefined) throw invalid(path, `no secret is stored for provider "${name}": give its value`);
      secrets[name] = stored;
    } else {
      if (sealer === undefined) throw new GatewayError('conflict', { message: `${SECRETS_KEY_ENV} is not set: upstream secrets cannot be stored (set it to 32 random bytes in base64, or name an environment variable with api_key_env).` });
      secrets[name] = sealer.seal(secret, SECRET_PURPOSE);
    }
    return { ...provider, api_key: STORED_SECRET };
  });
  const document = { ...raw, providers };
  const catalog = validate(document, secrets).catalog;
  return { document, secrets: Object.keys(secrets).length === 0 ? null : secrets, catalog };
}

/**
 * A stored document as the gateway serves it: `[stored]` keys become their provider's
 * `storedKeyEnv` variable. Throws when it does not validate (never for a version the API wrote).
 */
export function servedCatalog(document: unknown, secrets: Readonly<Record<string, string>> | null): CatalogDocument {
  return validate(document, secrets ?? {}).catalog;
}

/** The secrets of a version, opened, by the environment variable each provider reads. */
export function openSecrets(secrets: Readonly<Record<string, string>> | null, sealer: Sealer | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [provider, sealed] of Object.entries(secrets ?? {})) {
    if (sealer === undefined) throw new Error(`provider ${provider} has a stored secret, and ${SECRETS_KEY_ENV} is not set`);
    env[storedKeyEnv(provider)] = sealer.open(sealed, SECRET_PURPOSE);
  }
  return env;
}

function validate(document: unknown, secrets: Readonly<Record<string, string>>): { catalog: CatalogDocument } {
  const withEnvNames = isObject(document) && Array.isArray(document.providers)
    ? {
        ...document,
        providers: document.providers.map((provider: unknown) => {
          if (!isObject(provider) || provider.api_key !== STORED_SECRET || typeof provider.name !== 'string' || secrets[provider.name] === undefined) return provider;
          const { api_key: _stored, ...rest } = provider;
          return { ...rest, api_key_env: storedKeyEnv(provider.name) };
        }),
      }
    : document;
  const result = catalogDocumentSchema.safeParse(withEnvNames);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw invalid(issue === undefined ? '' : formatPath(issue.path), issue?.message ?? 'invalid document');
  }
  const problem = catalogProblems(result.data)[0];
  if (problem !== undefined) throw invalid(problem.path, problem.message);
  return { catalog: result.data };
}

function invalid(path: string, message: string): GatewayError {
  return new GatewayError('invalid_request', { message: path === '' ? message : `${path}: ${message}`, ...(path === '' ? {} : { param: path }) });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What changed from one document to the next: names added, removed and changed; prices changed. */
export interface CatalogDiff {
  providers: { added: string[]; removed: string[]; changed: string[] };
  models: { added: string[]; removed: string[]; changed: string[] };
  /** Models in both whose `prices` differ. */
  prices_changed: string[];
}

export function diffCatalogs(before: unknown, after: unknown): CatalogDiff {
  const providers = compare(entries(before, 'providers', 'name'), entries(after, 'providers', 'name'));
  const beforeModels = entries(before, 'models', 'id');
  const afterModels = entries(after, 'models', 'id');
  const models = compare(beforeModels, afterModels);
  const pricesChanged = [...afterModels].filter(([id, model]) => beforeModels.has(id) && JSON.stringify(field(beforeModels.get(id), 'prices')) !== JSON.stringify(field(model, 'prices'))).map(([id]) => id);
  return { providers, models, prices_changed: pricesChanged };
}

function entries(document: unknown, list: 'providers' | 'models', key: 'name' | 'id'): Map<string, unknown> {
  const items = isObject(document) && Array.isArray(document[list]) ? (document[list] as unknown[]) : [];
  return new Map(items.flatMap((item) => (isObject(item) && typeof item[key] === 'string' ? [[item[key], item] as [string, unknown]] : [])));
}

function field(item: unknown, name: string): unknown {
  return isObject(item) ? item[name] : undefined;
}

function compare(before: Map<string, unknown>, after: Map<string, unknown>): { added: string[]; removed: string[]; changed: string[] } {
  return {
    added: [...after.keys()].filter((name) => !before.has(name)),
    removed: [...before.keys()].filter((name) => !after.has(name)),
    changed: [...after.keys()].filter((name) => before.has(name) && JSON.stringify(before.get(name)) !== JSON.stringify(after.get(name))),
  };
}
