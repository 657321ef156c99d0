import { describe, expect, it } from 'vitest';
import { hashKeySecret } from '../auth/key-secret.js';
import { openStore } from '../store/open-store.js';
import type { AccountStore, OperationsStore } from '../store/store.js';
import { useCliOnTempDatabase } from '../../test/support/cli-runner.js';

const cli = useCliOnTempDatabase('tollgate-cli-keys-');
const tollgate = (argv: string[]) => cli.run(argv);
const tollgateJson = async (argv: string[]) => (await cli.json(argv)) as Record<string, unknown>;

async function withStore<T>(work: (store: AccountStore & OperationsStore) => Promise<T>): Promise<T> {
  const store = await openStore(cli.databaseUrl, { migrate: false });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

describe('keys get, update, rotate, delete (the services the admin API uses)', () => {
  it('a budget set at creation shows in get, with what is left; update changes limits and budget', async () => {
    await tollgate(['accounts', 'create', '--name', 'acme', '--balance', '5']);
    const created = await tollgateJson(['keys', 'create', '--account', 'acme', '--budget', '2.5', '--budget-period', 'day']);
    expect(created).toMatchObject({ budget: { period: 'day', limit_usd: '2.5' } });
    const id = String(created.id);

    const details = await tollgateJson(['keys', 'get', id]);
    expect(details.budget).toMatchObject({ period: 'day', limit_usd: '2.5', spent_usd: '0', reserved_usd: '0', remaining_usd: '2.5' });
    const today = new Date().toISOString().slice(0, 10);
    expect((details.budget as Record<string, unknown>).period_start).toBe(`${today}T00:00:00.000Z`);

    const text = await tollgate(['keys', 'get', String(created.prefix)]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^BUDGET USD\s+2\.5 per day \(resets \d{4}-\d{2}-\d{2} 00:00:00Z\)$/m);
    expect(text.stdout).toMatch(/^REMAINING USD\s+2\.5$/m);
    expect(text.stdout).not.toContain(hashKeySecret(String(created.key)));

    // The period stays when only the amount changes; none removes the budget.
    expect(await tollgateJson(['keys', 'update', id, '--budget', '4', '--rpm', '7', '--models', 'model-5.6', '--name', 'ci'])).toMatchObject({
      budget: { period: 'day', limit_usd: '4' },
      requests_per_window: 7,
      models: ['model-5.6'],
      name: 'ci',
    });
    expect(await tollgateJson(['keys', 'update', id, '--budget', '10', '--budget-period', 'month', '--rpm', 'default', '--models', 'all', '--expires', '2999-01-01'])).toMatchObject({
      budget: { period: 'month', limit_usd: '10' },
      requests_per_window: null,
      models: null,
      expires_at: '2999-01-01T00:00:00.000Z',
    });
    expect((await tollgate(['keys', 'list'])).stdout).toMatch(/\s10\/month\s+2999-01-01 00:00:00Z\s+active\n$/);
    expect(await tollgateJson(['keys', 'update', id, '--budget', 'none', '--expires', 'never', '--name', ''])).toMatchObject({ budget: null, expires_at: null, name: null });
    expect((await tollgateJson(['keys', 'get', id])).budget).toBeNull();
  });

  it('rotate prints a new secret once; the old one no longer authenticates', async () => {
    await tollgate(['accounts', 'create', '--name', 'acme']);
    const created = await tollgateJson(['keys', 'create', '--account', 'acme']);
    const rotated = await tollgate(['keys', 'rotate', String(created.id)]);
    expect(rotated.code).toBe(0);
    const secrets = rotated.stdout.match(/sk-tg-[0-9A-Za-z]{40}/g) ?? [];
    expect(secrets).toHaveLength(1);
    expect(secrets[0]).not.toBe(created.key);
    expect(rotated.stdout).toMatch(/will not be shown again/);
    await withStore(async (store) => {
      expect(await store.findKeyByHash(hashKeySecret(String(created.key)))).toBeUndefined();
      expect((await store.findKeyByHash(hashKeySecret(secrets[0] ?? '')))?.key.id).toBe(created.id);
    });
    const again = await tollgateJson(['keys', 'rotate', String(created.id)]);
    expect(Object.keys(again).slice(0, 2)).toEqual(['id', 'key']);
    expect(again.prefix).toBe(String(again.key).slice(0, 12));
  });

  it('delete keeps the key and its history, hides it from the list, and refuses changes to it; every change is audited', async () => {
    await tollgate(['accounts', 'create', '--name', 'acme']);
    const created = await tollgateJson(['keys', 'create', '--account', 'acme']);
    const id = String(created.id);
    await tollgateJson(['keys', 'disable', id]);
    await tollgateJson(['keys', 'enable', id]);
    expect(await tollgateJson(['keys', 'delete', id])).toMatchObject({ id, status: 'deleted', deleted_at: expect.any(String) });
    expect(await tollgateJson(['keys', 'list'])).toEqual([]);
    expect(((await tollgateJson(['keys', 'list', '--status', 'deleted'])) as unknown as Array<{ id: string }>).map((key) => key.id)).toEqual([id]);
    expect(await tollgateJson(['keys', 'get', id])).toMatchObject({ status: 'deleted' });
    for (const argv of [['keys', 'delete', id], ['keys', 'rotate', id], ['keys', 'enable', id], ['keys', 'update', id, '--rpm', '3']]) {
      const refused = await tollgate(argv);
      expect(refused.code, argv.join(' ')).toBe(1);
      expect(refused.stderr).toMatch(new RegExp(`^error: key ${id} was deleted at .*; it cannot be changed\\n$`));
    }
    await withStore(async (store) => {
      const audit = await store.listAudit({ targetType: 'key', targetId: id }, { limit: 20 });
      expect([...audit.rows].reverse().map((row) => [row.action, row.adminTokenId])).toEqual([
        ['key.create', null],
        ['key.disable', null],
        ['key.enable', null],
        ['key.delete', null],
      ]);
      expect(JSON.stringify(audit.rows)).not.toContain(String(created.key));
      expect(JSON.stringify(audit.rows)).not.toContain(hashKeySecret(String(created.key)));
    });
  });

  it.each([
    [['keys', 'update', 'key_nothing', '--rpm', '3'], /no key with id or prefix "key_nothing"/],
    [['keys', 'get', 'sk-tg-nothing'], /no key with id or prefix "sk-tg-nothing"/],
    [['keys', 'rotate', 'key_nothing'], /no key with id or prefix/],
    [['keys', 'delete', 'key_nothing'], /no key with id or prefix/],
    [['keys', 'update', 'KEY'], /nothing to change/],
    [['keys', 'update', 'KEY', '--budget-period', 'day'], /--budget-period needs --budget/],
    [['keys', 'update', 'KEY', '--budget', '0'], /budget must be greater than zero/],
    [['keys', 'update', 'KEY', '--budget', '-1'], /budget must be a non-negative USD amount/],
    [['keys', 'update', 'KEY', '--budget', 'none', '--budget-period', 'day'], /budget must be a non-negative USD amount/],
    [['keys', 'create', '--account', 'acme', '--budget', '1', '--budget-period', 'year'], /budget period must be one of total, day, week, month \(got "year"\)/],
    [['keys', 'update', 'KEY', '--rpm', 'lots'], /--rpm must be a whole number/],
    [['keys', 'update', 'KEY', '--expires', '2000-01-01'], /expiry must be in the future/],
    [['keys', 'list', '--status', 'gone'], /status must be one of active, disabled, expired, deleted/],
  ])('refuses %j', async (argv, message) => {
    await tollgate(['accounts', 'create', '--name', 'acme']);
    const { id } = await tollgateJson(['keys', 'create', '--account', 'acme']);
    const run = await tollgate(argv.map((arg) => (arg === 'KEY' ? String(id) : arg)));
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).toBe('');
  });
});
