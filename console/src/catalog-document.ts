/**
 * The catalog document the console edits (docs/architecture.md, "The catalog at runtime"). Each
 * change reads the document served now, changes it here and puts it back whole with a note: a new
 * version. A change keeps every field of an entry that the console does not edit; the server's
 * schema is the judge of the result, and its 400 names the field at fault.
 */
import { api, ApiError } from './api';
import type { CatalogChange, CatalogDiff, CatalogDocument } from './types';

/** What the document shows in place of an upstream secret the server keeps sealed. */
export const STORED_SECRET = '[stored]';

export type Entry = Record<string, unknown>;

/** The document of an export or a version, with its two lists (empty when absent). */
export function documentOf(raw: Record<string, unknown>): CatalogDocument {
  return { ...raw, providers: list(raw.providers), models: list(raw.models) };
}

function list(value: unknown): Entry[] {
  return Array.isArray(value) ? (value as Entry[]) : [];
}

/** GET the document served now, apply `change`, PUT the result with `note`. */
export async function changeCatalog(note: string, change: (document: CatalogDocument) => CatalogDocument): Promise<CatalogChange> {
  const current = await api.catalogDocument();
  const next = change(documentOf(current.document));
  try {
    return await api.putCatalogDocument(next, note);
  } catch (error) {
    throw error instanceof ApiError ? namingEntry(error, next) : error;
  }
}

/** The server's `models[3].prices.input: …`, with which model (or provider) that is. */
function namingEntry(error: ApiError, document: CatalogDocument): ApiError {
  const match = /^(models|providers)\[(\d+)\]/.exec(error.param ?? '');
  if (match === null) return error;
  const isModel = match[1] === 'models';
  const name = (isModel ? document.models : document.providers)[Number(match[2])]?.[isModel ? 'id' : 'name'];
  if (typeof name !== 'string') return error;
  return new ApiError(error.status, `${error.message} (${isModel ? 'model' : 'provider'} “${name}”)`, error.code, error.param);
}

/**
 * The field of an entry that the server's 400 names, within the entry (`prices.input`,
 * `targets[0].model`), for the form to mark; null for any other error.
 */
export function faultIn(error: unknown): string | null {
  if (!(error instanceof ApiError) || error.param === null) return null;
  return /^(?:models|providers)\[\d+\]\.(.+)$/.exec(error.param)?.[1] ?? null;
}

export function providerNames(document: CatalogDocument): string[] {
  return document.providers.flatMap((provider) => (typeof provider.name === 'string' ? [provider.name] : []));
}

export function findModel(document: CatalogDocument, id: string): Entry | undefined {
  return document.models.find((model) => model.id === id);
}

export function addProvider(document: CatalogDocument, provider: Entry): CatalogDocument {
  if (document.providers.some((entry) => entry.name === provider.name)) throw new Error(`A provider named “${String(provider.name)}” already exists.`);
  return { ...document, providers: [...document.providers, provider] };
}

/** The server refuses it while a model's target names it (its 400 says which). */
export function removeProvider(document: CatalogDocument, name: string): CatalogDocument {
  return { ...document, providers: document.providers.filter((entry) => entry.name !== name) };
}

/** Adds `model` (`replacing` null), or puts it in the place of the model `replacing`. */
export function saveModel(document: CatalogDocument, model: Entry, replacing: string | null): CatalogDocument {
  const clash = document.models.some((entry) => entry.id === model.id && entry.id !== replacing);
  if (clash) throw new Error(`A model named “${String(model.id)}” already exists.`);
  if (replacing === null) return { ...document, models: [...document.models, model] };
  if (findModel(document, replacing) === undefined) throw new Error(`Model “${replacing}” is no longer in the catalog: it was removed meanwhile.`);
  return { ...document, models: document.models.map((entry) => (entry.id === replacing ? model : entry)) };
}

/** Enabled is the schema's default, so enabling leaves the field out. */
export function setModelEnabled(document: CatalogDocument, id: string, enabled: boolean): CatalogDocument {
  if (findModel(document, id) === undefined) throw new Error(`Model “${id}” is no longer in the catalog.`);
  return {
    ...document,
    models: document.models.map((entry) => {
      if (entry.id !== id) return entry;
      const { enabled: _enabled, ...rest } = entry;
      return enabled ? rest : { ...rest, enabled: false };
    }),
  };
}

export function removeModel(document: CatalogDocument, id: string): CatalogDocument {
  return { ...document, models: document.models.filter((entry) => entry.id !== id) };
}

/** Where a provider's upstream credential comes from, in words (never a secret). */
export function keySource(provider: Entry): string {
  if (provider.api_key === STORED_SECRET) return 'stored';
  if (typeof provider.api_key_env === 'string') return `environment variable ${provider.api_key_env}`;
  if (Array.isArray(provider.api_keys)) return `pool of ${provider.api_keys.length} key${provider.api_keys.length === 1 ? '' : 's'}`;
  if (provider.entra !== undefined) return 'Entra ID';
  if (provider.type === 'vertex' || provider.type === 'bedrock') return 'cloud credentials';
  return 'none';
}

/** The upstream's address: `base_url`, Azure's `endpoint`, or a vendor's own. */
export function providerAddress(provider: Entry): string {
  if (typeof provider.base_url === 'string') return provider.base_url;
  if (typeof provider.endpoint === 'string') return provider.endpoint;
  if (typeof provider.vendor === 'string') return `${provider.vendor}'s address`;
  return '—';
}

/** What a version changed, one line per kind of change; empty when nothing did. */
export function diffLines(diff: CatalogDiff): string[] {
  const lines: string[] = [];
  const add = (label: string, names: string[]): void => {
    if (names.length > 0) lines.push(`${label}: ${names.join(', ')}`);
  };
  add('Providers added', diff.providers.added);
  add('Providers removed', diff.providers.removed);
  add('Providers changed', diff.providers.changed);
  add('Models added', diff.models.added);
  add('Models removed', diff.models.removed);
  add('Models changed', diff.models.changed);
  add('Prices changed', diff.prices_changed);
  return lines;
}
