/**
 * Every guarantee of the core across processes: three instances on one PostgreSQL and Redis, and
 * `serve --workers 2` on SQLite. A shared limit admits exactly N; concurrent requests never spend
 * more than the balance and each admitted one is charged once; a key disabled through one process
 * is refused by all within a second; an instance killed mid-stream leaves no hold behind after
 * expiry and no double charge.
 */
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/admin/accounts.js';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { createKey, type KeyBudgetInput } from '../../src/admin/keys.js';
import { costOfTokens, formatUsd, usdToNanos } from '../../src/billing/money.js';
import { boundInputTokens } from '../../src/protocol/input-bound.js';
import { TOKENS_PER_IMAGE } from '../../src/protocol/tokens.js';
import type { Store } from '../../src/store/store.js';
import { adminClient } from '../support/admin-client.js';
import { postChat as post, SCALE_SETUPS, startScaleCluster, type ScaleCluster } from '../support/scale-cluster.js';
import { waitFor } from '../support/wait-for.js';

const run = promisify(execFile);
const MAIN = join(resolve(import.meta.dirname, '../..'), 'dist/cli/main.js');
const OUTPUT_PRICE = usdToNanos('4');
const INPUT_PRICE = usdToNanos('1');
const HOLD_TTL_SECONDS = 3;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

