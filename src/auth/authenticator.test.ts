import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAccount } from '../admin/accounts.js';
import { CLI_ACTOR } from '../admin/audit.js';
import { createKey, setKeyDisabled } from '../admin/keys.js';
import { openStore } from '../store/open-store.js';
import type { AccountStore, OperationsStore } from '../store/store.js';
import { Authenticator, type LookupGuard } from './authenticator.js';
import { displayPrefix, generateKeySecret, hashKeySecret, newId } from './key-secret.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The real store, answering key lookups `delayMs` after reading them (a busy database). */
function slowLookups(store: AccountStore & OperationsStore, delayMs: number): AccountStore & OperationsStore {
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

/** The real store, counting its key lookups. */
function countingLookups(store: AccountStore & OperationsStore): { store: AccountStore & OperationsStore; lookups: () => number } {
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
  return { store: counting, lookups: () => lookups };
}

describe('Authenticator', () => {
  let folder: string;
  let store: AccountStore & OperationsStore;

  beforeEach(async () => {
    folder = mkdtempSync(join(tmpdir(), 'tollgate-auth-'));
    store = await openStore(`sqlite:${join(folder, 'auth.db')}`);
  });
  afterEach(async () => {
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('accepts a live key, refuses malformed headers, unknown, disabled and expired keys', async () => {
    const account = await createAccount(store, { name: 'acme', balanceUsd: '1' }, CLI_ACTOR);
    const { key, secret } = await createKey(store, { accountRef: account.id, expiresAt: new Date(Date.now() + 60_000) }, CLI_ACTOR);
    let now = Date.now();
    const authenticator = new Authenticator({ store, now: () => now });
    expect((await authenticator.authenticate(`Bearer ${secret}`))?.key.id).toBe(key.id);
    for (const header of [undefined, '', secret, `Basic ${secret}`, 'Bearer sk-tg-unknown', `Bearer ${secret}x`]) {
      expect(await authenticator.authenticate(header)).toBeNull();
    }
    now += 120_000;
    expect(await authenticator.authenticate(`Bearer ${secret}`)).toBeNull();
    now -= 120_000;
    await setKeyDisabled(store, key.id, true, CLI_ACTOR);
    authenticator.invalidate();
    expect(await authenticator.authenticate(`Bearer ${secret}`)).toBeNull();
  });

  it('a lookup that raced with an invalidation is not cached: a just-disabled key is refused next time', async () => {
    const account = await createAccount(store, { name: 'acme', balanceUsd: '1' }, CLI_ACTOR);
    const { key, secret } = await createKey(store, { accountRef: account.id }, CLI_ACTOR);
    const authenticator = new Authenticator({ store: slowLookups(store, 100) });
    const first = authenticator.authenticate(`Bearer ${secret}`);
    await sleep(20);
    await setKeyDisabled(store, key.id, true, CLI_ACTOR);
    authenticator.invalidate();
    expect(await first).not.toBeNull(); // it started before the disable
    expect(await authenticator.authenticate(`Bearer ${secret}`)).toBeNull();
  });

  it('a flood of unknown tokens does not evict the keys that work', async () => {
    const account = await createAccount(store, { name: 'acme', balanceUsd: '1' }, CLI_ACTOR);
    const { secret } = await createKey(store, { accountRef: account.id }, CLI_ACTOR);
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

  it('remembers an unknown token briefly: a repeated bad key costs one lookup per TTL', async () => {
    const counted = countingLookups(store);
    let now = Date.now();
    const authenticator = new Authenticator({ store: counted.store, now: () => now, negativeTtlMs: 10_000 });
    for (let i = 0; i < 20; i++) expect(await authenticator.authenticate('Bearer sk-tg-repeated')).toBeNull();
    expect(counted.lookups()).toBe(1);
    now += 10_001;
    expect(await authenticator.authenticate('Bearer sk-tg-repeated')).toBeNull();
    expect(counted.lookups()).toBe(2);
  });

  it('never holds more unknown tokens than its cap, dropping the least recently seen first', async () => {
    const counted = countingLookups(store);
    const authenticator = new Authenticator({ store: counted.store, maxUnknownTokens: 10 });
    for (let i = 0; i < 100; i++) {
      expect(await authenticator.authenticate(`Bearer sk-tg-flood${i}`)).toBeNull();
      expect(authenticator.unknownTokenCount).toBeLessThanOrEqual(10);
    }
    expect(authenticator.unknownTokenCount).toBe(10);
    expect(counted.lookups()).toBe(100);
    // The ten most recent are remembered; the first was dropped.
    for (let i = 90; i < 100; i++) await authenticator.authenticate(`Bearer sk-tg-flood${i}`);
    expect(counted.lookups()).toBe(100);
    await authenticator.authenticate('Bearer sk-tg-flood0');
    expect(counted.lookups()).toBe(101);
    expect(authenticator.unknownTokenCount).toBe(10);
  });

  it('a key created in another process after its token was cached as unknown works once the change is seen', async () => {
    const account = await createAccount(store, { name: 'acme', balanceUsd: '1' }, CLI_ACTOR);
    const secret = generateKeySecret();
    const authenticator = new Authenticator({ store });
    await authenticator.checkRevision();
    expect(await authenticator.authenticate(`Bearer ${secret}`)).toBeNull();

    // Another process: its own connection to the same database file.
    const other = await openStore(`sqlite:${join(folder, 'auth.db')}`);
    try {
      await other.createKey({
        id: newId('key'),
        accountId: account.id,
        name: null,
        prefix: displayPrefix(secret),
        hash: hashKeySecret(secret),
        models: null,
        requestsPerWindow: null,
        tokensPerMinute: null,
        expiresAt: null,
        disabled: false,
        createdAt: new Date(),
      });
    } finally {
      await other.close();
    }
    // Still the cached answer until the revision is checked (what the gateway does every 500 ms) ...
    expect(await authenticator.authenticate(`Bearer ${secret}`)).toBeNull();
    await authenticator.checkRevision();
    // ... then the key works.
    expect((await authenticator.authenticate(`Bearer ${secret}`))?.account.id).toBe(account.id);
  });

  it('asks its guard before every lookup and reports every failure, never for a cached usable key', async () => {
    const account = await createAccount(store, { name: 'acme', balanceUsd: '1' }, CLI_ACTOR);
    const { key, secret } = await createKey(store, { accountRef: account.id }, CLI_ACTOR);
    const calls: string[] = [];
    const guard: LookupGuard = {
      beforeLookup: async () => {
        calls.push('lookup');
      },
      failed: async () => {
        calls.push('failed');
      },
    };
    const authenticator = new Authenticator({ store });
    // A usable key: one lookup, no failure; then from the cache, without the guard.
    expect(await authenticator.authenticate(`Bearer ${secret}`, guard)).not.toBeNull();
    expect(await authenticator.authenticate(`Bearer ${secret}`, guard)).not.toBeNull();
    expect(calls).toEqual(['lookup']);
    // Unknown: looked up once, then known to be unknown; each is a failure.
    expect(await authenticator.authenticate('Bearer sk-tg-nope', guard)).toBeNull();
    expect(await authenticator.authenticate('Bearer sk-tg-nope', guard)).toBeNull();
    expect(calls).toEqual(['lookup', 'lookup', 'failed', 'failed']);
    // A disabled key: looked up once, then a cached failure without a lookup.
    await setKeyDisabled(store, key.id, true, CLI_ACTOR);
    authenticator.invalidate();
    expect(await authenticator.authenticate(`Bearer ${secret}`, guard)).toBeNull();
    expect(await authenticator.authenticate(`Bearer ${secret}`, guard)).toBeNull();
    // Malformed headers need no lookup and do not reach the guard.
    expect(await authenticator.authenticate('Basic abc', guard)).toBeNull();
    expect(calls).toEqual(['lookup', 'lookup', 'failed', 'failed', 'lookup', 'failed', 'failed']);
    // A guard that refuses the lookup stops it; one that refuses the failure answers for it.
    const counted = countingLookups(store);
    const refusing = new Authenticator({ store: counted.store });
    const refusal = new Error('refused');
    await expect(refusing.authenticate('Bearer sk-tg-other', { beforeLookup: () => Promise.reject(refusal), failed: async () => {} })).rejects.toBe(refusal);
    expect(counted.lookups()).toBe(0);
    await expect(refusing.authenticate('Bearer sk-tg-other', { beforeLookup: async () => {}, failed: () => Promise.reject(refusal) })).rejects.toBe(refusal);
    expect(counted.lookups()).toBe(1);
  });

  it('shares one lookup among requests that arrive together with a key not cached yet: one guard call, one query', async () => {
    const account = await createAccount(store, { name: 'acme', balanceUsd: '1' }, CLI_ACTOR);
    const { secret } = await createKey(store, { accountRef: account.id }, CLI_ACTOR);
    const counted = countingLookups(slowLookups(store, 50));
    const calls: string[] = [];
    const guard: LookupGuard = { beforeLookup: async () => void calls.push('lookup'), failed: async () => void calls.push('failed') };
    const authenticator = new Authenticator({ store: counted.store });
    const found = await Promise.all(Array.from({ length: 60 }, () => authenticator.authenticate(`Bearer ${secret}`, guard)));
    expect(found.every((entry) => entry !== null)).toBe(true);
    expect(counted.lookups()).toBe(1);
    expect(calls).toEqual(['lookup']);
  });
});
