/**
 * Prompt-cache writes (Anthropic's `cache_creation_input_tokens`), billed at the model's
 * `cache_write` price, get their own ledger count beside the cached reads. Part of
 * `input_tokens`, like `cached_input_tokens`; 0 on every earlier row. One `add column` with a
 * default, the same on both engines.
 */
import type { Kysely, Migration } from 'kysely';

export function cacheWriteMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('ledger')
        .addColumn('cache_write_input_tokens', 'integer', (column) => column.notNull().defaultTo(0))
        .execute();
    },
  };
}