for (const setup of SCALE_SETUPS) {
  if (!setup.enabled) console.info(`scale-out suite "${setup.name}" skipped: ${setup.skipReason}.`);

  describe.skipIf(!setup.enabled)(setup.name, () => {
    let cluster: ScaleCluster;
    let store: Store;
    const bases = () => cluster.bases();

    beforeAll(async () => {
      cluster = await startScaleCluster(setup, { hold_ttl_seconds: HOLD_TTL_SECONDS, checkpoint_seconds: 0.05 });
      store = cluster.store;
    }, 60_000);

    afterAll(() => cluster?.stop(), 60_000);

    /** After every hold has ended: the balance is credits less charges (excess never debited) and ≥ 0. */
    async function settledAccount(accountId: string) {
      await waitFor(async () => (await store.countOpenHolds(accountId)) === 0, 10_000);
      const ledger = await store.listLedger(accountId);
      const sum = (kind: string) => ledger.filter((entry) => entry.kind === kind).reduce((total, entry) => total + entry.amountNanos, 0n);
      const account = (await store.findAccount(accountId))!;
      expect(account.balanceNanos).toBeGreaterThanOrEqual(0n);
      expect(account.balanceNanos).toBe(sum('credit') - sum('charge'));
      return { ledger, excess: sum('excess'), charges: ledger.filter((entry) => entry.kind === 'charge') };
    }

    async function newKey(balanceUsd: string, requestsPerWindow?: number, budget?: KeyBudgetInput) {
      const account = await createAccount(store, { name: `scale-${Math.random().toString(36).slice(2)}`, balanceUsd }, CLI_ACTOR);
      const created = await createKey(store, { accountRef: account.id, ...(requestsPerWindow ? { requestsPerWindow } : {}), ...(budget ? { budget } : {}) }, CLI_ACTOR);
      return { accountId: account.id, keyId: created.key.id, secret: created.secret };
    }

    /**
     * Whether every process refuses (401) `secret` a second after a change. One request each: every
     * refusal counts against this address's failed authentications, shared by the instances.
     */
    async function refusedEverywhereAfterASecond(secret: string, body: object): Promise<boolean> {
      await sleep(1000);
      const statuses = await Promise.all(bases().map(async (base) => (await post(base, secret, body)).status));
      return statuses.every((status) => status === 401);
    }

    it('a shared limit of N requests per window admits exactly N across them', async () => {
      const { secret } = await newKey('5', 12);
      const body = { model: 'model-5.6-mini', messages: [{ role: 'user', content: 'count me' }], max_tokens: 20 };
      const responses = await Promise.all(Array.from({ length: 30 }, (_, index) => post(bases()[index % bases().length]!, secret, body)));
      await Promise.all(responses.map((response) => response.text()));
      const statuses = responses.map((response) => response.status);
      expect(statuses.filter((status) => status === 200)).toHaveLength(12);
      expect(statuses.filter((status) => status === 429)).toHaveLength(18);
    });

    it('60 concurrent requests on a balance that covers 10: never below zero, one charge each', async () => {
      const body = { model: 'slow-model', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 100 };
      const hold = costOfTokens(boundInputTokens(body, { imageTokens: TOKENS_PER_IMAGE }), INPUT_PRICE) + costOfTokens(100, OUTPUT_PRICE);
      const { accountId, secret } = await newKey('0');
      await store.credit(accountId, hold * 10n, 'ten holds');
      const responses = await Promise.all(Array.from({ length: 60 }, (_, index) => post(bases()[index % bases().length]!, secret, body)));
      await Promise.all(responses.map((response) => response.text()));
      const admitted = responses.filter((response) => response.status === 200).map((response) => response.headers.get('x-request-id'));
      expect(responses.every((response) => response.status === 200 || response.status === 403)).toBe(true);
      expect(admitted.length).toBeGreaterThanOrEqual(10);
      await waitFor(async () => (await store.countOpenHolds(accountId)) === 0, 10_000);
      const ledger = await store.listLedger(accountId);
      const charges = ledger.filter((entry) => entry.kind === 'charge');
      const credits = ledger.filter((entry) => entry.kind === 'credit').reduce((sum, entry) => sum + entry.amountNanos, 0n);
      const account = (await store.findAccount(accountId))!;
      expect(account.balanceNanos).toBeGreaterThanOrEqual(0n);
      expect(account.balanceNanos).toBe(credits - charges.reduce((sum, entry) => sum + entry.amountNanos, 0n));
      expect(charges.map((charge) => charge.requestId).sort()).toEqual([...admitted].sort());
    }, 30_000);

    it('50 concurrent requests carrying a 1 MB schema on $0.05, spread over every process: the balance stays ≥ 0', async () => {
      const { accountId, secret } = await newKey('0.05');
      const properties: Record<string, unknown> = {};
      for (let index = 0; index < 20_000; index += 1) properties[`field_${index}`] = { type: 'string', description: `Field ${index} of the record, as text.` };
      expect(JSON.stringify(properties).length).toBeGreaterThan(1_000_000);
      const body = { model: 'relay-model', messages: [{ role: 'user', content: 'Hi' }], response_format: { type: 'json_schema', json_schema: { name: 'r', schema: { type: 'object', properties } } } };
      const responses = await Promise.all(Array.from({ length: 50 }, (_, index) => post(bases()[index % bases().length]!, secret, body)));
      await Promise.all(responses.map((response) => response.text()));
      expect(responses.map((response) => response.status)).toEqual(Array(50).fill(403));
      const { charges } = await settledAccount(accountId);
      expect(charges).toEqual([]);
    }, 60_000);

    it('an upstream reporting 100× the input, in a burst over every process: the balance stays ≥ 0, the excess is recorded', async () => {
      const { accountId, secret } = await newKey('0.01');
      const body = { model: 'relay-model', messages: [{ role: 'user', content: 'report-100x please' }] };
      const responses = await Promise.all(Array.from({ length: 40 }, (_, index) => post(bases()[index % bases().length]!, secret, body)));
      await Promise.all(responses.map((response) => response.text()));
      const { charges, excess, ledger } = await settledAccount(accountId);
      expect(charges.length).toBeGreaterThan(0);
      expect(excess).toBeGreaterThan(0n);
      expect(ledger.filter((entry) => entry.kind === 'excess')).toHaveLength(charges.length);
    }, 30_000);

    it('a key disabled through one process is refused by all within a second', async () => {
      const { keyId, secret } = await newKey('1');
      const body = { model: 'model-5.6-mini', messages: [{ role: 'user', content: 'x' }], max_tokens: 20 };
      for (const base of bases()) expect((await post(base, secret, body)).status).toBe(200);
      await run(process.execPath, [MAIN, 'keys', 'disable', keyId], { env: { ...process.env, ...cluster.env } });
      await sleep(1000);
      const after = await Promise.all(Array.from({ length: 8 }, (_, index) => post(bases()[index % bases().length]!, secret, body)));
      expect(after.map((response) => response.status)).toEqual(Array(8).fill(401));
    }, 20_000);

    it('killing a process mid-stream leaves no hold after expiry, and bills what streamed until its last checkpoint once', async () => {
      const { accountId, secret } = await newKey('1');
      const victim = cluster.processes[0]!;
      const response = await post(victim.baseUrl, secret, { model: 'slow-model', messages: [{ role: 'user', content: 'long' }], stream: true });
      const reader = response.body!.getReader();
      await reader.read();
      expect(await store.countOpenHolds(accountId)).toBe(1);
      const requestId = response.headers.get('x-request-id');
      // Let it stream past a checkpoint: what it delivered until then is billed despite the crash.
      const until = Date.now() + 200;
      while (Date.now() < until) await reader.read();
      await setup.kill(victim);
      await reader.read().catch(() => undefined);
      await waitFor(async () => (await store.countOpenHolds(accountId)) === 0, (HOLD_TTL_SECONDS + 20) * 1000);
      const charges = (await store.listLedger(accountId)).filter((entry) => entry.kind === 'charge' && entry.requestId === requestId);
      expect(charges).toHaveLength(1);
      expect(charges[0]!.outputTokens).toBeGreaterThan(0);
      expect(charges[0]!.note).toMatch(/hold expired/);
      const account = (await store.findAccount(accountId))!;
      expect(account.reservedNanos).toBe(0n);
      await cluster.serveAgain();
    }, 40_000);

    it('60 concurrent requests over every process on a key budget that covers 10 admit exactly 10', async () => {
      // The upstream reports 100× the input: every charge is capped at its hold (an excess shows it),
      // so each admitted request spends exactly one hold.
      const body = { model: 'relay-model', messages: [{ role: 'user', content: 'report-100x budget' }], max_tokens: 20 };
      const probe = await newKey('100');
      expect((await post(bases()[0]!, probe.secret, body)).status).toBe(200);
      const { charges: probeCharges, excess } = await settledAccount(probe.accountId);
      expect(excess).toBeGreaterThan(0n);
      const hold = probeCharges[0]!.amountNanos;

      const { accountId, secret } = await newKey('100', undefined, { limitUsd: formatUsd(hold * 10n), period: 'day' });
      // Every process (each worker too) learns the key first, for nothing: 60 first lookups at once
      // would count against the address's failed-authentication allowance until they answer.
      for (const base of bases()) {
        for (let round = 0; round < 4; round += 1) expect((await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(200);
      }
      const responses = await Promise.all(Array.from({ length: 60 }, (_, index) => post(bases()[index % bases().length]!, secret, body)));
      const answers = await Promise.all(responses.map(async (response) => ({ status: response.status, text: await response.text(), requestId: response.headers.get('x-request-id') })));
      const admitted = answers.filter((answer) => answer.status === 200);
      expect(admitted).toHaveLength(10);
      const refused = answers.filter((answer) => answer.status === 403);
      expect(refused).toHaveLength(50);
      for (const answer of refused) expect(JSON.parse(answer.text)).toMatchObject({ error: { code: 'insufficient_user_quota', message: expect.stringMatching(/key budget/) } });
      const { charges } = await settledAccount(accountId);
      expect(charges.map((charge) => charge.requestId).sort()).toEqual(admitted.map((answer) => answer.requestId).sort());
      expect(charges.reduce((sum, charge) => sum + charge.amountNanos, 0n)).toBe(hold * 10n);
    }, 30_000);

    // Last: its refusals count against this address's failed authentications (shared by the
    // instances), which the first requests of the bursts above must not find used up.
    it("a key disabled, rotated or deleted, or its account disabled, through one process's admin API is refused by all within a second", async () => {
      const operator = (await createAdminToken(store, { role: 'operator' }, CLI_ACTOR)).secret;
      const admin = adminClient(bases()[0]!);
      const body = { model: 'model-5.6-mini', messages: [{ role: 'user', content: 'x' }], max_tokens: 20 };
      // One key (and account) per change, the changes at once: each waits out its own second.
      const [forAccount, forDisable, forRotate] = await Promise.all([newKey('1'), newKey('1'), newKey('1')]);
      for (const { secret } of [forAccount, forDisable, forRotate]) {
        for (const base of bases()) expect((await post(base, secret, body)).status).toBe(200);
      }

      const accountDisabled = async () => {
        const { accountId, secret } = forAccount;
        expect((await admin('POST', `/accounts/${accountId}/disable`, operator)).status).toBe(200);
        expect(await refusedEverywhereAfterASecond(secret, body)).toBe(true);
        expect((await admin('POST', `/accounts/${accountId}/enable`, operator)).status).toBe(200);
        // Enabled again: every process takes it back within a second too.
        await new Promise((resolve) => setTimeout(resolve, 1_100));
        for (const base of bases()) expect((await post(base, secret, body)).status).toBe(200);
      };
      const keyDisabled = async () => {
        const { keyId, secret } = forDisable;
        expect((await admin('POST', `/keys/${keyId}/disable`, operator)).status).toBe(200);
        expect(await refusedEverywhereAfterASecond(secret, body)).toBe(true);
        expect((await admin('POST', `/keys/${keyId}/enable`, operator)).status).toBe(200);
      };
      const keyRotatedThenDeleted = async () => {
        const { keyId, secret } = forRotate;
        const rotated = await admin('POST', `/keys/${keyId}/rotate`, operator);
        expect(rotated.status).toBe(200);
        expect(await refusedEverywhereAfterASecond(secret, body)).toBe(true);
        const fresh = String(rotated.body.key);
        for (const base of bases()) expect((await post(base, fresh, body)).status).toBe(200);

        expect((await admin('DELETE', `/keys/${keyId}`, operator)).status).toBe(200);
        expect(await refusedEverywhereAfterASecond(fresh, body)).toBe(true);
      };
      await Promise.all([accountDisabled(), keyDisabled(), keyRotatedThenDeleted()]);
    }, 20_000);
  });
}
