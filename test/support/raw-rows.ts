/**
 * Reads rows of a test database that the store has no port for (a hold's row, its slice), with
 * the engine's own driver: `?` placeholders, bigint columns as bigint on both engines.
 */
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import type { TestDatabase } from './databases.js';

export async function rawRows(database: TestDatabase, text: string, parameters: readonly unknown[] = []): Promise<Array<Record<string, unknown>>> {
  if (database.engine === 'sqlite') {
    const connection = new BetterSqlite3(database.url.slice('sqlite:'.length), { readonly: true });
    try {
      return connection.prepare(text).safeIntegers().all(...parameters) as Array<Record<string, unknown>>;
    } finally {
      connection.close();
    }
  }
  let index = 0;
  const numbered = text.replace(/\?/g, () => `$${(index += 1)}`);
  const client = new pg.Client({ connectionString: database.url, types: { getTypeParser: (id: number, format?: string) => (id === 20 ? (value: string) => BigInt(value) : pg.types.getTypeParser(id, format === 'binary' ? 'binary' : 'text')) } as pg.CustomTypesConfig });
  await client.connect();
  try {
    return (await client.query(numbered, [...parameters])).rows as Array<Record<string, unknown>>;
  } finally {
    await client.end();
  }
}
