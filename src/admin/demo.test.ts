import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashKeySecret } from '../auth/key-secret.js';
import { openStore } from '../store/open-store.js';
import type { AccountStore, OperationsStore } from '../store/store.js';
import { createAccount } from './accounts.js';
import { CLI_ACTOR } from './audit.js';
import { DEMO_ACCOUNT_NAME, ensureDemoAccount } from './demo.js';

let directory: string;
let store: AccountStore & OperationsStore;

beforeEach(async () => {
  directory = mkdtempSync(join(tmpdir(), 'tollgate-admin-demo-'));
  store = await openStore(`sqlite:${join(directory, 'tollgate.db')}`, { migrate: true });
});

afterEach(async () => {
  await store.close();
  rmSync(directory, { recursive: true, force: true });
});

describe('ensureDemoAccount', () => {
  it('on an empty database creates the demo account with its balance and a working key', async () => {
    const demo = await ensureDemoAccount(store, { balanceUsd: '5' }, CLI_ACTOR);
    expect(demo).not.toBeNull();
    const found = await store.findKeyByHash(hashKeySecret(demo?.secret ?? ''));
    expect(found?.account).toMatchObject({ id: demo?.accountId, name: DEMO_ACCOUNT_NAME, balanceNanos: 5_000_000_000n });
    expect(found?.key.disabled).toBe(false);
  });

  it('never creates it twice', async () => {
    expect(await ensureDemoAccount(store, { balanceUsd: '5' }, CLI_ACTOR)).not.toBeNull();
    expect(await ensureDemoAccount(store, { balanceUsd: '5' }, CLI_ACTOR)).toBeNull();
    expect(await store.listAccounts()).toHaveLength(1);
    expect(await store.listKeys()).toHaveLength(1);
  });

  it('does nothing on a database that already has accounts', async () => {
    await createAccount(store, { name: 'acme' }, CLI_ACTOR);
    expect(await ensureDemoAccount(store, { balanceUsd: '5' }, CLI_ACTOR)).toBeNull();
    expect((await store.listAccounts()).map((account) => account.name)).toEqual(['acme']);
  });

  it('returns null, creating nothing more, when another process wins the race', async () => {
    // Two processes started at once: we looked before the winner inserted (no accounts, name
    // free), and our insert then meets the unique account name. Several connections to one file
    // inside one thread cannot model this (better-sqlite3 blocks the thread on the lock), so
    // the stale reads are replayed on the real store.
    const winner = await ensureDemoAccount(store, { balanceUsd: '5' }, CLI_ACTOR);
    const stale = new Proxy(store, {
      get: (target, property) => {
        if (property === 'listAccounts') return async () => [];
        if (property === 'findAccount') return async () => undefined;
        return Reflect.get(target, property) as unknown;
      },
    });
    expect(await ensureDemoAccount(stale, { balanceUsd: '5' }, CLI_ACTOR)).toBeNull();
    expect((await store.listAccounts()).map((account) => account.id)).toEqual([winner?.accountId]);
    expect(await store.listKeys()).toHaveLength(1);
  });
});
