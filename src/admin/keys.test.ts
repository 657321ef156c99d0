import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashKeySecret } from '../auth/key-secret.js';
import { openStore } from '../store/open-store.js';
import type { AccountRecord, ApiKeyRecord, AccountStore, OperationsStore } from '../store/store.js';
import { createAccount } from './accounts.js';
import { AdminError } from './admin-error.js';
import { CLI_ACTOR } from './audit.js';
import { keyStatus } from './key-status.js';
import { createKey, listKeys, setKeyDisabled } from './keys.js';

let directory: string;
let store: AccountStore & OperationsStore;
let account: AccountRecord;

beforeEach(async () => {
  directory = mkdtempSync(join(tmpdir(), 'tollgate-admin-keys-'));
  store = await openStore(`sqlite:${join(directory, 'tollgate.db')}`, { migrate: true });
  account = await createAccount(store, { name: 'acme', balanceUsd: '5' }, CLI_ACTOR);
});

afterEach(async () => {
  await store.close();
  rmSync(directory, { recursive: true, force: true });
});

async function rejection(promise: Promise<unknown>): Promise<AdminError> {
  const error: unknown = await promise.then(
    () => new Error('expected a rejection'),
    (reason: unknown) => reason,
  );
  if (!(error instanceof AdminError)) throw error;
  return error;
}

describe('createKey', () => {
  it('stores only the hash and prefix of a fresh secret that then authenticates', async () => {
    const { key, secret } = await createKey(store, { accountRef: 'acme' }, CLI_ACTOR);
    expect(secret).toMatch(/^sk-tg-[0-9A-Za-z]{40}$/);
    expect(key.id).toMatch(/^key_[0-9A-Za-z]{20}$/);
    expect(key.prefix).toBe(secret.slice(0, 12));
    expect(key.hash).toBe(hashKeySecret(secret));
    expect(key).toMatchObject({ accountId: account.id, name: null, models: null, requestsPerWindow: null, tokensPerMinute: null, expiresAt: null, disabled: false });
    const found = await store.findKeyByHash(hashKeySecret(secret));
    expect(found?.key).toEqual(key);
    expect(found?.account.id).toBe(account.id);
    expect(JSON.stringify(await store.listKeys())).not.toContain(secret);
  });

  it('keeps the name, models, limits and expiry it is given', async () => {
    const expiresAt = new Date(Date.now() + 86_400_000);
    const { key } = await createKey(store, {
      accountRef: account.id,
      name: ' ci ',
      models: [' model-5.6', 'model-5.6-mini', 'model-5.6'],
      requestsPerWindow: 10,
      tokensPerMinute: 5000,
      expiresAt,
    }, CLI_ACTOR);
    expect(key).toMatchObject({ name: 'ci', models: ['model-5.6', 'model-5.6-mini'], requestsPerWindow: 10, tokensPerMinute: 5000, expiresAt });
    expect(await store.findKey(key.id)).toEqual(key);
  });

  it('gives every key a different secret', async () => {
    const first = await createKey(store, { accountRef: 'acme' }, CLI_ACTOR);
    const second = await createKey(store, { accountRef: 'acme' }, CLI_ACTOR);
    expect(first.secret).not.toBe(second.secret);
    expect(first.key.id).not.toBe(second.key.id);
  });

  it.each([
    [{ accountRef: 'nobody' }, 'not_found', /no account with id or name "nobody"/],
    [{ accountRef: 'acme', requestsPerWindow: 0 }, 'invalid_input', /requests per window must be a whole number of at least 1/],
    [{ accountRef: 'acme', tokensPerMinute: -5 }, 'invalid_input', /tokens per minute must be a whole number/],
    [{ accountRef: 'acme', requestsPerWindow: 1.5 }, 'invalid_input', /requests per window/],
    [{ accountRef: 'acme', models: [] }, 'invalid_input', /models must list one or more/],
    [{ accountRef: 'acme', models: ['a', ' '] }, 'invalid_input', /models must list one or more/],
    [{ accountRef: 'acme', expiresAt: new Date(Date.now() - 1000) }, 'invalid_input', /expiry must be in the future/],
    [{ accountRef: 'acme', expiresAt: new Date(Number.NaN) }, 'invalid_input', /expiry is not a valid date/],
    [{ accountRef: 'acme', name: 'x'.repeat(101) }, 'invalid_input', /key name must be at most 100/],
  ])('refuses %o and stores nothing', async (input, kind, message) => {
    const error = await rejection(createKey(store, input, CLI_ACTOR));
    expect(error.kind).toBe(kind);
    expect(error.message).toMatch(message);
    expect(await store.listKeys()).toEqual([]);
  });
});

