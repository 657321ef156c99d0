/**
 * What the authenticator knows of keys changed through the admin services: a deleted or rotated
 * key is refused, and a key's budget is answered from the cache (no lookup per request) until a
 * change empties it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAccount } from '../admin/accounts.js';
import { CLI_ACTOR } from '../admin/audit.js';
import { createKey, deleteKey, rotateKey, updateKey } from '../admin/keys.js';
import { openStore } from '../store/open-store.js';
import type { AccountStore, OperationsStore } from '../store/store.js';
import { Authenticator } from './authenticator.js';

/** The real store, counting its lookups of keys by id or prefix. */
function countingFindKey(store: AccountStore & OperationsStore): { store: AccountStore & OperationsStore; lookups: () => number } {
  let lookups = 0;
  const counting = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'findKey') {
        return (reference: string) => {
          lookups += 1;
          return target.findKey(reference);
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: counting, lookups: () => lookups };
}

describe('Authenticator and key changes', () => {
  let folder: string;
  let store: AccountStore & OperationsStore;

  beforeEach(async () => {
    folder = mkdtempSync(join(tmpdir(), 'tollgate-auth-keys-'));
    store = await openStore(`sqlite:${join(folder, 'auth.db')}`);
    await createAccount(store, { name: 'acme', balanceUsd: '1' }, CLI_ACTOR);
  });
  afterEach(async () => {
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('refuses a deleted key, and the old secret of a rotated one, once the cache is told', async () => {
    const authenticator = new Authenticator({ store });
    const kept = await createKey(store, { accountRef: 'acme' }, CLI_ACTOR);
    const gone = await createKey(store, { accountRef: 'acme' }, CLI_ACTOR);
    expect(await authenticator.authenticate(`Bearer ${kept.secret}`)).not.toBeNull();
    expect(await authenticator.authenticate(`Bearer ${gone.secret}`)).not.toBeNull();
    const rotated = await rotateKey(store, kept.key.id, CLI_ACTOR);
    await deleteKey(store, gone.key.id, CLI_ACTOR);
    authenticator.invalidate();
    expect(await authenticator.authenticate(`Bearer ${kept.secret}`)).toBeNull();
    expect((await authenticator.authenticate(`Bearer ${rotated.secret}`))?.key.id).toBe(kept.key.id);
    expect(await authenticator.authenticate(`Bearer ${gone.secret}`)).toBeNull();
  });

  it("answers an authenticated key's budget from its cache until a change empties it", async () => {
    const counting = countingFindKey(store);
    const authenticator = new Authenticator({ store: counting.store });
    const { key, secret } = await createKey(store, { accountRef: 'acme', budget: { limitUsd: '2', period: 'week' } }, CLI_ACTOR);
    expect(await authenticator.authenticate(`Bearer ${secret}`)).not.toBeNull();
    expect(await authenticator.keyBudget(key.id)).toEqual({ limitNanos: 2_000_000_000n, period: 'week' });
    expect(counting.lookups()).toBe(0);

    await updateKey(store, key.id, { budget: { limitUsd: '3', period: 'month' } }, CLI_ACTOR);
    // Still the cached budget: the change has not been announced to this cache.
    expect((await authenticator.keyBudget(key.id))?.period).toBe('week');
    authenticator.invalidate();
    // Not cached any more: read from the store.
    expect(await authenticator.keyBudget(key.id)).toEqual({ limitNanos: 3_000_000_000n, period: 'month' });
    expect(counting.lookups()).toBe(1);
    await updateKey(store, key.id, { budget: null }, CLI_ACTOR);
    expect(await authenticator.keyBudget(key.id)).toBeUndefined();
  });
});
