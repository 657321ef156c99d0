import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { hashKeySecret } from '../auth/key-secret.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/store.js';
import { useCliOnTempDatabase } from '../../test/support/cli-runner.js';
import { parseCsvRecords } from '../../test/support/csv.js';

const cli = useCliOnTempDatabase();
/** Runs the real CLI in-process against the temp database, as `tollgate ...argv` would. */
const tollgate = (argv: string[], env?: Record<string, string | undefined>) => cli.run(argv, env);
const tollgateJson = (argv: string[]) => cli.json(argv);

async function withStore<T>(work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(cli.databaseUrl, { migrate: false });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** Column start offsets of a table header, to check that every row lines up under it. */
function columnStarts(header: string): number[] {
  return [...header.matchAll(/(?:^|\s{2})(\S)/g)].map((match) => (match.index ?? 0) + match[0].length - 1);
}

describe('accounts', () => {
  it('create --json prints the new account with its id and balance', async () => {
    const created = await tollgateJson(['accounts', 'create', '--name', 'acme', '--balance', '12.5']);
    expect(created).toMatchObject({ id: expect.stringMatching(/^acct_/), name: 'acme', balance_usd: '12.5' });
  });

  it('create prints one human line; the balance defaults to zero', async () => {
    const run = await tollgate(['accounts', 'create', '--name', 'acme']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^Created account "acme" \(acct_[0-9A-Za-z]{20}\) with a balance of 0 USD\.\n$/);
  });

  it('list prints an aligned table, or JSON', async () => {
    await tollgate(['accounts', 'create', '--name', 'acme', '--balance', '5']);
    await tollgate(['accounts', 'create', '--name', 'a-much-longer-name', '--balance', '1234.000000001']);
    const run = await tollgate(['accounts', 'list']);
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^ID\s+NAME\s+BALANCE USD\s+RESERVED USD\s+STATUS\s+CREATED$/);
    const balanceEnd = (lines[0] ?? '').indexOf('BALANCE USD') + 'BALANCE USD'.length;
    // Numbers are right-aligned under their header.
    expect(lines.find((line) => line.includes('acme'))?.slice(0, balanceEnd)).toMatch(/ 5$/);
    expect(lines.find((line) => line.includes('a-much-longer-name'))?.slice(0, balanceEnd)).toMatch(/ 1234\.000000001$/);
    const nameStart = columnStarts(lines[0] ?? '')[1];
    for (const line of lines.slice(1)) expect(line.slice(nameStart ?? 0)).toMatch(/^(acme|a-much-longer-name) /);

    const listed = (await tollgateJson(['accounts', 'list'])) as { name: string; balance_usd: string }[];
    expect(listed.map((account) => [account.name, account.balance_usd]).sort()).toEqual([
      ['a-much-longer-name', '1234.000000001'],
      ['acme', '5'],
    ]);
  });

  it('list says so when there are none, and --json gives []', async () => {
    expect((await tollgate(['accounts', 'list'])).stdout).toBe('No accounts.\n');
    expect(await tollgateJson(['accounts', 'list'])).toEqual([]);
  });

  it('credit adds to the balance, by name or id', async () => {
    const { id } = (await tollgateJson(['accounts', 'create', '--name', 'acme', '--balance', '1'])) as { id: string };
    const byName = await tollgate(['accounts', 'credit', 'acme', '--amount', '2.25']);
    expect(byName.stdout).toBe(`Credited account "acme" (${id}); the balance is now 3.25 USD.\n`);
    expect(await tollgateJson(['accounts', 'credit', id, '--amount', '0.000000001'])).toMatchObject({ id, balance_usd: '3.250000001' });
    expect(await withStore(async (store) => (await store.findAccount(id))?.balanceNanos)).toBe(3_250_000_001n);
  });

  it('takes --json before the command as well as after it', async () => {
    await tollgate(['accounts', 'create', '--name', 'acme']);
    const run = await tollgate(['--json', 'accounts', 'list']);
    expect((JSON.parse(run.stdout) as unknown[]).length).toBe(1);
  });
});

