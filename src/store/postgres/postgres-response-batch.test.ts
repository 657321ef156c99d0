/**
 * Stored responses saved in batches on PostgreSQL (when TOLLGATE_TEST_POSTGRES_URL is set): saves
 * made together share one INSERT and each keeps its own result, exactly as saves made one by one
 * (store.test.ts covers those).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresUrl, type TestDatabase } from '../../../test/support/databases.js';
import { openStore } from '../open-store.js';
import type { Store, StoredResponse } from '../store.js';

const unique = (prefix: string): string => `${prefix}_${randomUUID().slice(0, 12)}`;

function storedResponse(accountId: string, id = unique('resp'), status = 'completed'): StoredResponse {
  return {
    id,
    accountId,
    response: { id, object: 'response', status, output: [{ type: 'message', content: [{ type: 'output_text', text: 'a "quoted" \\ line ✓' }] }] },
    inputItems: [{ type: 'message', role: 'user', content: 'hi' }],
    createdAt: new Date('2030-01-02T03:04:05.678Z'),
  };
}

describe.skipIf(postgresUrl === undefined)('stored responses saved in batches on PostgreSQL', () => {
  let database: TestDatabase;
  let store: Store;

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    store = await openStore(database.url);
  });

  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  async function newAccount(): Promise<string> {
    const id = unique('acct');
    await store.createAccount({ id, name: id, openingBalanceNanos: 0n });
    return id;
  }

  it('saves many at once, each found afterwards as it was saved', async () => {
    const accountId = await newAccount();
    const saved = Array.from({ length: 40 }, () => storedResponse(accountId));
    await Promise.all(saved.map((each) => store.saveResponse(each)));
    for (const each of saved) expect(await store.findResponse(each.id, accountId)).toEqual(each);
  });

  it("refuses alone a save over another account's response; the others of its batch are saved", async () => {
    const owner = await newAccount();
    const stranger = await newAccount();
    const taken = storedResponse(owner);
    await store.saveResponse(taken);
    const others = [storedResponse(stranger), storedResponse(stranger)];
    const outcomes = await Promise.allSettled([store.saveResponse(others[0]!), store.saveResponse({ ...taken, accountId: stranger }), store.saveResponse(others[1]!)]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ message: expect.stringMatching(/another account/) });
    expect(await store.findResponse(taken.id, owner)).toEqual(taken);
    for (const each of others) expect(await store.findResponse(each.id, stranger)).toEqual(each);
  });

  it('refuses alone a save for an unknown account, and keeps the later of two saves of one id', async () => {
    const accountId = await newAccount();
    const good = storedResponse(accountId);
    const twice = storedResponse(accountId);
    const later = storedResponse(accountId, twice.id, 'failed');
    const outcomes = await Promise.allSettled([
      store.saveResponse(good),
      store.saveResponse(storedResponse('no-such-account')),
      store.saveResponse(twice),
      store.saveResponse(later),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(await store.findResponse(good.id, accountId)).toEqual(good);
    expect(await store.findResponse(twice.id, accountId)).toEqual(later);
  });

  it('gives a new id to the first of two accounts saving it in one batch, as one after the other would', async () => {
    const first = await newAccount();
    const second = await newAccount();
    const mine = storedResponse(first);
    const outcomes = await Promise.allSettled([store.saveResponse(mine), store.saveResponse({ ...mine, accountId: second })]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected']);
    expect(await store.findResponse(mine.id, first)).toEqual(mine);
    expect(await store.findResponse(mine.id, second)).toBeUndefined();
  });

  it('checks a save before it is queued: a value that is not a JSON object fails its own call', async () => {
    const accountId = await newAccount();
    await expect(store.saveResponse({ ...storedResponse(accountId), response: [] as unknown as Record<string, unknown> })).rejects.toThrow(TypeError);
  });
});
