import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/store.js';
import { createAccount, creditAccount, debitAccount, listAccounts, requireAccount } from './accounts.js';
import { AdminError } from './admin-error.js';
import { CLI_ACTOR } from './audit.js';

let directory: string;
let store: Store;

beforeEach(async () => {
  directory = mkdtempSync(join(tmpdir(), 'tollgate-admin-accounts-'));
  store = await openStore(`sqlite:${join(directory, 'tollgate.db')}`, { migrate: true });
});

afterEach(async () => {
  await store.close();
  rmSync(directory, { recursive: true, force: true });
});

async function rejection(promise: Promise<unknown>): Promise<AdminError> {
  const error: unknown = await promise.then(
    () => new Error('expected a rejection'),
    (reason: unknown) => reason,
  );
  if (!(error instanceof AdminError)) throw error;
  return error;
}

describe('createAccount', () => {
  it('creates an account with an exact opening balance and an acct_ id', async () => {
    const account = await createAccount(store, { name: ' acme ', balanceUsd: '12.345678901' }, CLI_ACTOR);
    expect(account.id).toMatch(/^acct_[0-9A-Za-z]{20}$/);
    expect(account.name).toBe('acme');
    expect(account.balanceNanos).toBe(12_345_678_901n);
    expect(account.reservedNanos).toBe(0n);
    expect(await store.findAccount('acme')).toEqual(account);
  });

  it('opens with a zero balance when none is given', async () => {
    expect((await createAccount(store, { name: 'zero' }, CLI_ACTOR)).balanceNanos).toBe(0n);
  });

  it('refuses a taken name as a conflict', async () => {
    await createAccount(store, { name: 'acme' }, CLI_ACTOR);
    const error = await rejection(createAccount(store, { name: 'acme' }, CLI_ACTOR));
    expect(error.kind).toBe('conflict');
    expect(error.message).toBe('an account named "acme" already exists');
    expect(await listAccounts(store)).toHaveLength(1);
  });

  it('reports a conflict also when another process inserts the name after our check', async () => {
    await createAccount(store, { name: 'acme' }, CLI_ACTOR);
    // The store as a racing process sees it: the name was free when looked up, taken at insert.
    const racing = new Proxy(store, {
      get: (target, property) =>
        property === 'findAccount' ? async () => undefined : (Reflect.get(target, property) as unknown),
    });
    const error = await rejection(createAccount(racing, { name: 'acme' }, CLI_ACTOR));
    expect(error.kind).toBe('conflict');
  });

  it.each([
    ['', /must not be empty/],
    ['   ', /must not be empty/],
    ['x'.repeat(101), /at most 100 characters/],
    ['bad\nname', /control characters/],
    ['acct_lookalike', /must not start with "acct_"/],
  ])('refuses the name %j', async (name, message) => {
    const error = await rejection(createAccount(store, { name }, CLI_ACTOR));
    expect(error.kind).toBe('invalid_input');
    expect(error.message).toMatch(message);
  });

  it.each(['-1', 'abc', '0.0000000001'])('refuses the balance %j and creates nothing', async (balanceUsd) => {
    const error = await rejection(createAccount(store, { name: 'acme', balanceUsd }, CLI_ACTOR));
    expect(error.message).toMatch(/^balance must be a non-negative USD amount/);
    expect(await listAccounts(store)).toEqual([]);
  });
});

describe('creditAccount', () => {
  it('adds to the balance through the ledger, found by name or id', async () => {
    const account = await createAccount(store, { name: 'acme', balanceUsd: '1' }, CLI_ACTOR);
    expect((await creditAccount(store, 'acme', '2.5', null, CLI_ACTOR)).balanceNanos).toBe(3_500_000_000n);
    expect((await creditAccount(store, account.id, '0.000000001', 'promo', CLI_ACTOR)).balanceNanos).toBe(3_500_000_001n);
    const credits = (await store.listLedger(account.id)).filter((entry) => entry.kind === 'credit');
    expect(credits.map((entry) => [entry.amountNanos, entry.note])).toEqual(
      expect.arrayContaining([
        [2_500_000_000n, null],
        [1n, 'promo'],
      ]),
    );
  });

  it('refuses an unknown account', async () => {
    const error = await rejection(creditAccount(store, 'nobody', '1', null, CLI_ACTOR));
    expect(error.kind).toBe('not_found');
    expect(error.message).toBe('no account with id or name "nobody"');
  });

  it.each(['0', '-1', 'abc', '1.0000000001', ''])('refuses the amount %j and leaves the balance alone', async (amount) => {
    await createAccount(store, { name: 'acme', balanceUsd: '1' }, CLI_ACTOR);
    const error = await rejection(creditAccount(store, 'acme', amount, null, CLI_ACTOR));
    expect(error.kind).toBe('invalid_input');
    expect(error.message).toMatch(/^amount must be/);
    expect((await requireAccount(store, 'acme')).balanceNanos).toBe(1_000_000_000n);
  });
});

describe('listAccounts and requireAccount', () => {
  it('lists every account', async () => {
    await createAccount(store, { name: 'a' }, CLI_ACTOR);
    await createAccount(store, { name: 'b' }, CLI_ACTOR);
    expect((await listAccounts(store)).map((account) => account.name).sort()).toEqual(['a', 'b']);
  });

  it('refuses an empty reference without asking the store for it', async () => {
    expect((await rejection(requireAccount(store, ' '))).kind).toBe('not_found');
  });
});

describe('debitAccount', () => {
  it('refuses a debit that only what quota slices hold could cover, and names what they hold', async () => {
    const account = await createAccount(store, { name: 'sliced', balanceUsd: '10' }, CLI_ACTOR);
    await store.grantSlice({ id: 'slice_one', accountId: account.id, owner: 'a-gateway', maxNanos: 4_000_000_000n, minNanos: 1n, headroom: 2, leaseUntil: new Date(Date.now() + 60_000) });
    const refused = await rejection(debitAccount(store, account.id, '7', null, CLI_ACTOR));
    expect(refused.message).toBe("a debit of 7 USD would take the balance below zero (available: 6 USD; 4 USD more is held by running gateways' quota slices until they go idle)");
    expect((await debitAccount(store, account.id, '6', null, CLI_ACTOR)).balanceNanos).toBe(4_000_000_000n);
  });
});
