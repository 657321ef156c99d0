/**
 * Quota slices across processes (docs/architecture.md, Money: "Quota slices"): three instances on
 * one PostgreSQL and Redis, and `serve --workers 2` on SQLite with slices turned on, each process
 * holding a slice of the account when the test starts its work (checked in the slice table, so no
 * test can pass on the exact path alone):
 * - 60 concurrent requests on a balance that covers 10 (the slices' unused parts counted in it)
 *   admit exactly 10, each charged once, the balance never below zero, some admitted from slices;
 * - 60 concurrent requests on a process without a slice get what the slices of the others held
 *   back (their owners give it back when recalled), exactly 10 again;
 * - kill -9 of a process holding a slice with streams running past a checkpoint: after the lease
 *   the account reserves nothing (the slice's rest came back, the streams' holds expired), and each
 *   stream is billed once for what it served; killed right after answers admitted from a slice,
 *   their charges are there (settled before the last byte);
 * - a credit made while every process holds a slice is spendable at once on every process.
 */
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/admin/accounts.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { createKey } from '../../src/admin/keys.js';
import { costOfTokens, formatUsd, usdToNanos } from '../../src/billing/money.js';
import { boundInputTokens } from '../../src/protocol/input-bound.js';
import type { Store } from '../../src/store/store.js';
import { rawRows } from '../support/raw-rows.js';
import { postChat as post, SCALE_SETUPS, startScaleCluster, type ScaleCluster } from '../support/scale-cluster.js';
import { waitFor } from '../support/wait-for.js';

const HOLD_TTL_SECONDS = 3;
/** The upstream reports 100× the input: every charge is capped at its hold, so each admitted request spends exactly one. */
const CAPPED = { model: 'relay-model', messages: [{ role: 'user', content: 'report-100x slices' }], max_tokens: 100 };
/** About what CAPPED holds (the relay's 10% input margin; the body forwarded differs by a few bytes), checked against the charges. */
const ESTIMATED_HOLD = costOfTokens(Math.ceil(boundInputTokens(CAPPED, { imageTokens: 2_500 }) * 1.1), usdToNanos('1')) + costOfTokens(100, usdToNanos('4'));
/** A slice fits two such holds and not three: the rest of each is what the recall must bring back. */
const SLICE = (ESTIMATED_HOLD * 26n) / 10n;
/** Streams slow enough that those sent at once run at once (a busy account). */
const SLOW_STREAM = { model: 'slow-model', messages: [{ role: 'user', content: 'busy' }], max_tokens: 20, stream: true };

