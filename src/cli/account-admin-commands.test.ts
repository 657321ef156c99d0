import { describe, expect, it } from 'vitest';
import { openStore } from '../store/open-store.js';
import { useCliOnTempDatabase } from '../../test/support/cli-runner.js';

const cli = useCliOnTempDatabase('tollgate-cli-accounts-');
const tollgate = (argv: string[]) => cli.run(argv);
const tollgateJson = async (argv: string[]) => (await cli.json(argv)) as Record<string, unknown>;

describe('accounts debit, rename, disable, enable (the services the admin API uses)', () => {
  it('debits with a reason, never below zero, and audits each change with no admin token', async () => {
    const created = await tollgateJson(['accounts', 'create', '--name', 'acme', '--balance', '3']);
    expect(await tollgateJson(['accounts', 'debit', 'acme', '--amount', '1.25', '--reason', 'correction'])).toMatchObject({ balance_usd: '1.75' });
    const refused = await tollgate(['accounts', 'debit', 'acme', '--amount', '2', '--reason', 'too much']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe('error: a debit of 2 USD would take the balance below zero (available: 1.75 USD)\n');
    expect((await tollgate(['accounts', 'debit', 'acme', '--amount', '1'])).code).not.toBe(0);
    expect(await tollgateJson(['accounts', 'credit', 'acme', '--amount', '1', '--reason', 'bonus'])).toMatchObject({ balance_usd: '2.75' });

    expect(await tollgateJson(['accounts', 'rename', 'acme', '--name', 'acme-2'])).toMatchObject({ id: created.id, name: 'acme-2' });
    expect(await tollgateJson(['accounts', 'disable', 'acme-2'])).toMatchObject({ disabled: true });
    expect(await tollgateJson(['accounts', 'enable', String(created.id)])).toMatchObject({ disabled: false });

    const store = await openStore(cli.databaseUrl, { migrate: false });
    try {
      const ledger = await store.listLedger(String(created.id));
      expect(ledger.map((entry) => [entry.kind, entry.note])).toEqual([
        ['credit', 'opening balance'],
        ['debit', 'correction'],
        ['credit', 'bonus'],
      ]);
      const audit = await store.listAudit({ targetId: String(created.id) }, { limit: 20 });
      expect([...audit.rows].reverse().map((row) => [row.action, row.adminTokenId])).toEqual([
        ['account.create', null],
        ['account.debit', null],
        ['account.credit', null],
        ['account.rename', null],
        ['account.disable', null],
        ['account.enable', null],
      ]);
    } finally {
      await store.close();
    }
  });

  it('refuses amounts beyond 1,000,000,000 USD, and a credit that would take the balance past it', async () => {
    const huge = '99999999999999999999';
    const create = await tollgate(['accounts', 'create', '--name', 'rich', '--balance', huge]);
    expect(create.code).toBe(1);
    expect(create.stderr).toBe(`error: balance must be at most 1000000000 USD (got "${huge}")\n`);
    await tollgateJson(['accounts', 'create', '--name', 'rich', '--balance', '999999999']);
    for (const argv of [
      ['accounts', 'credit', 'rich', '--amount', huge],
      ['accounts', 'debit', 'rich', '--amount', huge, '--reason', 'x'],
      ['accounts', 'low-balance', 'rich', '--below', huge],
      ['keys', 'create', '--account', 'rich', '--budget', huge],
    ]) {
      const refused = await tollgate(argv);
      expect(refused.code, argv.join(' ')).toBe(1);
      expect(refused.stderr, argv.join(' ')).toMatch(/^error: \S+ must be at most 1000000000 USD \(got "99999999999999999999"\)\n$/);
    }
    const past = await tollgate(['accounts', 'credit', 'rich', '--amount', '1.5']);
    expect(past.code).toBe(1);
    expect(past.stderr).toBe('error: a credit of 1.5 USD would take the balance above the maximum of 1000000000 USD (balance: 999999999 USD)\n');
    expect(await tollgateJson(['accounts', 'credit', 'rich', '--amount', '1'])).toMatchObject({ balance_usd: '1000000000' });
  });

  it('refuses a taken name and an unknown account', async () => {
    await tollgateJson(['accounts', 'create', '--name', 'one']);
    await tollgateJson(['accounts', 'create', '--name', 'two']);
    const taken = await tollgate(['accounts', 'rename', 'one', '--name', 'two']);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toBe('error: an account named "two" already exists\n');
    const unknown = await tollgate(['accounts', 'disable', 'nobody']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('error: no account with id or name "nobody"\n');
  });

  it('sets and removes the low-balance threshold, audited; refuses bad input', async () => {
    const created = await tollgateJson(['accounts', 'create', '--name', 'thrifty', '--balance', '10']);
    expect(created).toMatchObject({ low_balance_threshold_usd: null });
    expect(await tollgateJson(['accounts', 'low-balance', 'thrifty', '--below', '2.5'])).toMatchObject({ id: created.id, low_balance_threshold_usd: '2.5' });
    const text = await tollgate(['accounts', 'low-balance', 'thrifty', '--below', '3']);
    expect(text.stdout).toBe(`Account "thrifty" (${String(created.id)}) raises balance.low when its balance less open holds drops below 3 USD.\n`);
    expect(await tollgateJson(['accounts', 'low-balance', 'thrifty', '--off'])).toMatchObject({ low_balance_threshold_usd: null });
    for (const [argv, message] of [
      [['accounts', 'low-balance', 'thrifty'], 'error: give either --below <usd> or --off\n'],
      [['accounts', 'low-balance', 'thrifty', '--below', '1', '--off'], 'error: give either --below <usd> or --off\n'],
      [['accounts', 'low-balance', 'thrifty', '--below', '0'], 'error: low_balance_threshold_usd must be greater than zero (got "0")\n'],
      [['accounts', 'low-balance', 'thrifty', '--below', '-1'], 'error: low_balance_threshold_usd must be a non-negative USD amount with at most 9 decimals, like 5 or 0.25 (got "-1")\n'],
      [['accounts', 'low-balance', 'nobody', '--below', '1'], 'error: no account with id or name "nobody"\n'],
    ] as const) {
      const refused = await tollgate([...argv]);
      expect(refused.code, argv.join(' ')).toBe(1);
      expect(refused.stderr).toBe(message);
    }
    const store = await openStore(cli.databaseUrl, { migrate: false });
    try {
      const audit = await store.listAudit({ targetId: String(created.id) }, { limit: 20 });
      const changes = [...audit.rows].reverse().filter((row) => row.action === 'account.set_low_balance_threshold');
      expect(changes.map((row) => [(row.before as Record<string, unknown>).low_balance_threshold_usd, (row.after as Record<string, unknown>).low_balance_threshold_usd])).toEqual([
        [null, '2.5'],
        ['2.5', '3'],
        ['3', null],
      ]);
    } finally {
      await store.close();
    }
  });
});
