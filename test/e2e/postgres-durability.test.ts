/**
 * A complete answer was billed even if PostgreSQL itself crashes right after it (docs/architecture.md,
 * Money): the request path's batches commit without waiting for the disk, so this holds only if the
 * flush that every charge waits for really puts the WAL on disk. On a cluster of its own
 * (test/support/throwaway-postgres.ts) the test pauses the WAL writer, so nothing but the gateway's
 * own flush writes out what the batches committed; serves complete answers of each kind (chat and
 * Responses, JSON and streamed, the Responses ones stored), each read to its last byte; then kills
 * every process of the server at once, starts it again, and finds every charge and every stored
 * response there, and the balance its opening less the charges.
 *
 * The request log is off: its own writes commit synchronously and so would flush the WAL, and with
 * it the charges before them, by chance; the promise must hold without them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usdToNanos } from '../../src/billing/money.js';
import { openStore } from '../../src/store/open-store.js';
import { testCatalog } from '../support/catalog.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startThrowawayCluster, throwawayPostgresMissing, type ThrowawayCluster } from '../support/throwaway-postgres.js';

const ANSWERS = 16;
const OPENING_USD = '1';
const question = 'Will this be billed if the database dies?';

interface Served {
  requestId: string;
  /** The stored response's id (Responses answers). */
  responseId?: string;
}

type Ask = (harness: Harness, secret: string) => Promise<Served>;

/** Reads the whole answer; returns its request id and the text. */
async function complete(response: Response): Promise<{ requestId: string; text: string }> {
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return { requestId: response.headers.get('x-request-id')!, text };
}

const asks: Record<string, Ask> = {
  'chat, JSON': async (harness, secret) => {
    const { requestId, text } = await complete(await harness.post('/v1/chat/completions', { model: 'model-5.6-mini', messages: [{ role: 'user', content: question }] }, secret));
    expect(JSON.parse(text)).toMatchObject({ object: 'chat.completion' });
    return { requestId };
  },
  'chat, streamed': async (harness, secret) => {
    const body = { model: 'model-5.6-mini', messages: [{ role: 'user', content: question }], stream: true, stream_options: { include_usage: true } };
    const { requestId, text } = await complete(await harness.post('/v1/chat/completions', body, secret));
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    return { requestId };
  },
  'responses, JSON, stored': async (harness, secret) => {
    const { requestId, text } = await complete(await harness.post('/v1/responses', { model: 'model-5.6-mini', input: question, store: true }, secret));
    const response = JSON.parse(text) as { id: string; status: string };
    expect(response.status).toBe('completed');
    return { requestId, responseId: response.id };
  },
  'responses, streamed, stored': async (harness, secret) => {
    const { requestId, text } = await complete(await harness.post('/v1/responses', { model: 'model-5.6-mini', input: question, store: true, stream: true }, secret));
    const completed = text.split('\n').find((line) => line.startsWith('data: ') && line.includes('"response.completed"'));
    expect(completed).toBeDefined();
    return { requestId, responseId: (JSON.parse(completed!.slice('data: '.length)) as { response: { id: string } }).response.id };
  },
};

const missing = throwawayPostgresMissing();

describe.skipIf(missing !== null)('a complete answer is billed before its last byte, through a PostgreSQL crash', () => {
  let cluster: ThrowawayCluster | undefined;
  let harness: Harness | undefined;

  beforeAll(async () => {
    cluster = await startThrowawayCluster();
    const url = cluster.url;
    const catalog = { ...(testCatalog() as Record<string, unknown>), log: { enabled: false } };
    // The cluster is the test's: nothing to drop, it goes with its folder.
    harness = await startHarness({ catalog, sharedDatabase: { engine: 'postgres', url, drop: async () => undefined } });
  }, 60_000);

  afterAll(async () => {
    try {
      await harness?.close();
    } finally {
      cluster?.destroy();
    }
  }, 30_000);

  it('finds every charge and stored response after the server is killed with its WAL writer paused', async () => {
    const gateway = harness!;
    const server = cluster!;
    const { accountId, secret } = await gateway.newAccount(OPENING_USD);

    server.pauseWalWriter();
    const kinds = Object.values(asks);
    const served: Served[] = [];
    for (let index = 0; index < ANSWERS; index++) served.push(await kinds[index % kinds.length]!(gateway, secret));
    // Acknowledged: each answer's charge was committed before its last byte.
    const acknowledged = (await gateway.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
    await server.kill();

    server.start();
    // Read through new connections, as a gateway started after the crash would.
    const store = await openStore(server.url, { migrate: false });
    try {
      const charges = (await store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
      expect(charges.map((charge) => charge.requestId).sort()).toEqual(served.map((answer) => answer.requestId).sort());
      expect(charges).toEqual(acknowledged);
      for (const charge of charges) expect(charge.amountNanos).toBeGreaterThan(0n);
      const charged = charges.reduce((sum, charge) => sum + charge.amountNanos, 0n);
      expect((await store.findAccount(accountId))!.balanceNanos).toBe(usdToNanos(OPENING_USD) - charged);
      expect(await store.countOpenHolds(accountId)).toBe(0);
      for (const { responseId } of served) {
        if (responseId !== undefined) expect(await store.findResponse(responseId, accountId), responseId).toBeDefined();
      }
    } finally {
      await store.close();
    }
  }, 60_000);
});
