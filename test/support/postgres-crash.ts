/**
 * A gateway on a PostgreSQL cluster of its own (throwaway-postgres.ts), and the crash that the
 * durability tests put it through (docs/architecture.md, Money: "Durability"): the WAL writer
 * paused, so nothing but the gateway's own flush writes out what its batches committed; answers
 * served and read to their last byte; every process of the server killed at once; the server
 * started again and what it kept read through new connections.
 *
 * The request log is off: its own writes commit synchronously and so would flush the WAL, and with
 * it the charges before them, by chance; the promise must hold without them.
 */
import { expect } from 'vitest';
import { usdToNanos } from '../../src/billing/money.js';
import { openStore } from '../../src/store/open-store.js';
import type { LedgerEntry, Store } from '../../src/store/store.js';
import { testCatalog } from './catalog.js';
import { startHarness, type Harness } from './harness.js';
import { startThrowawayCluster, type ThrowawayCluster } from './throwaway-postgres.js';

export interface GatewayOnOwnPostgres {
  cluster: ThrowawayCluster;
  harness: Harness;
  close(): Promise<void>;
}

/** The test catalog with `settings` (such as `billing`) over it, served on a cluster started for it. */
export async function startGatewayOnOwnPostgres(settings: Record<string, unknown> = {}): Promise<GatewayOnOwnPostgres> {
  const cluster = await startThrowawayCluster();
  try {
    const catalog = { ...(testCatalog() as Record<string, unknown>), log: { enabled: false }, ...settings };
    // The cluster is the test's: nothing to drop, it goes with its folder.
    const harness = await startHarness({ catalog, sharedDatabase: { engine: 'postgres', url: cluster.url, drop: async () => undefined } });
    return {
      cluster,
      harness,
      close: async () => {
        try {
          await harness.close();
        } finally {
          cluster.destroy();
        }
      },
    };
  } catch (error) {
    cluster.destroy();
    throw error;
  }
}

/** What the server kept of the account after the crash, read through `store` (new connections). */
export interface AfterCrash {
  store: Store;
  charges: LedgerEntry[];
}

/**
 * Pauses the WAL writer, runs `serve` (answers read to their last byte), kills the server and
 * starts it again. Every charge acknowledged before the kill is there, and the balance is the
 * opening `openingUsd` less the charges; then `check` reads the rest.
 */
export async function crashAfterServing<T>(gateway: GatewayOnOwnPostgres, account: { accountId: string; openingUsd: string }, serve: () => Promise<T>, check: (served: T, after: AfterCrash) => Promise<void>): Promise<void> {
  const { cluster, harness } = gateway;
  const { accountId } = account;
  cluster.pauseWalWriter();
  const served = await serve();
  // Acknowledged: each answer's charge was committed before its last byte.
  const acknowledged = (await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
  await cluster.kill();

  cluster.start();
  // Read through new connections, as a gateway started after the crash would.
  const store = await openStore(cluster.url, { migrate: false });
  try {
    const charges = (await store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
    expect(charges).toEqual(acknowledged);
    const charged = charges.reduce((sum, charge) => sum + charge.amountNanos, 0n);
    expect((await store.findAccount(accountId))!.balanceNanos).toBe(usdToNanos(account.openingUsd) - charged);
    await check(served, { store, charges });
  } finally {
    await store.close();
  }
}