describe('listKeys', () => {
  it('lists all keys or one account’s, by id or name', async () => {
    const other = await createAccount(store, { name: 'other' }, CLI_ACTOR);
    const mine = await createKey(store, { accountRef: 'acme' }, CLI_ACTOR);
    const theirs = await createKey(store, { accountRef: other.id }, CLI_ACTOR);
    expect((await listKeys(store)).map((key) => key.id).sort()).toEqual([mine.key.id, theirs.key.id].sort());
    expect((await listKeys(store, { accountRef: 'acme' })).map((key) => key.id)).toEqual([mine.key.id]);
    expect((await listKeys(store, { accountRef: other.id })).map((key) => key.id)).toEqual([theirs.key.id]);
  });

  it('refuses an unknown account', async () => {
    expect((await rejection(listKeys(store, { accountRef: 'nobody' }))).kind).toBe('not_found');
  });
});

describe('setKeyDisabled', () => {
  it('disables and enables by id or prefix, and the store agrees', async () => {
    const { key, secret } = await createKey(store, { accountRef: 'acme' }, CLI_ACTOR);
    expect((await setKeyDisabled(store, key.prefix, true, CLI_ACTOR)).disabled).toBe(true);
    expect((await store.findKeyByHash(hashKeySecret(secret)))?.key.disabled).toBe(true);
    expect((await setKeyDisabled(store, key.id, false, CLI_ACTOR)).disabled).toBe(false);
    expect((await store.findKey(key.id))?.disabled).toBe(false);
  });

  it('bumps the revision so caches notice', async () => {
    const { key } = await createKey(store, { accountRef: 'acme' }, CLI_ACTOR);
    const before = await store.revision();
    await setKeyDisabled(store, key.id, true, CLI_ACTOR);
    expect(await store.revision()).toBeGreaterThan(before);
  });

  it.each(['key_unknown', 'sk-tg-nothing', ''])('refuses the unknown key %j', async (reference) => {
    const error = await rejection(setKeyDisabled(store, reference, true, CLI_ACTOR));
    expect(error.kind).toBe('not_found');
    expect(error.message).toBe(`no key with id or prefix ${JSON.stringify(reference)}`);
  });
});

describe('keyStatus', () => {
  const base: ApiKeyRecord = {
    id: 'key_x',
    accountId: 'acct_x',
    name: null,
    prefix: 'sk-tg-abcdef',
    hash: 'a'.repeat(64),
    models: null,
    requestsPerWindow: null,
    tokensPerMinute: null,
    expiresAt: null,
    disabled: false,
    createdAt: new Date('2025-01-01T00:00:00Z'),
  };
  const now = new Date('2025-06-01T00:00:00Z');

  it('tells active, expired and disabled apart, disabled first', () => {
    expect(keyStatus(base, now)).toBe('active');
    expect(keyStatus({ ...base, expiresAt: new Date('2025-07-01T00:00:00Z') }, now)).toBe('active');
    expect(keyStatus({ ...base, expiresAt: now }, now)).toBe('expired');
    expect(keyStatus({ ...base, disabled: true, expiresAt: now }, now)).toBe('disabled');
  });
});
