/**
 * `spend.report` end to end on SQLite and PostgreSQL: two accounts spend through the simulated
 * provider, the gateway's clock moves past the end of the UTC day, and the report arrives once at
 * a generic webhook (signed: the day's total and the accounts by spend, exact to the nano-dollar,
 * as the ledger has them) and at a Microsoft Teams webhook as an Adaptive Card.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatUsd } from '../../src/billing/money.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startWebhookReceiver, until, verifyWebhook, type WebhookReceiver } from '../support/webhook-receiver.js';
import { testCatalog } from '../support/catalog.js';

const SECRET = 'whsec-spend-1234';
const DAY_MS = 86_400_000;

describe.each(engines)('spend.report on %s', (engine) => {
  let harness: Harness;
  let generic: WebhookReceiver;
  let teams: WebhookReceiver;
  let shift = 0;

  beforeAll(async () => {
    generic = await startWebhookReceiver();
    teams = await startWebhookReceiver({ path: '/workflows/teams' });
    const catalog = {
      ...(testCatalog() as Record<string, unknown>),
      alerts: {
        webhooks: [
          { url: generic.url, secret_env: 'SPEND_SECRET', events: ['spend.report'] },
          { url: teams.url, format: 'teams', events: ['spend.report'] },
        ],
        spend_report: { every: 'day', top: 1 },
        check_ms: 50,
        delivery: { poll_ms: 25, first_retry_ms: 50, max_retry_ms: 200 },
      },
    };
    harness = await startHarness({ engine, catalog, env: { SPEND_SECRET: SECRET }, now: () => Date.now() + shift });
  });

  afterAll(async () => {
    await harness?.close();
    await Promise.all([generic?.close(), teams?.close()]);
  });

  it("sends the day's spend once the day is over, the biggest spender named", async () => {
    // The report of yesterday (nothing spent) comes first, at start.
    await until("yesterday's report", () => generic.accepted().length === 1 && teams.accepted().length === 1);
    expect(generic.accepted()[0]!.body.data).toMatchObject({ period: 'day', total_usd: '0', requests: 0, accounts: 0, top: [] });

    const big = await harness.newAccount('10');
    const small = await harness.newAccount('10');
    const ask = (secret: string, content: string) => harness.post('/v1/chat/completions', { model: 'model-5.6', messages: [{ role: 'user', content }] }, secret);
    for (let index = 0; index < 3; index++) expect((await ask(big.secret, `tell me a long story ${index}`)).status).toBe(200);
    expect((await ask(small.secret, 'hi')).status).toBe(200);
    const spent = async (accountId: string) =>
      (await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge').reduce((sum, entry) => sum + entry.amountNanos, 0n);
    const bigSpent = await spent(big.accountId);
    const smallSpent = await spent(small.accountId);
    expect(bigSpent).toBeGreaterThan(smallSpent);
    expect(smallSpent).toBeGreaterThan(0n);

    const today = new Date(new Date().toISOString().slice(0, 10));
    shift = today.getTime() + DAY_MS + 1_000 - Date.now();
    await until("today's report", () => generic.accepted().length === 2 && teams.accepted().length === 2);
    const report = generic.accepted()[1]!;
    // Signed at the gateway's (moved) time.
    expect(verifyWebhook(SECRET, report, (Date.now() + shift) / 1000)).toBe(true);
    expect(report.body.type).toBe('spend.report');
    expect(report.body.data).toEqual({
      period: 'day',
      from: today.toISOString(),
      to: new Date(today.getTime() + DAY_MS).toISOString(),
      total_usd: formatUsd(bigSpent + smallSpent),
      requests: 4,
      accounts: 2,
      top: [{ account_id: big.accountId, account_name: expect.stringMatching(/^account-/), spent_usd: formatUsd(bigSpent), requests: 3 }],
    });

    const card = teams.accepted()[1]!.body as unknown as { type: string; attachments: Array<{ contentType: string; content: { type: string; body: Array<{ text: string }> } }> };
    expect(card.type).toBe('message');
    expect(card.attachments[0]!.contentType).toBe('application/vnd.microsoft.card.adaptive');
    const lines = card.attachments[0]!.content.body.map((block) => block.text);
    expect(lines[0]).toBe(`Tollgate: spend for the day from ${today.toISOString().slice(0, 10)}: $${formatUsd(bigSpent + smallSpent)}`);
    expect(lines).toContain('…and 1 more');

    // Once per day, however many checks run.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(generic.received).toHaveLength(2);
    expect(teams.received).toHaveLength(2);
  });
});
