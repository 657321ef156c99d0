/** What every admin route file is handed: the store, how to tell this process's /v1 key cache of a change, and the catalog. */
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Actor } from '../../admin/audit.js';
import type { CatalogDiff } from '../../admin/catalog-document.js';
import type { CatalogDocument, ConfigFile } from '../../config/schema.js';
import type { Catalog } from '../../routing/catalog.js';
import type { Router } from '../../routing/router.js';
import type { Store } from '../../store/store.js';
import type { AuthGuards } from '../auth-guards.js';
import { adminTokenOf } from './auth.js';

export type AdminApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, ZodTypeProvider>;

export interface AdminRouteDeps {
  store: Store;
  /** Failed admin authentications per address and lookups per process (auth-guards.ts). */
  authGuards: AuthGuards;
  /** Called after a change to accounts or keys, so this process's key cache forgets them at once. */
  accountsChanged: () => void;
  /** The catalog as loaded, the models as routed, and the router that knows their targets' health. */
  config: ConfigFile;
  /** Always the version served now (routing/live-catalog.ts). */
  catalog: Catalog;
  /** The runtime catalog's versions (server/catalog-runtime.ts). */
  catalogControl: CatalogControl;
  router: Router;
  now: () => number;
}

/** The audit actor of a request: its admin token. */
export function actorOf(request: FastifyRequest): Actor {
  return { adminTokenId: adminTokenOf(request).id };
}

/** What the admin API does with the catalog at runtime (docs/architecture.md, "The catalog at runtime"). */
export interface CatalogControl {
  /** `file`: managed as code, changes refused. */
  readonly source: 'database' | 'file';
  /** The version served now (null in file mode) and its document as stored (secrets as `[stored]`). */
  current(): { version: number | null; document: unknown; catalog: CatalogDocument };
  /** Validates and appends a new version, audited; this instance serves it at once. */
  put(raw: unknown, actor: { adminTokenId: string | null }, note: string | null): Promise<{ version: number; previous: number | null; diff: CatalogDiff }>;
  /** Appends a copy of version `id`, audited; undefined when there is no such version. */
  rollback(id: number, actor: { adminTokenId: string | null }): Promise<{ version: number; previous: number | null; diff: CatalogDiff } | undefined>;
}