describe('keys', () => {
  beforeEach(async () => {
    await tollgate(['accounts', 'create', '--name', 'acme', '--balance', '5']);
  });

  it('create prints the secret once with a warning, and the secret authenticates', async () => {
    const run = await tollgate(['keys', 'create', '--account', 'acme', '--name', 'ci']);
    expect(run.code).toBe(0);
    const secrets = run.stdout.match(/sk-tg-[0-9A-Za-z]{40}/g) ?? [];
    expect(secrets).toHaveLength(1);
    expect(run.stdout).toContain(`API key: ${secrets[0]}\n`);
    expect(run.stdout).toMatch(/will not be shown again/);
    const found = await withStore((store) => store.findKeyByHash(hashKeySecret(secrets[0] ?? '')));
    expect(found?.account.name).toBe('acme');
    expect(found?.key.name).toBe('ci');
  });

  it('create --json gives id and key, and keeps models, limits and expiry', async () => {
    const created = (await tollgateJson([
      'keys', 'create', '--account', 'acme', '--models', 'model-5.6, model-5.6-mini', '--rpm', '30', '--tpm', '10000', '--expires', '2999-01-01',
    ])) as Record<string, unknown>;
    expect(Object.keys(created).slice(0, 2)).toEqual(['id', 'key']);
    expect(created).toMatchObject({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^sk-tg-[0-9A-Za-z]{40}$/),
      models: ['model-5.6', 'model-5.6-mini'],
      requests_per_window: 30,
      tokens_per_minute: 10000,
      expires_at: '2999-01-01T00:00:00.000Z',
    });
    expect(created).not.toHaveProperty('hash');
  });

  it('list shows prefixes, never secrets or hashes', async () => {
    const { key: secret, prefix } = (await tollgateJson(['keys', 'create', '--account', 'acme', '--models', 'model-5.6'])) as { key: string; prefix: string };
    const hash = hashKeySecret(secret);
    const human = await tollgate(['keys', 'list']);
    const json = await tollgate(['keys', 'list', '--json']);
    const filtered = await tollgate(['keys', 'list', '--account', 'acme']);
    for (const run of [human, json, filtered]) {
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(prefix);
      expect(run.stdout).not.toContain(secret);
      expect(run.stdout).not.toContain(secret.slice(12));
      expect(run.stdout).not.toContain(hash);
    }
    const lines = human.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+PREFIX\s+ACCOUNT\s+NAME\s+MODELS\s+RPM\s+TPM\s+BUDGET USD\s+EXPIRES\s+STATUS$/);
    expect(lines[1]).toMatch(/\smodel-5\.6\s+default\s+default\s+-\s+never\s+active$/);
  });

  it('list --account shows only that account’s keys', async () => {
    await tollgate(['accounts', 'create', '--name', 'other']);
    await tollgate(['keys', 'create', '--account', 'acme']);
    const { prefix } = (await tollgateJson(['keys', 'create', '--account', 'other'])) as { prefix: string };
    const listed = (await tollgateJson(['keys', 'list', '--account', 'other'])) as { prefix: string }[];
    expect(listed.map((key) => key.prefix)).toEqual([prefix]);
    expect((await tollgate(['keys', 'list', '--account', 'acme'])).stdout.trimEnd().split('\n')).toHaveLength(2);
  });

  it('disable and enable by prefix or id', async () => {
    const { id, key: secret, prefix } = (await tollgateJson(['keys', 'create', '--account', 'acme'])) as { id: string; key: string; prefix: string };
    const disabled = await tollgate(['keys', 'disable', prefix]);
    expect(disabled).toMatchObject({ code: 0, stdout: `Key ${id} (${prefix}…) is now disabled.\n` });
    expect((await tollgate(['keys', 'list'])).stdout).toMatch(/\sdisabled\n$/);
    expect(await withStore(async (store) => (await store.findKeyByHash(hashKeySecret(secret)))?.key.disabled)).toBe(true);

    expect(await tollgateJson(['keys', 'enable', id])).toMatchObject({ id, disabled: false, status: 'active' });
    expect(await withStore(async (store) => (await store.findKeyByHash(hashKeySecret(secret)))?.key.disabled)).toBe(false);
  });
});

