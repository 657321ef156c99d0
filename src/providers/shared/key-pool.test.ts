/**
 * The key pool on its own, on a clock the test moves: round robin over usable keys, a refused key
 * out for good and told once, a limited key cooling for its Retry-After (or the default) while a
 * sibling takes the same call, and what a lease says when no key is left.
 */
import { describe, expect, it } from 'vitest';
import type { UpstreamKeyEvent } from '../provider.js';
import { UpstreamError } from '../provider.js';
import type { CredentialLease } from './call-credentials.js';
import { DEFAULT_COOLDOWN_MS, KeyPool, MAX_COOLDOWN_MS, retryAfterMs } from './key-pool.js';

const KEYS = [
  { name: 'primary', secret: 'sk-aaaa-1111' },
  { name: 'backup', secret: 'sk-bbbb-2222' },
  { name: 'spare', secret: 'sk-cccc-3333' },
];

function poolOf(keys = KEYS) {
  const clock = { now: 1_000_000 };
  const events: UpstreamKeyEvent[] = [];
  const pool = new KeyPool({ label: 'openai provider "main"', keys, headersOf: (secret) => ({ authorization: `Bearer ${secret}` }), now: () => clock.now });
  pool.onEvent((event) => events.push(event));
  return { pool, clock, events };
}

const keyOf = (lease: CredentialLease | undefined): string | undefined => lease?.headers.authorization?.replace('Bearer ', '');

