/**
 * The instance guard on a real SQLite file opened by two stores, as two instances would.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../store/open-store.js';
import type { OperationsStore } from '../store/store.js';
import { acceptLocalLimitsFrom, checkInstances, guardInstance, instanceIdFor, startHeartbeat } from './instance-guard.js';

let folder: string;
let mine: OperationsStore;
let theirs: OperationsStore;
const T0 = new Date('2030-01-01T00:00:00Z');
const at = (seconds: number) => () => new Date(T0.getTime() + seconds * 1_000);

beforeEach(async () => {
  folder = mkdtempSync(join(tmpdir(), 'tollgate-instances-'));
  mine = await openStore(`sqlite:${join(folder, 'tollgate.db')}`);
  theirs = await openStore(`sqlite:${join(folder, 'tollgate.db')}`);
});

afterEach(async () => {
  await mine.close().catch(() => undefined);
  await theirs.close().catch(() => undefined);
  rmSync(folder, { recursive: true, force: true });
});

const local = { id: 'host-a:8080', sharedLimits: false };
const shared = { id: 'host-a:8080', sharedLimits: true };

describe('checkInstances', () => {
  it('lets an instance start alone, its own heartbeat included', async () => {
    await mine.heartbeat({ ...local, lastSeenAt: T0 });
    await expect(checkInstances(mine, local, { acceptLocalLimits: false, now: at(1) })).resolves.toBeUndefined();
  });

  it('refuses when neither instance shares its limits, naming both settings and the other instance', async () => {
    await theirs.heartbeat({ id: 'host-b:8080', sharedLimits: false, lastSeenAt: T0 });
    const refusal = checkInstances(mine, local, { acceptLocalLimits: false, now: at(3) });
    await expect(refusal).rejects.toThrow(/TOLLGATE_ACCEPT_LOCAL_LIMITS=1/);
    await expect(refusal).rejects.toThrow(/TOLLGATE_REDIS_URL/);
    await expect(refusal).rejects.toThrow(/host-b:8080 \(last seen 3 s ago\)/);
    await expect(refusal).rejects.toThrow(/this instance and instance host-b:8080 have no shared limit store/);
  });

  it('refuses when only the other instance lacks shared limits, and when only this one does', async () => {
    await theirs.heartbeat({ id: 'host-b:8080', sharedLimits: false, lastSeenAt: T0 });
    await expect(checkInstances(mine, shared, { acceptLocalLimits: false, now: at(1) })).rejects.toThrow(/instance host-b:8080 has no shared limit store/);
    await theirs.heartbeat({ id: 'host-b:8080', sharedLimits: true, lastSeenAt: T0 });
    await expect(checkInstances(mine, local, { acceptLocalLimits: false, now: at(1) })).rejects.toThrow(/this instance has no shared limit store/);
  });

  it('lets instances that all share their limits start together', async () => {
    await theirs.heartbeat({ id: 'host-b:8080', sharedLimits: true, lastSeenAt: T0 });
    await theirs.heartbeat({ id: 'host-c:8080', sharedLimits: true, lastSeenAt: T0 });
    await expect(checkInstances(mine, shared, { acceptLocalLimits: false, now: at(1) })).resolves.toBeUndefined();
  });

  it('lets them start when the operator accepts per-instance limits', async () => {
    await theirs.heartbeat({ id: 'host-b:8080', sharedLimits: false, lastSeenAt: T0 });
    await expect(checkInstances(mine, local, { acceptLocalLimits: true, now: at(1) })).resolves.toBeUndefined();
  });

  it('ignores an instance whose heartbeat has gone stale', async () => {
    await theirs.heartbeat({ id: 'host-b:8080', sharedLimits: false, lastSeenAt: T0 });
    await expect(checkInstances(mine, local, { acceptLocalLimits: false, now: at(31) })).resolves.toBeUndefined();
    await expect(checkInstances(mine, local, { acceptLocalLimits: false, now: at(31), staleAfterMs: 60_000 })).rejects.toThrow(/Refusing to start/);
  });
});

describe('guardInstance and startHeartbeat', () => {
  it('removes its own row when it refuses, and keeps beating when it starts', async () => {
    await theirs.heartbeat({ id: 'host-b:8080', sharedLimits: false, lastSeenAt: T0 });
    await expect(guardInstance(mine, local, { acceptLocalLimits: false, now: at(1) })).rejects.toThrow(/Refusing to start/);
    expect((await theirs.liveInstances(T0)).map((instance) => instance.id)).toEqual(['host-b:8080']);

    const heartbeat = await guardInstance(mine, local, { acceptLocalLimits: true, now: at(1) });
    // The other instance now sees this one, and would refuse in its turn.
    await expect(checkInstances(theirs, { id: 'host-b:8080', sharedLimits: false }, { acceptLocalLimits: false, now: at(2) })).rejects.toThrow(/host-a:8080/);
    await heartbeat.stop();
    expect((await theirs.liveInstances(T0)).map((instance) => instance.id)).toEqual(['host-b:8080']);
  });

  it('refreshes the heartbeat every interval until stopped', async () => {
    let seconds = 0;
    const heartbeat = startHeartbeat(mine, shared, 10, { now: () => at(seconds++)() });
    try {
      await expect.poll(async () => (await theirs.liveInstances(at(3)())).length, { timeout: 5_000 }).toBe(1);
      const [seen] = await theirs.liveInstances(at(3)());
      expect(seen).toMatchObject({ id: 'host-a:8080', sharedLimits: true });
    } finally {
      await heartbeat.stop();
    }
    expect(await theirs.liveInstances(T0)).toEqual([]);
  });

  it('reports failed beats and carries on', async () => {
    const errors: unknown[] = [];
    // A query first: Kysely leaves a SQLite store that never ran one open after close().
    await mine.liveInstances(T0);
    await mine.close();
    const heartbeat = startHeartbeat(mine, shared, 10, { onError: (error) => errors.push(error) });
    await expect.poll(() => errors.length, { timeout: 5_000 }).toBeGreaterThan(1);
    await expect(heartbeat.stop()).rejects.toThrow();
  });
});

describe('settings', () => {
  it('reads TOLLGATE_ACCEPT_LOCAL_LIMITS strictly', () => {
    expect(acceptLocalLimitsFrom({ TOLLGATE_ACCEPT_LOCAL_LIMITS: '1' })).toBe(true);
    expect(acceptLocalLimitsFrom({ TOLLGATE_ACCEPT_LOCAL_LIMITS: 'true' })).toBe(true);
    expect(acceptLocalLimitsFrom({})).toBe(false);
    expect(acceptLocalLimitsFrom({ TOLLGATE_ACCEPT_LOCAL_LIMITS: '0' })).toBe(false);
    expect(() => acceptLocalLimitsFrom({ TOLLGATE_ACCEPT_LOCAL_LIMITS: 'sure' })).toThrow(/TOLLGATE_ACCEPT_LOCAL_LIMITS must be 1 or 0/);
  });

  it('gives an instance the same id across restarts on the same port', () => {
    expect(instanceIdFor(8080)).toBe(`${hostname()}:8080`);
    expect(instanceIdFor(0)).toBe(`${hostname()}:pid${process.pid}`);
  });
});