for (const setup of SCALE_SETUPS) {
  if (!setup.enabled) console.info(`quota-slices suite "${setup.name}" skipped: ${setup.skipReason}.`);

  describe.skipIf(!setup.enabled)(`quota slices: ${setup.name}`, () => {
    let cluster: ScaleCluster;
    let store: Store;
    const bases = () => cluster.bases();

    beforeAll(async () => {
      cluster = await startScaleCluster(setup, { hold_ttl_seconds: HOLD_TTL_SECONDS, checkpoint_seconds: 0.05, slices: { enabled: true, size_usd: formatUsd(SLICE), headroom: 2, idle_seconds: 600 } });
      store = cluster.store;
    }, 60_000);

    afterAll(() => cluster?.stop(), 60_000);

    async function newKey(balanceUsd: string) {
      const account = await createAccount(store, { name: `slices-${Math.random().toString(36).slice(2)}`, balanceUsd }, CLI_ACTOR);
      const created = await createKey(store, { accountRef: account.id }, CLI_ACTOR);
      // Every process (each worker too) learns the key first, so the bursts below meet no first lookups.
      for (const base of bases()) {
        for (let round = 0; round < 4; round += 1) expect((await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${created.secret}` } })).status).toBe(200);
      }
      return { accountId: account.id, secret: created.secret };
    }

    const activeOwners = async (accountId: string) => new Set((await store.listSlices(accountId)).filter((slice) => slice.state === 'active').map((slice) => slice.owner));

    /**
     * What one capped request holds (one alone on the account: no slice yet, its charge is its
     * hold), then requests running at once on each of `targets` (slow streams, four on fresh
     * connections so that workers sharing a port each get two) until `owners` processes hold an
     * active slice of the account: a busy account gets one.
     */
    async function slicesOut(accountId: string, secret: string, targets = bases(), owners = setup.servers): Promise<bigint> {
      const probe = await post(targets[0]!, secret, CAPPED);
      expect(probe.status).toBe(200);
      const requestId = probe.headers.get('x-request-id');
      await probe.text();
      const hold = (await store.listLedger(accountId)).find((entry) => entry.kind === 'charge' && entry.requestId === requestId)!.amountNanos;
      // What the tests rely on: a slice fits two holds and not three.
      expect(2n * hold <= SLICE && SLICE < 3n * hold).toBe(true);
      for (let round = 0; round < 10 && (await activeOwners(accountId)).size < owners; round += 1) {
        const fresh = new Agent();
        const answers = await Promise.all(targets.flatMap((base) => [0, 1, 2, 3].map(() => post(base, secret, SLOW_STREAM, fresh))));
        for (const answer of answers) expect(answer.status).toBe(200);
        await Promise.all(answers.map((answer) => answer.text()));
        await fresh.close();
      }
      expect((await activeOwners(accountId)).size).toBe(owners);
      await waitFor(async () => (await store.countOpenHolds(accountId)) === 0);
      return hold;
    }

    /** The account's raw reserved amount and the part of it its slices make up. */
    async function reserved(accountId: string): Promise<{ reserved: bigint; sliced: bigint }> {
      const [row] = await rawRows(cluster.database, 'SELECT reserved_nanos, sliced_nanos FROM accounts WHERE id = ?', [accountId]);
      return { reserved: row!.reserved_nanos as bigint, sliced: row!.sliced_nanos as bigint };
    }

    it('60 concurrent requests on a balance that covers 10, with slices out on every process, admit exactly 10', async () => {
      const { accountId, secret } = await newKey('1');
      const hold = await slicesOut(accountId, secret);
      const before = (await store.listLedger(accountId)).length;
      // What is left to spend, the slices' unused parts included, is ten holds.
      const account = (await store.findAccount(accountId))!;
      expect((await reserved(accountId)).sliced).toBeGreaterThan(0n);
      expect(await store.debit(accountId, account.balanceNanos - 10n * hold, 'leave ten holds')).toBeDefined();

      const responses = await Promise.all(Array.from({ length: 60 }, (_, index) => post(bases()[index % bases().length]!, secret, CAPPED)));
      const answers = await Promise.all(responses.map(async (response) => ({ status: response.status, text: await response.text(), requestId: response.headers.get('x-request-id') })));
      const admitted = answers.filter((answer) => answer.status === 200);
      expect(admitted).toHaveLength(10);
      const refused = answers.filter((answer) => answer.status === 403);
      expect(refused).toHaveLength(50);
      for (const answer of refused) expect(JSON.parse(answer.text)).toMatchObject({ error: { code: 'insufficient_user_quota' } });

      await waitFor(async () => (await store.countOpenHolds(accountId)) === 0);
      const charges = (await store.listLedger(accountId)).slice(before).filter((entry) => entry.kind === 'charge');
      expect(charges.map((charge) => charge.requestId).sort()).toEqual(admitted.map((answer) => answer.requestId).sort());
      expect(charges.reduce((sum, charge) => sum + charge.amountNanos, 0n)).toBe(10n * hold);
      expect((await store.findAccount(accountId))!.balanceNanos).toBe(0n);
      // Some were admitted in memory, from a slice: their rows name it.
      const fromSlices = await rawRows(cluster.database, 'SELECT request_id FROM holds WHERE account_id = ? AND slice_id IS NOT NULL', [accountId]);
      const burst = new Set(admitted.map((answer) => answer.requestId));
      expect(fromSlices.filter((row) => burst.has(row.request_id as string)).length).toBeGreaterThan(0);
    }, 60_000);

    it.skipIf(setup.servers < 3)("60 concurrent requests on a process without a slice get what the other processes' slices held back", async () => {
      const { accountId, secret } = await newKey('1');
      const [holderA, holderB, other] = bases();
      const hold = await slicesOut(accountId, secret, [holderA!, holderB!], 2);
      const account = (await store.findAccount(accountId))!;
      expect(await store.debit(accountId, account.balanceNanos - 10n * hold, 'leave ten holds')).toBeDefined();
      // Fewer than ten holds are unreserved: the rest is in the two slices, whose owners see no request.
      const { sliced } = await reserved(accountId);
      expect(10n * hold - sliced).toBeLessThan(10n * hold - 2n * hold);

      const responses = await Promise.all(Array.from({ length: 60 }, () => post(other!, secret, CAPPED)));
      const statuses = await Promise.all(responses.map(async (response) => (await response.text(), response.status)));
      expect(statuses.filter((status) => status === 200)).toHaveLength(10);
      expect(statuses.filter((status) => status === 403)).toHaveLength(50);
      await waitFor(async () => (await store.countOpenHolds(accountId)) === 0);
      expect((await store.findAccount(accountId))!.balanceNanos).toBe(0n);
      // The holders gave their slices' unused parts back when recalled.
      expect((await store.listSlices(accountId)).filter((slice) => slice.state === 'active' && slice.amountNanos >= hold)).toEqual([]);
    }, 60_000);

    it('kill -9 of a process holding a slice, its streams past a checkpoint: the slice comes back after its lease, each stream billed once', async () => {
      const { accountId, secret } = await newKey('1');
      const victim = cluster.processes[0]!;
      // Only the victim (its workers) holds slices of this account.
      let requestIds: Array<string | null> = [];
      let readers: Array<ReadableStreamDefaultReader<Uint8Array>> = [];
      // Which worker takes a stream, and how much of its slice earlier answers used, is up to the
      // machine: on a busy one a stream can fall to the exact path. Such a round is cancelled
      // (and billed) and the slices given out again; the assertions stand on the last round.
      for (let round = 1; ; round += 1) {
        await slicesOut(accountId, secret, [victim.baseUrl], cluster.processes.length > 1 ? 1 : setup.servers);
        const streams = await Promise.all([0, 1].map(() => post(victim.baseUrl, secret, { model: 'slow-model', messages: [{ role: 'user', content: 'long' }], max_tokens: 100, stream: true })));
        requestIds = streams.map((response) => response.headers.get('x-request-id'));
        readers = streams.map((response) => response.body!.getReader());
        // Past a checkpoint: each stream's hold moved from its slice into a row.
        const until = Date.now() + 300;
        while (Date.now() < until) await Promise.all(readers.map((reader) => reader.read()));
        const rows = await rawRows(cluster.database, "SELECT request_id, slice_id FROM holds WHERE account_id = ? AND state = 'open'", [accountId]);
        const fromSlices = rows.length === 2 && rows.every((row) => row.slice_id !== null) && (await reserved(accountId)).sliced > 0n;
        if (!fromSlices && round < 4) {
          await Promise.all(readers.map((reader) => reader.cancel()));
          await waitFor(async () => (await store.countOpenHolds(accountId)) === 0, 10_000);
          continue;
        }
        expect(rows.map((row) => row.request_id).sort()).toEqual([...requestIds].sort());
        expect(rows.every((row) => row.slice_id !== null)).toBe(true);
        expect((await reserved(accountId)).sliced).toBeGreaterThan(0n);
        break;
      }

      await setup.kill(victim);
      await Promise.all(readers.map((reader) => reader.read().catch(() => undefined)));
      // After the lease (and the holds' TTL) another process's sweep ends them.
      await waitFor(async () => (await store.countOpenHolds(accountId)) === 0 && (await store.listSlices(accountId)).length === 0, (HOLD_TTL_SECONDS + 20) * 1000);
      expect(await reserved(accountId)).toEqual({ reserved: 0n, sliced: 0n });
      const charges = (await store.listLedger(accountId)).filter((entry) => entry.kind === 'charge' && requestIds.includes(entry.requestId));
      expect(charges.map((charge) => charge.requestId).sort()).toEqual([...requestIds].sort());
      for (const charge of charges) {
        expect(charge.outputTokens).toBeGreaterThan(0);
        expect(charge.note).toMatch(/hold expired/);
      }
      await cluster.serveAgain();
    }, 60_000);

    it('an answer admitted from a slice was billed before its last byte: killed right after it, its charge is there', async () => {
      const { accountId, secret } = await newKey('1');
      const victim = cluster.processes[0]!;
      let requestIds: Array<string | null> = [];
      // As above: a round in which an answer fell to the exact path is done again.
      for (let round = 1; round <= 4; round += 1) {
        await slicesOut(accountId, secret, [victim.baseUrl], cluster.processes.length > 1 ? 1 : setup.servers);
        const answers = await Promise.all([0, 1].map(() => post(victim.baseUrl, secret, { ...CAPPED, stream: true })));
        requestIds = answers.map((answer) => answer.headers.get('x-request-id'));
        for (const answer of answers) expect(await answer.text()).toContain('[DONE]');
        const sliced = await rawRows(cluster.database, 'SELECT request_id FROM holds WHERE account_id = ? AND slice_id IS NOT NULL', [accountId]);
        if (sliced.filter((row) => requestIds.includes(row.request_id as string)).length === 2) break;
      }
      await setup.kill(victim);
      const rows = await rawRows(cluster.database, 'SELECT request_id, state, slice_id FROM holds WHERE account_id = ? AND slice_id IS NOT NULL', [accountId]);
      expect(rows.filter((row) => requestIds.includes(row.request_id as string)).map((row) => row.state)).toEqual(['settled', 'settled']);
      const charges = (await store.listLedger(accountId)).filter((entry) => entry.kind === 'charge' && requestIds.includes(entry.requestId));
      expect(charges).toHaveLength(2);
      await cluster.serveAgain();
    }, 60_000);

    it('a credit made while every process holds a slice is spendable at once on every process', async () => {
      const { accountId, secret } = await newKey('1');
      await slicesOut(accountId, secret);
      // Nothing unreserved: all that is left is in the slices.
      const account = (await store.findAccount(accountId))!;
      const { sliced } = await reserved(accountId);
      expect(await store.debit(accountId, account.balanceNanos - sliced, 'leave only the slices')).toBeDefined();
      // A request no slice can hold, on every process at once, right after the credit.
      const big = { model: 'model-5.6', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 4096 };
      await store.credit(accountId, usdToNanos('1'), 'top up');
      const answers = await Promise.all(bases().flatMap((base) => [post(base, secret, big), post(base, secret, big)]));
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
      await Promise.all(answers.map((answer) => answer.text()));
      await waitFor(async () => (await store.countOpenHolds(accountId)) === 0);
      expect((await store.findAccount(accountId))!.balanceNanos).toBeGreaterThan(0n);
    }, 60_000);
  });
}
