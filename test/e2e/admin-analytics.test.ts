/**
 * Analytics that hold at scale, over the admin API (issue 21): the request log's rows carry the
 * account's and the key's names (joined when read, so a rename shows at once), `request_id` finds
 * exactly one row, `errors=true` keeps the errors only (a stream that failed midway with its 200
 * included), and the account list sorts on the server by name, spend over a range, and last use,
 * its pages stable under every sort. Real requests through a real gateway make the charges and the
 * log rows.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccount, renameAccount } from '../../src/admin/accounts.js';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { formatUsd } from '../../src/billing/money.js';
import { createKey } from '../../src/admin/keys.js';
import { adminClient, allPages, type AdminCall } from '../support/admin-client.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';

type Row = Record<string, unknown>;

const chat = (model: string, words: number, extra: Record<string, unknown> = {}) => ({ model, max_tokens: 16, messages: [{ role: 'user', content: 'word '.repeat(words) }], ...extra });

describe.each(engines)('request log names and filters, account list sorts, on %s', (engine) => {
  let harness: Harness;
  let call: AdminCall;
  let viewer: string;
  /** Account name → id and its key's secret. */
  const accounts = new Map<string, { id: string; keyId: string; secret: string }>();
  /** Request ids by what they were. */
  const sent = { midFail: '', notFound: '', ok: [] as string[] };

  async function send(name: string, body: object): Promise<{ requestId: string; status: number }> {
    const response = await harness.post('/v1/chat/completions', body, accounts.get(name)?.secret ?? '');
    await response.text();
    return { requestId: response.headers.get('x-request-id') ?? '', status: response.status };
  }

  beforeAll(async () => {
    harness = await startHarness({ engine });
    call = adminClient(harness.baseUrl);
    viewer = (await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR)).secret;
    // Created in this order, named so that no order of the four is another's.
    for (const name of ['an-delta', 'an-alpha', 'an-charlie', 'an-bravo']) {
      const account = await createAccount(harness.store, { name, balanceUsd: '50' }, CLI_ACTOR);
      const key = await createKey(harness.store, { accountRef: account.id, name: `${name} key` }, CLI_ACTOR);
      accounts.set(name, { id: account.id, keyId: key.key.id, secret: key.secret });
    }
    // Spend: alpha most (three long prompts), then charlie, then bravo; delta nothing.
    // Last use: charlie latest, then bravo, then alpha; delta never.
    for (let index = 0; index < 3; index += 1) sent.ok.push((await send('an-alpha', chat('model-5.6', 3_000))).requestId);
    await new Promise((resolve) => setTimeout(resolve, 20));
    sent.ok.push((await send('an-bravo', chat('model-5.6', 10))).requestId);
    const notFound = await send('an-bravo', chat('no-such-model', 10));
    expect(notFound.status).toBeGreaterThanOrEqual(400);
    sent.notFound = notFound.requestId;
    await new Promise((resolve) => setTimeout(resolve, 20));
    sent.ok.push((await send('an-charlie', chat('model-5.6', 1_500))).requestId);
    const midFail = await send('an-charlie', chat('mid-fail-model', 10, { stream: true }));
    expect(midFail.status).toBe(200);
    sent.midFail = midFail.requestId;
    // The log is written in batches, shortly after.
    await vi.waitFor(
      async () => {
        const answer = await call('GET', '/requests?limit=200', viewer);
        expect((answer.body.data as Row[]).length).toBeGreaterThanOrEqual(7);
      },
      { timeout: 5_000, interval: 50 },
    );
  });

  afterAll(async () => {
    await harness?.close();
  });

  const list = async (query: string): Promise<Row[]> => {
    const answer = await call('GET', query, viewer);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.data as Row[];
  };
  const names = (rows: Row[]) => rows.map((row) => row.name);

  it("joins each row's account and key names, as they are now", async () => {
    const rows = await list(`/requests?account=an-alpha`);
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row).toMatchObject({ account_id: accounts.get('an-alpha')?.id, account_name: 'an-alpha', key_id: accounts.get('an-alpha')?.keyId, key_name: 'an-alpha key' });
    await renameAccount(harness.store, 'an-alpha', 'an-alpha-renamed', CLI_ACTOR);
    try {
      expect((await list(`/requests?account=${accounts.get('an-alpha')?.id ?? ''}`)).map((row) => row.account_name)).toEqual(['an-alpha-renamed', 'an-alpha-renamed', 'an-alpha-renamed']);
    } finally {
      await renameAccount(harness.store, 'an-alpha-renamed', 'an-alpha', CLI_ACTOR);
    }
    // A refusal before any key was known has neither.
    const refused = await harness.post('/v1/chat/completions', chat('model-5.6', 1), 'sk-not-a-key');
    await refused.text();
    const requestId = refused.headers.get('x-request-id') ?? '';
    const [row] = await vi.waitFor(async () => {
      const found = await list(`/requests?request_id=${requestId}`);
      expect(found).toHaveLength(1);
      return found;
    });
    expect(row).toMatchObject({ status: 401, account_id: null, account_name: null, key_id: null, key_name: null });
  });

  it('finds one request by its exact id, and none by a part of it', async () => {
    const id = sent.ok[1] ?? '';
    const rows = await list(`/requests?request_id=${id}`);
    expect(rows.map((row) => row.request_id)).toEqual([id]);
    expect(rows[0]).toMatchObject({ account_name: 'an-alpha' });
    expect(await list(`/requests?request_id=${id.slice(0, -2)}`)).toEqual([]);
  });

  it('keeps only the errors with errors=true: status 400 and up, or an error code under a 200', async () => {
    const all = await list('/requests?limit=200');
    const errors = await list('/requests?errors=true&limit=200');
    expect(errors.length).toBeGreaterThanOrEqual(2);
    for (const row of errors) expect(Number(row.status) >= 400 || row.error_code !== null).toBe(true);
    const ids = errors.map((row) => row.request_id);
    expect(ids).toContain(sent.notFound);
    expect(ids).toContain(sent.midFail);
    expect(errors.find((row) => row.request_id === sent.midFail)).toMatchObject({ status: 200, account_name: 'an-charlie' });
    for (const id of sent.ok) expect(ids).not.toContain(id);
    // Exactly the log's errors, newest first, and within the other filters.
    expect(ids).toEqual(all.filter((row) => Number(row.status) >= 400 || row.error_code !== null).map((row) => row.request_id));
    expect((await list('/requests?errors=true&account=an-charlie')).map((row) => row.request_id)).toEqual([sent.midFail]);
    expect(await list('/requests?errors=false&account=an-charlie')).toHaveLength(2);
    const bad = await call('GET', '/requests?errors=yes', viewer);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('errors');
  });

  it('sorts accounts by name, spend and last use on the server, with the spend and last use of each', async () => {
    const byCreation = await list('/accounts?name=an-');
    expect(names(byCreation)).toEqual(['an-delta', 'an-alpha', 'an-charlie', 'an-bravo']);
    expect(names(await list('/accounts?name=an-&sort=name'))).toEqual(['an-alpha', 'an-bravo', 'an-charlie', 'an-delta']);
    expect(names(await list('/accounts?name=an-&sort=name&order=desc'))).toEqual(['an-delta', 'an-charlie', 'an-bravo', 'an-alpha']);
    const bySpend = await list('/accounts?name=an-&sort=spend');
    expect(names(bySpend)).toEqual(['an-alpha', 'an-charlie', 'an-bravo', 'an-delta']);
    // The spend is the account's charges in the ledger (exact nano-USD, formatted).
    for (const row of bySpend) {
      const charges = (await harness.store.listLedger(String(row.id))).filter((entry) => entry.kind === 'charge').reduce((sum, entry) => sum + entry.amountNanos, 0n);
      expect(row.spend_usd, String(row.name)).toBe(formatUsd(charges));
    }
    expect(bySpend.at(-1)).toMatchObject({ spend_usd: '0', last_used_at: null });
    expect(names(await list('/accounts?name=an-&sort=spend&order=asc'))).toEqual(['an-delta', 'an-bravo', 'an-charlie', 'an-alpha']);
    const byUse = await list('/accounts?name=an-&sort=last_used');
    expect(names(byUse)).toEqual(['an-charlie', 'an-bravo', 'an-alpha', 'an-delta']);
    // The latest request-log row of each account.
    for (const row of byUse.slice(0, 3)) expect(row.last_used_at).toBe((await list(`/requests?account=${String(row.id)}&limit=1`))[0]?.at);
    // Never used: first when oldest come first.
    expect(names(await list('/accounts?name=an-&sort=last_used&order=asc'))).toEqual(['an-delta', 'an-alpha', 'an-bravo', 'an-charlie']);
  });

  it('bounds the spend by from/to (the last 30 days by default), and refuses a reversed range', async () => {
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const none = await list(`/accounts?name=an-&sort=spend&from=${later}`);
    expect(none.map((row) => row.spend_usd)).toEqual(['0', '0', '0', '0']);
    // Ties by id: the order of the ids, whatever the names.
    expect(none.map((row) => row.id)).toEqual([...none.map((row) => String(row.id))].sort().reverse());
    const before = await list(`/accounts?name=an-&sort=spend&to=${new Date(Date.now() - 86_400_000).toISOString()}`);
    expect(before.map((row) => row.spend_usd)).toEqual(['0', '0', '0', '0']);
    const reversed = await call('GET', `/accounts?from=${later}&to=${new Date().toISOString()}`, viewer);
    expect(reversed.status).toBe(400);
    expect((await call('GET', '/accounts?sort=balance', viewer)).status).toBe(400);
    expect((await call('GET', '/accounts?sort=name&order=up', viewer)).status).toBe(400);
  });

  it('pages every sort one row at a time in the same order as one page, and refuses a cursor of another sort', async () => {
    for (const query of ['', '&sort=name', '&sort=name&order=desc', '&sort=spend', '&sort=spend&order=asc', '&sort=last_used', '&sort=last_used&order=asc']) {
      const whole = await list(`/accounts?name=an-${query}`);
      const { rows, pages } = await allPages(call, `/accounts?name=an-${query}`, viewer, 1);
      expect(pages, query).toBe(4);
      expect(rows.map((row) => row.id), query).toEqual(whole.map((row) => row.id));
    }
    const first = await call('GET', '/accounts?name=an-&sort=spend&limit=1', viewer);
    const cursor = String(first.body.next_cursor);
    expect((await call('GET', `/accounts?name=an-&sort=spend&limit=1&cursor=${cursor}`, viewer)).status).toBe(200);
    for (const other of ['&sort=name', '&sort=spend&order=asc', '']) {
      const answer = await call('GET', `/accounts?name=an-${other}&limit=1&cursor=${cursor}`, viewer);
      expect(answer.status, other).toBe(400);
      expect(JSON.stringify(answer.body)).toContain('cursor');
    }
  });
});

