/**
 * The audit row and its change share one transaction: a change that fails or changes nothing
 * leaves no row, and a row's before/after are what the transaction saw. On both engines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, engines, type TestDatabase } from '../../../test/support/databases.js';
import { openStore } from '../open-store.js';
import type { AccountRecord, AuditDraft, Store } from '../store.js';

const draft = (action: string): AuditDraft<AccountRecord> => ({
  adminTokenId: 'adm_test',
  action,
  view: (account) => ({ name: account.name, balance: account.balanceNanos.toString(), disabled: account.disabled }),
});

describe.each(engines)('audited changes on %s', (engine) => {
  let database: TestDatabase;
  let store: Store;

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    store = await openStore(database.url);
  });

  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  const rowsFor = async (id: string) => (await store.listAudit({ targetType: 'account', targetId: id }, { limit: 100 })).rows;

  it('writes the row with the change, before and after read inside the transaction', async () => {
    await store.createAccount({ id: `acct_a_${engine}`, name: `a-${engine}`, openingBalanceNanos: 5n }, draft('create'));
    await store.debit(`acct_a_${engine}`, 2n, 'fee', { ...draft('debit'), details: { note: 'fee' } });
    // Newest first.
    const rows = (await rowsFor(`acct_a_${engine}`)).reverse();
    expect(rows.map((row) => [row.action, row.adminTokenId, row.before, row.after])).toEqual([
      ['create', 'adm_test', null, { name: `a-${engine}`, balance: '5', disabled: false }],
      ['debit', 'adm_test', { name: `a-${engine}`, balance: '5', disabled: false }, { name: `a-${engine}`, balance: '3', disabled: false, note: 'fee' }],
    ]);
  });

  it('writes no row when the change fails or changes nothing', async () => {
    await store.createAccount({ id: `acct_b_${engine}`, name: `b-${engine}`, openingBalanceNanos: 1n }, draft('create'));
    // Same id again: the insert fails, and the audit row of its transaction goes with it.
    await expect(store.createAccount({ id: `acct_b_${engine}`, name: `b2-${engine}`, openingBalanceNanos: 0n }, draft('create again'))).rejects.toThrow();
    expect(await store.debit(`acct_b_${engine}`, 2n, 'too much', draft('debit'))).toBeUndefined();
    expect(await store.renameAccount('acct_missing', 'x', draft('rename'))).toBe(false);
    expect((await rowsFor(`acct_b_${engine}`)).map((row) => row.action)).toEqual(['create']);
    expect(await rowsFor('acct_missing')).toEqual([]);
  });
});