describe('usage', () => {
  it('prints a per-model table with tokens, cost and a total', async () => {
    await tollgate(['accounts', 'create', '--name', 'acme', '--balance', '5']);
    const { id: keyId } = (await tollgateJson(['keys', 'create', '--account', 'acme'])) as { id: string };
    await withStore(async (store) => {
      const accountId = (await store.findAccount('acme'))?.id ?? '';
      const charges = [
        { model: 'model-5.6', costNanos: 1_250_000n, inputTokens: 1000, cachedInputTokens: 200, cacheWriteInputTokens: 300, outputTokens: 100, reasoningTokens: 40 },
        { model: 'model-5.6', costNanos: 250_000n, inputTokens: 10, cachedInputTokens: 0, outputTokens: 5, reasoningTokens: 0 },
        { model: 'model-5.6-mini', costNanos: 3n, inputTokens: 7, cachedInputTokens: 0, outputTokens: 1, reasoningTokens: 0 },
      ];
      // The last one as a hold from before endpoints were recorded.
      const surfaces = ['responses', 'chat-completions', undefined];
      for (const [index, charge] of charges.entries()) {
        const surface = surfaces[index];
        const hold = { id: `hold_${index}`, accountId, keyId, requestId: `req_${index}`, model: charge.model, amountNanos: 0n, expiresAt: new Date(Date.now() + 60_000), ...(surface === undefined ? {} : { surface }) };
        expect(await store.openHold(hold)).toBe(true);
        expect(await store.settleHold(hold.id, { requestId: hold.requestId, keyId, excessNanos: 0n, ...charge })).toBe(true);
      }
    });

    const run = await tollgate(['usage', '--account', 'acme']);
    expect(run.code).toBe(0);
    expect(run.stdout.trimEnd().split('\n').map((line) => line.trim().split(/\s{2,}/))).toEqual([
      ['MODEL', 'REQUESTS', 'INPUT', 'CACHED', 'CACHE WRITE', 'OUTPUT', 'REASONING', 'ERRORS', 'COST USD', 'EXCESS USD'],
      ['model-5.6', '2', '1010', '200', '300', '105', '40', '0', '0.0015', '0'],
      ['model-5.6-mini', '1', '7', '0', '0', '1', '0', '0', '0.000000003', '0'],
      ['TOTAL', '3', '1017', '200', '300', '106', '40', '0', '0.001500003', '0'],
    ]);

    const report = (await tollgateJson(['usage', '--since', '2000-01-01'])) as { rows: unknown[]; total: unknown; by: string };
    expect(report.by).toBe('model');
    expect(report.rows).toHaveLength(2);
    expect(report.total).toEqual({ requests: 3, input_tokens: 1017, cached_input_tokens: 200, cache_write_input_tokens: 300, output_tokens: 106, reasoning_tokens: 40, errors: 0, cost_usd: '0.001500003', excess_usd: '0' });
    expect((await tollgate(['usage', '--since', '2999-01-01T00:00:00Z'])).stdout).toBe('No usage recorded.\n');
    expect((await tollgate(['usage', '--until', '2000-01-01'])).stdout).toBe('No usage recorded.\n');

    const byKey = await tollgate(['usage', '--by', 'key', '--since', '2000-01-01', '--until', '2999-01-01']);
    expect(byKey.stdout.split('\n')[0]).toMatch(/^KEY\s+REQUESTS\s/);
    expect(byKey.stdout).toContain(keyId);
    const byEndpoint = await tollgate(['usage', '--by', 'endpoint', '--since', '2000-01-01']);
    expect(byEndpoint.stdout.trimEnd().split('\n').map((line) => line.trim().split(/\s{2,}/).slice(0, 3))).toEqual([
      ['ENDPOINT', 'REQUESTS', 'INPUT'],
      ['chat-completions', '1', '10'],
      ['responses', '1', '1000'],
      ['unknown', '1', '7'],
      ['TOTAL', '3', '1017'],
    ]);
    const today = new Date();
    today.setUTCHours(0, 0, 0, 0);
    const byDay = await tollgate(['usage', '--by', 'day']);
    expect(byDay.stdout.split('\n')[1]).toMatch(new RegExp(`^${today.toISOString().replaceAll('.', '\\.')}\\s+3\\s`));

    const csv = await tollgate(['usage', '--by', 'model', '--csv']);
    expect(csv.code).toBe(0);
    const { header, records } = parseCsvRecords(csv.stdout);
    expect(header).toEqual(['model', 'requests', 'input_tokens', 'cached_input_tokens', 'cache_write_input_tokens', 'output_tokens', 'reasoning_tokens', 'errors', 'cost_usd', 'excess_usd']);
    expect(records).toEqual([
      { model: 'model-5.6', requests: '2', input_tokens: '1010', cached_input_tokens: '200', cache_write_input_tokens: '300', output_tokens: '105', reasoning_tokens: '40', errors: '0', cost_usd: '0.0015', excess_usd: '0' },
      { model: 'model-5.6-mini', requests: '1', input_tokens: '7', cached_input_tokens: '0', cache_write_input_tokens: '0', output_tokens: '1', reasoning_tokens: '0', errors: '0', cost_usd: '0.000000003', excess_usd: '0' },
    ]);
  });
});