describe('KeyPool', () => {
  it('hands the keys out in turn, and counts the calls of each', async () => {
    const { pool } = poolOf();
    const used = [];
    for (let index = 0; index < 6; index++) used.push(keyOf(await pool.lease()));
    expect(used).toEqual(['sk-aaaa-1111', 'sk-bbbb-2222', 'sk-cccc-3333', 'sk-aaaa-1111', 'sk-bbbb-2222', 'sk-cccc-3333']);
    expect(pool.list()).toEqual(KEYS.map((key) => ({ name: key.name, state: 'ok', coolingUntil: null, calls: 2 })));
  });

  it('takes a refused key out for good, tells it once, and gives the same call a sibling', async () => {
    const { pool, clock, events } = poolOf();
    const first = await pool.lease();
    const sibling = first.failed({ outcome: 'refused', status: 401 });
    expect(keyOf(sibling)).toBe('sk-bbbb-2222');
    // Another call that was sent with the same key at the same time: not told again.
    expect(keyOf(first.failed({ outcome: 'refused', status: 401 }))).toBe('sk-cccc-3333');
    expect(events).toEqual([{ type: 'refused', key: 'primary', status: 401 }]);
    clock.now += 24 * 3_600_000;
    const used = [];
    for (let index = 0; index < 4; index++) used.push(keyOf(await pool.lease()));
    expect(used).not.toContain('sk-aaaa-1111');
    expect(pool.list()[0]).toEqual({ name: 'primary', state: 'refused', coolingUntil: null, calls: 1 });
  });

  it('cools a limited key for its Retry-After while its siblings carry on, then uses it again', async () => {
    const { pool, clock, events } = poolOf();
    const first = await pool.lease();
    expect(keyOf(first.failed({ outcome: 'limited', status: 429, retryAfterMs: 2_000 }))).toBe('sk-bbbb-2222');
    expect(events).toEqual([{ type: 'cooling', key: 'primary', status: 429, until: clock.now + 2_000 }]);
    expect(pool.list()[0]).toMatchObject({ state: 'cooling', coolingUntil: clock.now + 2_000 });
    const during = [];
    for (let index = 0; index < 4; index++) during.push(keyOf(await pool.lease()));
    expect(during).not.toContain('sk-aaaa-1111');
    clock.now += 2_000;
    expect(pool.list()[0]).toMatchObject({ state: 'ok', coolingUntil: null });
    const after = [];
    for (let index = 0; index < 3; index++) after.push(keyOf(await pool.lease()));
    expect(after).toContain('sk-aaaa-1111');
  });

  it('cools for the default without a Retry-After, and never longer than the cap', async () => {
    const { pool, clock } = poolOf();
    const sibling = (await pool.lease()).failed({ outcome: 'limited', status: 429 });
    expect(pool.list()[0]?.coolingUntil).toBe(clock.now + DEFAULT_COOLDOWN_MS);
    sibling?.failed({ outcome: 'limited', status: 429, retryAfterMs: 365 * 86_400_000 });
    expect(pool.list()[1]?.coolingUntil).toBe(clock.now + MAX_COOLDOWN_MS);
  });

  it('gives no sibling a call has already tried', async () => {
    const { pool } = poolOf();
    const first = await pool.lease();
    const second = first.failed({ outcome: 'limited', status: 429, retryAfterMs: 1 });
    const third = second?.failed({ outcome: 'refused', status: 403 });
    expect(keyOf(third)).toBe('sk-cccc-3333');
    expect(third?.failed({ outcome: 'limited', status: 429, retryAfterMs: 10_000 })).toBeUndefined();
  });

  it('fails a lease with kind credentials once every key was refused, naming the keys only', async () => {
    const { pool } = poolOf();
    let lease: CredentialLease | undefined = await pool.lease();
    while (lease !== undefined) lease = lease.failed({ outcome: 'refused', status: 401 });
    const error = await pool.lease().catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ kind: 'credentials', message: 'openai provider "main": the upstream refused every key of the pool (primary, backup, spare)' });
  });

  it('fails a lease as the upstream\'s 429 while every key left is cooling, and leases again once one is back', async () => {
    const { pool, clock } = poolOf();
    let lease: CredentialLease | undefined = await pool.lease();
    lease = lease.failed({ outcome: 'refused', status: 401 });
    lease = lease?.failed({ outcome: 'limited', status: 429, retryAfterMs: 5_000 });
    expect(lease?.failed({ outcome: 'limited', status: 429, retryAfterMs: 1_000 })).toBeUndefined();
    const error = (await pool.lease().catch((failure: unknown) => failure)) as UpstreamError;
    expect(error).toMatchObject({ kind: 'status', status: 429 });
    expect(error.failoverable).toBe(true);
    expect(error.message).toContain(new Date(clock.now + 1_000).toISOString());
    clock.now += 1_000;
    expect(keyOf(await pool.lease())).toBe('sk-cccc-3333');
  });

  it('redacts every key of the pool, a longer one whole', () => {
    const { pool } = poolOf([{ name: 'short', secret: 'sk-abc' }, { name: 'long', secret: 'sk-abcdef' }]);
    expect(pool.redact('keys sk-abcdef and sk-abc')).toBe('keys [redacted] and [redacted]');
  });

  it('refuses to be built without keys', () => {
    expect(() => poolOf([])).toThrow('openai provider "main": a key pool needs at least one key');
  });
});

describe('retryAfterMs', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it.each([
    [{ 'retry-after': '2' }, 2_000],
    [{ 'retry-after': ' 0 ' }, 0],
    [{ 'retry-after-ms': '1500', 'retry-after': '9' }, 1_500],
    [{ 'retry-after-ms': '12.3' }, 13],
    [{ 'retry-after': 'Thu, 01 Jan 2026 00:00:07 GMT' }, 7_000],
    [{ 'retry-after': 'Wed, 31 Dec 2025 23:00:00 GMT' }, 0],
    [{ 'retry-after': ['3', '4'] }, 3_000],
  ])('reads %j as %d ms', (headers, expected) => {
    expect(retryAfterMs(headers, now)).toBe(expected);
  });

  it.each([{}, { 'retry-after': '' }, { 'retry-after': 'soon' }, { 'retry-after': '-1' }, { 'retry-after-ms': 'x' }])('reads nothing from %j', (headers) => {
    expect(retryAfterMs(headers, now)).toBeUndefined();
  });
});
