/**
 * The instance heartbeat: each running gateway refreshes its row, so any process can tell how many
 * instances are alive (and whether they share a limit store) from one read.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { InstanceRecord } from '../store.js';
import { toDate, toEpochMilliseconds, toFlag, toText } from './row-decoding.js';

export async function heartbeat(db: Kysely<Database>, instance: InstanceRecord): Promise<void> {
  const row = {
    id: instance.id,
    shared_limits: instance.sharedLimits ? 1 : 0,
    last_seen_at: toEpochMilliseconds(instance.lastSeenAt, 'lastSeenAt'),
  };
  await db
    .insertInto('instances')
    .values(row)
    .onConflict((conflict) => conflict.column('id').doUpdateSet({ shared_limits: row.shared_limits, last_seen_at: row.last_seen_at }))
    .execute();
}

/** Instances whose last heartbeat is at or after `since`, by id. */
export async function liveInstances(db: Kysely<Database>, since: Date): Promise<InstanceRecord[]> {
  const cutoff = toEpochMilliseconds(since, 'since');
  const rows = await db.selectFrom('instances').selectAll().where('last_seen_at', '>=', BigInt(cutoff)).orderBy('id', 'asc').execute();
  return rows.map((row) => ({
    id: toText(row.id, 'instances.id'),
    sharedLimits: toFlag(row.shared_limits, 'instances.shared_limits'),
    lastSeenAt: toDate(row.last_seen_at, 'instances.last_seen_at'),
  }));
}

export async function removeInstance(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('instances').where('id', '=', id).execute();
}