describe('bad input', () => {
  beforeEach(async () => {
    await tollgate(['accounts', 'create', '--name', 'acme', '--balance', '5']);
  });

  it.each([
    [['accounts', 'credit', 'nobody', '--amount', '1'], /no account with id or name "nobody"/],
    [['accounts', 'credit', 'acme', '--amount', '-1'], /amount must be a non-negative USD amount/],
    [['accounts', 'credit', 'acme', '--amount=-1'], /amount must be a non-negative USD amount/],
    [['accounts', 'credit', 'acme', '--amount', 'abc'], /amount must be a non-negative USD amount.*"abc"/],
    [['accounts', 'credit', 'acme', '--amount', '1.0000000001'], /at most 9 decimals/],
    [['accounts', 'credit', 'acme', '--amount', '0'], /amount must be greater than zero/],
    [['accounts', 'create', '--name', 'new', '--balance', '-1'], /balance must be a non-negative USD amount/],
    [['accounts', 'create', '--name', 'acme'], /an account named "acme" already exists/],
    [['keys', 'create', '--account', 'nobody'], /no account with id or name "nobody"/],
    [['keys', 'create', '--account', 'acme', '--rpm', '0'], /--rpm must be a whole number of at least 1 \(got "0"\)/],
    [['keys', 'create', '--account', 'acme', '--rpm', '-1'], /--rpm must be a whole number of at least 1/],
    [['keys', 'create', '--account', 'acme', '--rpm', 'abc'], /--rpm must be a whole number of at least 1/],
    [['keys', 'create', '--account', 'acme', '--tpm', '0'], /--tpm must be a whole number of at least 1/],
    [['keys', 'create', '--account', 'acme', '--expires', 'next week'], /--expires must be an ISO 8601 date/],
    [['keys', 'create', '--account', 'acme', '--expires', '2000-01-01'], /expiry must be in the future/],
    [['keys', 'create', '--account', 'acme', '--models', ','], /models must list one or more/],
    [['keys', 'list', '--account', 'nobody'], /no account with id or name "nobody"/],
    [['keys', 'disable', 'sk-tg-nothing'], /no key with id or prefix "sk-tg-nothing"/],
    [['keys', 'enable', 'key_nothing'], /no key with id or prefix "key_nothing"/],
    [['usage', '--since', 'yesterday'], /--since must be an ISO 8601 date/],
    [['usage', '--since', '2025-02-30'], /--since must be an ISO 8601 date/],
    [['usage', '--account', 'nobody'], /no account with id or name "nobody"/],
    [['usage', '--until', 'tomorrow'], /--until must be an ISO 8601 date/],
    [['usage', '--since', '2025-02-01', '--until', '2025-01-01'], /--since must not be after --until/],
    [['usage', '--by', 'week'], /argument 'week' is invalid. Allowed choices are day, hour, model, key, account, endpoint\./],
    [['serve', '--workers', '0'], /--workers must be "auto" or a whole number/],
    [['serve', '--workers', 'many'], /--workers must be "auto" or a whole number/],
    [['accounts', 'create'], /required option '--name <name>' not specified/],
    [['accounts', 'credit', 'acme'], /required option '--amount <usd>' not specified/],
    [['keys', 'frobnicate'], /unknown command 'frobnicate'/],
    [['--database', 'mysql://localhost/x', 'accounts', 'list'], /unsupported database URL/],
  ])('%j fails with exit code 1 and one clear line', async (argv, message) => {
    const human = await tollgate(argv);
    expect(human.code).toBe(1);
    expect(human.stdout).toBe('');
    expect(human.stderr).toMatch(/^error: [^\n]+\n$/);
    expect(human.stderr).toMatch(message);

    const json = await tollgate([...argv, '--json']);
    expect(json.code).toBe(1);
    expect(json.stdout).toBe('');
    expect(json.stderr.endsWith('\n')).toBe(true);
    const parsed = JSON.parse(json.stderr) as { error: string };
    expect(Object.keys(parsed)).toEqual(['error']);
    expect(parsed.error).toMatch(message);
  });

  it('changes nothing when it refuses', async () => {
    await tollgate(['accounts', 'credit', 'acme', '--amount', 'abc']);
    await tollgate(['keys', 'create', '--account', 'acme', '--rpm', '0']);
    expect(await tollgateJson(['accounts', 'list'])).toMatchObject([{ name: 'acme', balance_usd: '5' }]);
    expect(await tollgateJson(['keys', 'list'])).toEqual([]);
    expect(cli.served).toEqual([]);
  });
});

