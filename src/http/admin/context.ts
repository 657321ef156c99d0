/** What every admin route file is handed: the store and how to tell the /v1 authenticator. */
import type { FastifyInstance, RawServerDefault, FastifyBaseLogger, RawRequestDefaultExpression, RawReplyDefaultExpression } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Actor } from '../../admin/audit.js';
import type { Store } from '../../store/store.js';
import { adminTokenOf } from './auth.js';
import type { FastifyRequest } from 'fastify';

export type AdminApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, ZodTypeProvider>;

export interface AdminRouteDeps {
  store: Store;
  /** Called after a change to accounts, so this process's key cache forgets them at once. */
  accountsChanged: () => void;
}

/** The audit actor of a request: its admin token. */
export function actorOf(request: FastifyRequest): Actor {
  return { adminTokenId: adminTokenOf(request).id };
}
