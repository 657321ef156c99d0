/**
 * What the store's own suites start from: a real store on a fresh database of one engine (see
 * databases.ts), and accounts with a plain key made straight in it.
 */
import { randomUUID } from 'node:crypto';
import { openStore, type OpenStoreOptions } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, type TestDatabase } from './databases.js';

export interface TestStore {
  database: TestDatabase;
  store: Store;
  /** Closes the store and drops its database. */
  close(): Promise<void>;
}

/** A store opened with `options` on a fresh database of `engine`. */
export async function openTestStore(engine: 'sqlite' | 'postgres', options: OpenStoreOptions = {}): Promise<TestStore> {
  const database = await createTestDatabase(engine);
  const store = await openStore(database.url, options);
  return {
    database,
    store,
    close: async () => {
      await store.close();
      await database.drop();
    },
  };
}

/** An account holding `balanceNanos` and one key on it without limits, both with fresh ids. */
export async function newAccountWithKey(store: Store, balanceNanos: bigint, createdAt = new Date()): Promise<{ accountId: string; keyId: string }> {
  const accountId = `acct_${randomUUID().slice(0, 12)}`;
  await store.createAccount({ id: accountId, name: accountId, openingBalanceNanos: balanceNanos });
  const keyId = `key_${randomUUID().slice(0, 12)}`;
  await store.createKey({ id: keyId, accountId, name: null, prefix: keyId.slice(-10), hash: randomUUID(), models: null, requestsPerWindow: null, tokensPerMinute: null, expiresAt: null, disabled: false, createdAt });
  return { accountId, keyId };
}
