/**
 * What differs between SQLite and PostgreSQL, behind one interface: the store class (kysely-store.ts
 * and the port files it is built from) runs every query through an Engine and never asks which one
 * it has. Each engine is built in its own folder (sqlite/sqlite-engine.ts, postgres/postgres-engine.ts),
 * and open-store.ts picks one from the database URL.
 *
 * An engine decides how the request path's writes are batched: holds' opens, settles and checkpoints
 * (group-committed), stored responses' saves and request-log batches; how a transaction begins; how
 * migrations are applied safely; and what closing waits for.
 */
import type { Kysely } from 'kysely';
import type { HoldOperation } from './hold-operations.js';
import type { Database, StoreEngine } from './schema.js';
import type { RequestLogEntry, StoredResponse } from './store.js';

/** SQLite's file name of a private in-memory database (`sqlite::memory:`, for tests). */
export const SQLITE_MEMORY_PATH = ':memory:';

/** Runs `work` in one database transaction (engine-specific: SQLite takes the write lock up front). */
export type Transact = <T>(work: (transaction: Kysely<Database>) => Promise<T>) => Promise<T>;

/** Where the request path's hold operations go: a group commit that resolves each once it is durable. */
export interface HoldQueue {
  /** Whether the operation took effect (a hold opened, a hold settled; a checkpoint is always true). */
  submit(operation: HoldOperation): Promise<boolean>;
}

export interface Engine {
  /** `sqlite` or `postgres`: what `Store.engine` reports. */
  readonly name: StoreEngine;
  readonly db: Kysely<Database>;
  readonly transact: Transact;
  /** Opens, settles and checkpoints of many requests, written together. */
  readonly holds: HoldQueue;
  /** Applies pending migrations in the engine's safe way. */
  migrate(): Promise<void>;
  /** Keeps a response (checked and encoded first, so a bad one fails its own call only). */
  saveResponse(response: StoredResponse): Promise<void>;
  /** Appends a request-log batch in one statement set. */
  appendRequestLog(entries: readonly RequestLogEntry[]): Promise<void>;
  /** Writes what is queued (durably), then releases the connections and anything else it started. */
  close(): Promise<void>;
}

/** What every engine is told when it is opened. */
export interface EngineOptions {
  /** Told the size of every committed batch of hold operations (metrics, tests). */
  onHoldCommit?: (operations: number) => void;
}
