import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAccount } from '../admin/accounts.js';
import { createKey, setKeyDisabled } from '../admin/keys.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/store.js';
import { Authenticator } from './authenticator.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The real store, answering key lookups `delayMs` after reading them (a busy database). */
function slowLookups(store: Store, delayMs: number): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'findKeyByHash') {
        return async (hash: string) => {
          const row = await target.findKeyByHash(hash);
          await sleep(delayMs);
          return row;
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('Authenticator', () => {
  let folder: string;
  let store: Store;

  beforeEach(async () => {
    folder = mkdtempSync(join(tmpdir(), 'tollgate-auth-'));
    store = await openStore(`sqlite:${join(folder, 'auth.db')}`);
  });
  afterEach(async () => {
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('accepts a live key, refuses malformed headers, unknown, disabled and expired keys', async () => {
    const account = await createAccount(store, { name: 'acme', balanceUsd: '1' });
    const { key, secret } = await createKey(store, { accountRef: account.id, expiresAt: new Date(Date.now() + 60_000) });
    let now = Date.now();
    const authenticator = new Authenticator({ store, now: () => now });
    expect((await authenticator.authenticate(`Bearer ${secret}`))?.key.id).toBe(key.id);
    for (const header of [undefined, '', secret, `Basic ${secret}`, 'Bearer sk-tg-unknown', `Bearer ${secret}x`]) {
      expect(await authenticator.authenticate(header)).toBeNull();
    }
    now += 120_000;
    expect(await authenticator.authenticate(`Bearer ${secret}`)).toBeNull();
    now -= 120_000;
    await setKeyDisabled(store, key.id, true);
    authenticator.invalidate();
    expect(await authenticator.authenticate(`Bearer ${secret}`)).toBeNull();
  });

  it('a lookup that raced with an invalidation is not cached: a just-disabled key is refused next time', async () => {
    const account = await createAccount(store, { name: 'acme', balanceUsd: '1' });
    const { key, secret } = await createKey(store, { accountRef: account.id });
    const authenticator = new Authenticator({ store: slowLookups(store, 100) });
    const first = authenticator.authenticate(`Bearer ${secret}`);
    await sleep(20);
    await setKeyDisabled(store, key.id, true);
    authenticator.invalidate();
    expect(await first).not.toBeNull(); // it started before the disable
    expect(await authenticator.authenticate(`Bearer ${secret}`)).toBeNull();
  });

  it('a flood of unknown tokens does not evict the keys that work', async () => {
    const account = await createAccount(store, { name: 'acme', balanceUsd: '1' });
    const { secret } = await createKey(store, { accountRef: account.id });
    let lookups = 0;
    const counting = new Proxy(store, {
      get(target, property, receiver) {
        if (property === 'findKeyByHash') {
          return (hash: string) => {
            lookups += 1;
            return target.findKeyByHash(hash);
          };
        }
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const authenticator = new Authenticator({ store: counting, maxEntries: 10 });
    await authenticator.authenticate(`Bearer ${secret}`);
    for (let i = 0; i < 30; i++) await authenticator.authenticate(`Bearer sk-tg-bad${i}`);
    const before = lookups;
    expect(await authenticator.authenticate(`Bearer ${secret}`)).not.toBeNull();
    expect(lookups).toBe(before);
  });
});
