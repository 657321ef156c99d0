import { describe, expect, it } from 'vitest';
import { hashKeySecret } from '../auth/key-secret.js';
import { openStore } from '../store/open-store.js';
import { useCliOnTempDatabase } from '../../test/support/cli-runner.js';

const cli = useCliOnTempDatabase('tollgate-cli-admin-');
const tollgate = (argv: string[]) => cli.run(argv);
const tollgateJson = async (argv: string[]) => (await cli.json(argv)) as Record<string, unknown>;

describe('admin-tokens', () => {
  it('create shows the secret once (tg-admin-…), stores only its hash, and audits the creation', async () => {
    const created = await tollgateJson(['admin-tokens', 'create', '--role', 'operator', '--name', 'ops']);
    expect(created).toMatchObject({ id: expect.stringMatching(/^adm_/), role: 'operator', name: 'ops', disabled: false });
    const secret = String(created.token);
    expect(secret).toMatch(/^tg-admin-[0-9A-Za-z]{40}$/);
    expect(String(created.prefix)).toBe(secret.slice(0, 13));
    const store = await openStore(cli.databaseUrl, { migrate: false });
    try {
      const stored = await store.findAdminTokenByHash(hashKeySecret(secret));
      expect(stored?.id).toBe(created.id);
      expect(JSON.stringify(await store.listAdminTokens())).not.toContain(secret);
      const audit = await store.listAudit({ targetId: String(created.id) }, { limit: 10 });
      expect(audit.rows.map((row) => [row.action, row.adminTokenId])).toEqual([['admin_token.create', null]]);
    } finally {
      await store.close();
    }
  });

  it('text output says the secret will not be shown again', async () => {
    const run = await tollgate(['admin-tokens', 'create', '--role', 'viewer']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Admin token: tg-admin-\S+\n.*not be shown again/);
  });

  it('list shows prefixes and roles, never secrets', async () => {
    const created = await tollgateJson(['admin-tokens', 'create', '--role', 'owner']);
    const listed = await tollgate(['admin-tokens', 'list']);
    expect(listed.stdout).toContain(String(created.prefix));
    expect(listed.stdout).toContain('owner');
    expect(listed.stdout).not.toContain(String(created.token));
    const json = JSON.parse((await tollgate(['admin-tokens', 'list', '--json'])).stdout) as Array<Record<string, unknown>>;
    expect(json).toHaveLength(1);
    expect(Object.keys(json[0] ?? {})).not.toContain('hash');
  });

  it('disable and enable by id or prefix', async () => {
    const created = await tollgateJson(['admin-tokens', 'create', '--role', 'viewer']);
    expect(await tollgateJson(['admin-tokens', 'disable', String(created.prefix)])).toMatchObject({ id: created.id, disabled: true });
    expect(await tollgateJson(['admin-tokens', 'enable', String(created.id)])).toMatchObject({ disabled: false });
  });

  it('refuses an unknown role and an unknown token with one line and exit code 1', async () => {
    const badRole = await tollgate(['admin-tokens', 'create', '--role', 'root']);
    expect(badRole.code).toBe(1);
    expect(badRole.stderr).toBe('error: role must be one of owner, operator, viewer (got "root")\n');
    const unknown = await tollgate(['admin-tokens', 'disable', 'adm_nothing']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no admin token with id or prefix "adm_nothing"');
  });
});
