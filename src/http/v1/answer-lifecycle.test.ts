/**
 * The settlement of an answer cannot be stopped by its own metering: a meter that throws (a gateway
 * bug) still ends the answer, closes its hold once and leaves nothing in flight, and the fault is
 * logged at error level with the request id and counted. And every answer ends through `conclude`:
 * settled and kept before its last bytes, billed under the endpoint `begin` named. A real Fastify server on loopback, a real SQLite store,
 * the real billing parts.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BillingService } from '../../billing/billing-service.js';
import { HoldKeeper } from '../../billing/hold-keeper.js';
import { usdToNanos } from '../../billing/money.js';
import { createSettleRetrier } from '../../billing/settle-retry.js';
import { UsageMeter } from '../../billing/usage-meter.js';
import { openStore } from '../../store/open-store.js';
import type { Store } from '../../store/store.js';
import type { ApiContext } from './api-context.js';
import { AnswerLifecycle, type LifecycleServices } from './answer-lifecycle.js';
import { InFlight } from './in-flight.js';
import { createMetrics } from '../../observability/metrics.js';

let store: Store;
let app: FastifyInstance;
let services: LifecycleServices;
let logs: Array<Record<string, unknown>>;

beforeEach(async () => {
  store = await openStore('sqlite::memory:');
  await store.createAccount({ id: 'acct', name: 'acct', openingBalanceNanos: usdToNanos('1') });
  await store.createKey({ id: 'key', accountId: 'acct', name: null, prefix: 'sk-tg-x', hash: 'h', models: null, requestsPerWindow: null, tokensPerMinute: null, expiresAt: null, disabled: false, createdAt: new Date() });
  const prices = new Map([['m', { inputPerMillion: usdToNanos('1'), cachedInputPerMillion: usdToNanos('1'), outputPerMillion: usdToNanos('4') }]]);
  const billing = new BillingService({ store, prices, holdTtlSeconds: 60 });
  logs = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line) as Record<string, unknown>) });
  const fail = (error: unknown) => {
    throw error;
  };
  services = {
    billing,
    holdKeeper: new HoldKeeper({ store, billing, intervalMs: 60_000, extendAfterMs: 20_000, now: Date.now, onError: fail, onMeterError: fail }),
    inFlight: new InFlight(),
    settleRetrier: createSettleRetrier({ settle: (hold, usage) => billing.settle(hold, usage), logger, maxAgeMs: 60_000 }),
    metrics: createMetrics(),
    now: Date.now,
  };
  app = Fastify({ loggerInstance: logger as FastifyBaseLogger });
  app.decorateRequest('outcome', null);
});

afterEach(async () => {
  await app.close();
  await store.close();
});

describe('AnswerLifecycle', () => {
  it('settles once and ends the answer when its meter throws, releasing the hold and reporting the fault', async () => {
    const account = (await store.findAccount('acct'))!;
    const key = (await store.findKey('key'))!;
    const context: ApiContext = { account, key, requestsPerWindow: 100, windowSeconds: 60, tokensPerMinute: 0 };
    const bug = new RangeError('Maximum call stack size exceeded');
    let ended = false;
    app.post('/answer', async (request, reply) => {
      const lifecycle = new AnswerLifecycle(services, request, reply);
      lifecycle.begin(context, 'chat-completions', 'm', false);
      // The input estimate is needed once no sane usage report came, and here it throws.
      const meter = new UsageMeter(() => {
        throw bug;
      }, 512);
      await lifecycle.reserve(context, { model: 'm', inputTokenBound: 100, maxOutputTokens: 512 }, meter);
      meter.observe({ type: 'text-delta', delta: 'Hello there' });
      await Promise.all([lifecycle.settle(), lifecycle.settle()]);
      await lifecycle.settle();
      lifecycle.end('chat-completions');
      ended = true;
      return { usage: request.outcome?.usage ?? null };
    });
    const address = await app.listen({ host: '127.0.0.1', port: 0 });

    const response = await fetch(`${address}/answer`, { method: 'POST' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ usage: null });
    expect(ended).toBe(true);
    expect(services.inFlight.size).toBe(0);
    expect(services.holdKeeper.size).toBe(0);
    // The hold is closed, released: what was produced cannot be known, and nothing is charged twice.
    expect(await store.countOpenHolds('acct')).toBe(0);
    expect((await store.listLedger('acct')).filter((entry) => entry.kind === 'charge')).toEqual([]);
    expect((await store.findAccount('acct'))!.balanceNanos).toBe(usdToNanos('1'));
    // Not hidden: logged at error level with the request id, and counted, once.
    const faults = logs.filter((line) => line.level === 50 && line.stage === 'metering');
    expect(faults).toEqual([expect.objectContaining({ reqId: expect.any(String), err: expect.objectContaining({ message: bug.message }) })]);
    const counted = (await services.metrics.answerFaults.get()).values.find((value) => value.labels.stage === 'metering');
    expect(counted?.value).toBe(1);
  });

  it('concludes an answer: the settlement and the keeping of its response first, then its last bytes; the response is built only when kept', async () => {
    const account = (await store.findAccount('acct'))!;
    const key = (await store.findKey('key'))!;
    const context: ApiContext = { account, key, requestsPerWindow: 100, windowSeconds: 60, tokensPerMinute: 0 };
    const steps: string[] = [];
    app.post<{ Querystring: { keep?: string } }>('/answer', async (request, reply) => {
      const lifecycle = new AnswerLifecycle(services, request, reply);
      lifecycle.begin(context, 'responses', 'm', false);
      if (request.query.keep === 'yes') {
        lifecycle.keepWith(async (response) => {
          await Promise.resolve();
          steps.push(`kept ${String(response.id)}`);
        });
      }
      const meter = new UsageMeter(10, 512);
      await lifecycle.reserve(context, { model: 'm', inputTokenBound: 100, maxOutputTokens: 512 }, meter);
      const sent = await lifecycle.conclude(
        () => {
          steps.push('built');
          return { id: 'resp_1' };
        },
        () => {
          steps.push(`last, ${services.inFlight.size} in flight`);
          return { sent: true };
        },
      );
      lifecycle.end('responses');
      return sent;
    });
    const address = await app.listen({ host: '127.0.0.1', port: 0 });

    expect(await (await fetch(`${address}/answer`, { method: 'POST' })).json()).toEqual({ sent: true });
    expect(steps).toEqual(['last, 0 in flight']);
    steps.length = 0;
    expect(await (await fetch(`${address}/answer?keep=yes`, { method: 'POST' })).json()).toEqual({ sent: true });
    expect(steps).toEqual(['built', 'kept resp_1', 'last, 0 in flight']);
    expect(await store.countOpenHolds('acct')).toBe(0);
  });

  it('opens the hold for the endpoint `begin` named, so its charge is billed under it; a hold before `begin` is a bug, not a charge under none', async () => {
    const account = (await store.findAccount('acct'))!;
    const key = (await store.findKey('key'))!;
    const context: ApiContext = { account, key, requestsPerWindow: 100, windowSeconds: 60, tokensPerMinute: 0 };
    app.post<{ Querystring: { begin?: string } }>('/answer', async (request, reply) => {
      const lifecycle = new AnswerLifecycle(services, request, reply);
      if (request.query.begin === 'yes') lifecycle.begin(context, 'embeddings', 'm', false);
      const meter = new UsageMeter(40, 0);
      try {
        await lifecycle.reserve(context, { model: 'm', inputTokenBound: 100, maxOutputTokens: 0 }, meter);
      } catch (error) {
        return { refused: (error as Error).message };
      }
      // As the router's commitment to a target does (`routed`): the input is billed from here on.
      meter.accepted();
      await lifecycle.conclude(() => undefined, () => undefined);
      lifecycle.end('embeddings');
      return { settled: true };
    });
    const address = await app.listen({ host: '127.0.0.1', port: 0 });

    expect(await (await fetch(`${address}/answer?begin=yes`, { method: 'POST' })).json()).toEqual({ settled: true });
    const charges = (await store.listLedger('acct')).filter((entry) => entry.kind === 'charge');
    expect(charges.map((entry) => [entry.surface, entry.inputTokens])).toEqual([['embeddings', 40]]);

    expect(await (await fetch(`${address}/answer`, { method: 'POST' })).json()).toEqual({ refused: expect.stringMatching(/before begin/) });
    expect(await store.countOpenHolds('acct')).toBe(0);
    expect((await store.listLedger('acct')).filter((entry) => entry.kind === 'charge')).toHaveLength(1);
  });
});