describe('database and schema', () => {
  it('migrate creates the schema in a new database file', async () => {
    const run = await tollgate(['migrate']);
    expect(run).toEqual({ code: 0, stdout: 'Database schema is up to date (sqlite).\n', stderr: '' });
    expect(existsSync(join(cli.directory, 'tollgate.db'))).toBe(true);
    expect(await tollgateJson(['migrate'])).toEqual({ migrated: true, engine: 'sqlite' });
  });

  it('every command creates the schema on open', async () => {
    expect(await tollgate(['keys', 'list'])).toEqual({ code: 0, stdout: 'No keys.\n', stderr: '' });
    expect(await withStore((store) => store.listAccounts())).toEqual([]);
  });

  it('--database overrides the environment', async () => {
    const otherUrl = `sqlite:${join(cli.directory, 'other', 'tollgate.db')}`;
    const run = await tollgate(['--database', otherUrl, 'accounts', 'create', '--name', 'elsewhere']);
    expect(run.code).toBe(0);
    expect(existsSync(join(cli.directory, 'tollgate.db'))).toBe(false);
    const other = await openStore(otherUrl, { migrate: false });
    try {
      expect((await other.listAccounts()).map((account) => account.name)).toEqual(['elsewhere']);
    } finally {
      await other.close();
    }
  });
});

describe('serve', () => {
  it('hands workers, migrate and the database to the server', async () => {
    expect((await tollgate(['serve'])).code).toBe(0);
    expect(await tollgate(['serve', '--workers', 'auto', '--no-migrate', '--database', 'sqlite:/srv/x.db'])).toMatchObject({ code: 0, stderr: '' });
    expect(await tollgate(['serve', '--workers', '4'], {})).toMatchObject({ code: 0 });
    expect(await tollgate(['serve', '--demo'])).toMatchObject({ code: 0 });
    expect(cli.served).toEqual([
      { workers: '1', migrate: true, demo: false, databaseUrl: cli.databaseUrl },
      { workers: 'auto', migrate: false, demo: false, databaseUrl: 'sqlite:/srv/x.db' },
      { workers: '4', migrate: true, demo: false, databaseUrl: 'sqlite:./data/tollgate.db' },
      { workers: '1', migrate: true, demo: true, databaseUrl: cli.databaseUrl },
    ]);
  });
});

describe('help', () => {
  it('--help prints usage on stdout and exits 0', async () => {
    const run = await tollgate(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: tollgate/);
    for (const command of ['serve', 'migrate', 'accounts', 'keys', 'usage']) expect(run.stdout).toContain(command);
  });
});
