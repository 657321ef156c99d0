/**
 * The catalog at runtime (docs/architecture.md, "The catalog at runtime"): builds the served
 * catalog from the newest version in the database (or the file, in file mode), and swaps a new
 * version in when one appears, on this instance at once after a change made here, on the others
 * at their next poll of the catalog's revision (the newest version's id). A swap is one
 * synchronous step: the live catalog's map and the billing prices change together, and a request
 * keeps the model entry (targets, providers) and the prices it started with to its end. The
 * router stays the same, so the health of a target (`provider/model`) carries over a change.
 * Providers of a version no longer served are closed after a grace period (their calls in flight
 * finish first), or at shutdown.
 */
import type { Logger } from 'pino';
import { isUniqueViolation } from '../admin/unique-violation.js';
import { acceptDocument, diffCatalogs, openSecrets, servedCatalog } from '../admin/catalog-document.js';
import type { BillingService } from '../billing/billing-service.js';
import { inputBoundsFromConfig } from '../billing/input-bounds.js';
import { pricesFromConfig } from '../billing/prices.js';
import { ENV, type Env } from '../config/env.js';
import type { CatalogDocument, ConfigFile } from '../config/schema.js';
import { GatewayError } from '../errors/gateway-error.js';
import { Sealer } from '../lib/seal.js';
import type { Provider } from '../providers/provider.js';
import { closeProviders, createProviders } from '../providers/registry.js';
import { buildCatalog, type Catalog } from '../routing/catalog.js';
import { LiveCatalog } from '../routing/live-catalog.js';
import type { CatalogVersionRecord, Store } from '../store/store.js';
import type { CatalogControl } from '../http/admin/context.js';

/** A version built: its providers and catalog, ready to swap in. */
export interface BuiltVersion {
  version: number | null;
  document: unknown;
  secrets: Record<string, string> | null;
  catalog: CatalogDocument;
  providers: Map<string, Provider>;
  routed: Catalog;
}

export interface CatalogRuntimeOptions {
  config: ConfigFile;
  store: Store;
  env: Env;
  logger: Logger;
  /** How long a retired version's providers stay open for the calls still using them. */
  retireMs: number;
  /** Told of each version built (the upstream key pools' watchers). */
  onBuilt?: (built: BuiltVersion) => void;
}

export interface CatalogRuntime extends CatalogControl {
  readonly live: LiveCatalog;
  /** Builds the first version (seeding the database from the file when it has none). */
  start(billing: BillingService): Promise<void>;
  /** Swaps in the newest version when it is not the one served. */
  checkRevision(): Promise<void>;
  close(): Promise<void>;
}

