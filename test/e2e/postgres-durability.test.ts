/**
 * A complete answer was billed even if PostgreSQL itself crashes right after it (docs/architecture.md,
 * Money): the request path's batches commit without waiting for the disk, so this holds only if the
 * flush that every charge waits for really puts the WAL on disk. On a cluster of its own
 * (test/support/throwaway-postgres.ts) the test pauses the WAL writer, so nothing but the gateway's
 * own flush writes out what the batches committed; serves complete answers of each kind (chat and
 * Responses, JSON and streamed, the Responses ones stored), each read to its last byte; then kills
 * every process of the server at once, starts it again, and finds every charge and every stored
 * response there, and the balance its opening less the charges (test/support/postgres-crash.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from '../support/harness.js';
import { crashAfterServing, startGatewayOnOwnPostgres, type GatewayOnOwnPostgres } from '../support/postgres-crash.js';
import { throwawayPostgresMissing } from '../support/throwaway-postgres.js';

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
  let gateway: GatewayOnOwnPostgres | undefined;

  beforeAll(async () => {
    gateway = await startGatewayOnOwnPostgres();
  }, 60_000);

  afterAll(() => gateway?.close(), 30_000);

  it('finds every charge and stored response after the server is killed with its WAL writer paused', async () => {
    const { harness } = gateway!;
    const { accountId, secret } = await harness.newAccount(OPENING_USD);
    const kinds = Object.values(asks);
    const serve = async () => {
      const served: Served[] = [];
      for (let index = 0; index < ANSWERS; index++) served.push(await kinds[index % kinds.length]!(harness, secret));
      return served;
    };
    await crashAfterServing(gateway!, { accountId, openingUsd: OPENING_USD }, serve, async (served, { store, charges }) => {
      expect(charges.map((charge) => charge.requestId).sort()).toEqual(served.map((answer) => answer.requestId).sort());
      for (const charge of charges) expect(charge.amountNanos).toBeGreaterThan(0n);
      expect(await store.countOpenHolds(accountId)).toBe(0);
      for (const { responseId } of served) {
        if (responseId !== undefined) expect(await store.findResponse(responseId, accountId), responseId).toBeDefined();
      }
    });
  }, 60_000);
});
