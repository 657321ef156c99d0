/**
 * The deliverer on a real SQLite store and real receivers on loopback, with a clock the test
 * moves: waits that double up to their cap, giving up at the maximum age, rows of webhooks this
 * instance does not have left alone, and a close that aborts a hanging attempt for a later retry.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startWebhookReceiver, verifyWebhook, type WebhookReceiver } from '../../test/support/webhook-receiver.js';
import { openStore } from '../store/open-store.js';
import type { AlertDelivery, OperationsStore } from '../store/store.js';
import { deliveriesOf, webhookIdOf, type Webhook } from './alert-events.js';
import { createWebhookDeliverer } from './webhook-deliverer.js';

const DELIVERY = { poll_ms: 1_000, timeout_ms: 2_000, first_retry_ms: 1_000, max_retry_ms: 4_000, max_age_seconds: 60 };
const START = Date.parse('2030-01-01T00:00:00.000Z');

describe('webhook deliverer', () => {
  let folder: string;
  let store: OperationsStore;
  let clock: number;
  // The log lines as pino writes them.
  const logged: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        logged.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        done();
      },
    }),
  );

  beforeEach(async () => {
    folder = mkdtempSync(join(tmpdir(), 'tollgate-deliverer-'));
    store = await openStore(`sqlite:${join(folder, 'store.db')}`);
    clock = START;
    logged.length = 0;
  });

  afterEach(async () => {
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });

  function webhookAt(receiver: Pick<WebhookReceiver, 'url'>, secret = 'whsec-test'): Webhook {
    return { id: webhookIdOf(receiver.url), url: receiver.url, format: 'generic', secret, events: new Set(['target.down'] as const) };
  }

  async function rows(): Promise<AlertDelivery[]> {
    return (await store.listAlertDeliveries({}, { limit: 100 })).rows;
  }

  it('waits twice as long after each failure, up to its cap, and gives up at the maximum age', async () => {
    const receiver = await startWebhookReceiver({ status: () => 503 });
    try {
      const webhook = webhookAt(receiver);
      const deliverer = createWebhookDeliverer({ store, webhooks: [webhook], delivery: DELIVERY, logger, now: () => clock, random: () => 1 });
      await store.enqueueAlertDeliveries(deliveriesOf('target.down', { target: 'a/b' }, [webhook], new Date(clock)));
      const waits: number[] = [];
      for (let attempt = 1; attempt <= 4; attempt++) {
        await deliverer.poll();
        const [row] = await rows();
        expect(row).toMatchObject({ state: 'pending', attempts: attempt, lastError: 'answered HTTP 503' });
        waits.push(row!.nextAttemptAt.getTime() - clock);
        // Not due yet: a poll now sends nothing.
        await deliverer.poll();
        expect(receiver.received).toHaveLength(attempt);
        clock = row!.nextAttemptAt.getTime();
      }
      expect(waits).toEqual([1_000, 2_000, 4_000, 4_000]);
      expect(receiver.received.every((webhookRequest) => verifyWebhook('whsec-test', webhookRequest, clock / 1000))).toBe(true);

      // Past the maximum age (60 s after the event) the next failure gives up.
      clock = START + 59_000;
      await deliverer.poll();
      const [row] = await rows();
      expect(row).toMatchObject({ state: 'abandoned', attempts: 5, lastError: 'answered HTTP 503', finishedAt: new Date(clock) });
      expect(logged.at(-1)).toMatchObject({ msg: 'webhook delivery given up', attempts: 5, webhook: `${webhook.id} (${new URL(receiver.url).origin})` });
      expect(logged.filter((line) => line.msg === 'webhook delivery failed; will retry')).toHaveLength(4);
      expect(JSON.stringify(logged)).not.toContain('whsec-test');
      await deliverer.close();
    } finally {
      await receiver.close();
    }
  });

  it('gives up without sending an event older than the maximum age, and leaves other webhooks\' rows alone', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const webhook = webhookAt(receiver);
      const foreign = { ...webhookAt({ url: 'http://127.0.0.1:9/elsewhere' }), events: new Set(['target.down'] as const) };
      await store.enqueueAlertDeliveries([
        ...deliveriesOf('target.down', { target: 'old' }, [webhook], new Date(START)),
        ...deliveriesOf('target.down', { target: 'foreign' }, [foreign], new Date(START)),
      ]);
      clock = START + 61_000;
      const deliverer = createWebhookDeliverer({ store, webhooks: [webhook], delivery: DELIVERY, logger, now: () => clock });
      await deliverer.poll();
      await deliverer.close();
      expect(receiver.received).toHaveLength(0);
      const byWebhook = new Map((await rows()).map((row) => [row.webhookId, row]));
      expect(byWebhook.get(webhook.id)).toMatchObject({ state: 'abandoned', lastError: 'older than alerts.delivery.max_age_seconds before it could be sent' });
      expect(byWebhook.get(foreign.id)).toMatchObject({ state: 'pending', attempts: 0 });
    } finally {
      await receiver.close();
    }
  });

  it('on close, aborts an attempt that hangs; the delivery stays pending for a retry after its lease', async () => {
    const hanging: Server = createServer(() => undefined);
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/hook`;
      const webhook = webhookAt({ url });
      await store.enqueueAlertDeliveries(deliveriesOf('target.down', { target: 'a/b' }, [webhook], new Date(clock)));
      const deliverer = createWebhookDeliverer({ store, webhooks: [webhook], delivery: { ...DELIVERY, timeout_ms: 60_000 }, logger, now: () => clock });
      const polling = deliverer.poll();
      await new Promise((resolve) => setTimeout(resolve, 100));
      await deliverer.close();
      await polling;
      const [row] = await rows();
      expect(row).toMatchObject({ state: 'pending', attempts: 1, lastError: null });
      // Leased for the attempt's timeout and a margin: then any instance may take it again.
      expect(row!.nextAttemptAt.getTime()).toBe(clock + 60_000 + 5_000);
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    }
  });
});