export function createCatalogRuntime(options: CatalogRuntimeOptions): CatalogRuntime {
  const { config, store, logger } = options;
  const source = config.catalog.source;
  const sealer = secretsSealer(options.env);
  const fileDocument = { providers: config.providers, models: config.models };
  let served = build({ version: null, document: fileDocument, secrets: null });
  const live = new LiveCatalog(served.routed);
  const retired = new Set<ReadonlyMap<string, Provider>>();
  const timers = new Set<NodeJS.Timeout>();
  let billing: BillingService | undefined;
  let closed = false;
  // One check or change at a time, so that versions are swapped in their order.
  let queue: Promise<unknown> = Promise.resolve();

  function build(record: Pick<CatalogVersionRecord, 'document' | 'secrets'> & { version: number | null }): BuiltVersion {
    const catalog = servedCatalog(record.document, record.secrets);
    const providers = createProviders(catalog.providers, { ...options.env, ...openSecrets(record.secrets, sealer) });
    try {
      return { ...record, catalog, providers, routed: buildCatalog(catalog.models, providers) };
    } catch (error) {
      void closeProviders(providers);
      throw error;
    }
  }

  function swapIn(next: BuiltVersion): void {
    const previous = served;
    served = next;
    live.swap(next.routed);
    billing?.usePrices(pricesFromConfig(next.catalog.models), inputBoundsFromConfig(next.catalog));
    options.onBuilt?.(next);
    retired.add(previous.providers);
    const timer = setTimeout(() => {
      timers.delete(timer);
      retired.delete(previous.providers);
      closeProviders(previous.providers).catch((error: unknown) => logger.warn({ err: error }, 'closing a retired catalog version\'s providers failed'));
    }, options.retireMs);
    timer.unref();
    timers.add(timer);
    logger.info({ catalogVersion: next.version }, 'catalog version swapped in');
  }

  async function loadNewest(): Promise<void> {
    const newest = await store.latestCatalogVersionId();
    if (newest === null || newest === served.version) return;
    const record = await store.findCatalogVersion(newest);
    // A check that was running when the gateway closed builds nothing more.
    if (record === undefined || closed) return;
    swapIn(build({ version: record.id, document: record.document, secrets: record.secrets }));
  }

  function serially<T>(work: () => Promise<T>): Promise<T> {
    const run = queue.then(work, work);
    queue = run.catch(() => undefined);
    return run;
  }

  function requireDatabase(): void {
    if (source === 'file') throw new GatewayError('conflict', { message: 'The catalog is managed as code (catalog.source: file in the config file): change the file and restart, or set catalog.source: database.' });
  }

  async function append(document: Record<string, unknown> | unknown, secrets: Record<string, string> | null, action: string, actor: { adminTokenId: string | null }, note: string | null, extra: Record<string, unknown>) {
    return serially(async () => {
      await loadNewest();
      const previous = served;
      const diff = diffCatalogs(previous.document, document);
      const record = await store
        .appendCatalogVersion({ document, secrets, note, adminTokenId: actor.adminTokenId, audit: { action, before: { version: previous.version }, after: { ...extra, diff } } })
        .catch((error: unknown) => {
          // Another instance appended the same version id first.
          if (isUniqueViolation(error)) throw new GatewayError('conflict', { message: 'The catalog was changed by another instance at the same moment: read it again and retry.' });
          throw error;
        });
      swapIn(build({ version: record.id, document: record.document, secrets: record.secrets }));
      return { version: record.id, previous: previous.version, diff };
    });
  }

  return {
    source,
    live,
    current: () => ({ version: served.version, document: served.document, catalog: served.catalog }),
    async start(billingService) {
      billing = billingService;
      if (source === 'file') {
        options.onBuilt?.(served);
        return;
      }
      await store.seedCatalogVersion({ document: fileDocument, secrets: null, note: 'seeded from the config file', adminTokenId: null });
      await loadNewest();
    },
    checkRevision: () => (source === 'file' ? Promise.resolve() : serially(loadNewest)),
    async put(raw, actor, note) {
      requireDatabase();
      const accepted = acceptDocument(raw, served.secrets, sealer);
      // Built once before it is stored, so that a document the providers refuse is never a version.
      await closeProviders(build({ version: null, document: accepted.document, secrets: accepted.secrets }).providers);
      return append(accepted.document, accepted.secrets, 'catalog.put', actor, note, {});
    },
    async rollback(id, actor) {
      requireDatabase();
      const record = await store.findCatalogVersion(id);
      if (record === undefined) return undefined;
      return append(record.document, record.secrets, 'catalog.rollback', actor, `rollback to version ${id}`, { rolled_back_to: id });
    },
    async close() {
      closed = true;
      await queue;
      for (const timer of timers) clearTimeout(timer);
      await Promise.all([...retired].map((providers) => closeProviders(providers)));
      await closeProviders(served.providers);
    },
  };
}

/** The sealer of upstream secrets: `TOLLGATE_SECRETS_KEY`, or none (secrets then cannot be entered). */
function secretsSealer(env: Env): Sealer | undefined {
  const key = env[ENV.secretsKey];
  if (key === undefined || key === '') return undefined;
  try {
    return Sealer.fromBase64(key);
  } catch (error) {
    throw new Error(`${ENV.secretsKey}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
