/**
 * Failover through the real server and the official `openai` client: with the first target
 * refusing connections, never answering, answering 500 or refusing our key, chat (streamed and
 * not) and Responses streams succeed through the second target; a target that refused our key is
 * taken out at once; and with every target down the client gets the spec's 503, byte for byte,
 * and pays nothing.
 *
 * Every case has its own model per request kind, so each request meets a first target the router
 * has not seen fail yet (health is tracked per `provider/model`). The first targets speak only
 * Chat (`api: chat`): chat requests fail over from the pass-through path, Responses requests from
 * the translated one.
 */
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import OpenAI from 'openai';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';
import { json, startUpstreamDouble, type UpstreamDouble } from '../support/upstream-double.js';

const SPEC_503 = '{"error":{"message":"The requested model is currently unavailable.","type":"service_api_error","code":"model_not_found"}}';
const FAST = { connect_ms: 300, first_byte_ms: 300, idle_ms: 300 };

const cases = [
  { provider: 'refused', what: 'refuses connections', failureKind: 'connect' },
  { provider: 'silent', what: 'accepts and never answers', failureKind: 'timeout' },
  { provider: 'failing', what: 'answers 500', failureKind: 'status' },
  { provider: 'unauthorized', what: 'refuses our key (401)', failureKind: 'credentials' },
] as const;
type CaseProvider = (typeof cases)[number]['provider'];
const requestKinds = ['chat', 'chat-stream', 'responses-stream'] as const;

/** A loopback port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function catalogFor(baseUrls: Record<CaseProvider, string>): unknown {
  const prices = { input: '1', cached_input: '0.5', output: '4' };
  const models: unknown[] = cases.flatMap(({ provider }) =>
    requestKinds.map((kind) => ({
      id: `${provider}-${kind}`,
      prices,
      max_output_tokens: 256,
      targets: [
        { provider, model: `${provider}-${kind}-upstream`, priority: 0 },
        { provider: 'sim', model: `${provider}-${kind}`, priority: 1 },
      ],
    })),
  );
  models.push({
    id: 'all-down',
    prices,
    max_output_tokens: 256,
    targets: [
      { provider: 'refused', model: 'all-down-first', priority: 0 },
      { provider: 'failing', model: 'all-down-second', priority: 1 },
    ],
  });
  // Never asked before the key was refused: the whole provider is out, not only the models tried.
  models.push({
    id: 'unauthorized-fresh',
    prices,
    max_output_tokens: 256,
    targets: [
      { provider: 'unauthorized', model: 'unauthorized-fresh-upstream', priority: 0 },
      { provider: 'sim', model: 'unauthorized-fresh', priority: 1 },
    ],
  });
  return {
    providers: [
      ...cases.map(({ provider }) => ({ name: provider, type: 'openai', api: 'chat', base_url: baseUrls[provider], api_key_env: 'TEST_UPSTREAM_KEY', timeouts: FAST })),
      { name: 'sim', type: 'simulated' },
    ],
    models,
  };
}

describe.each(engines)('failover on %s', (engine) => {
  let harness: Harness;
  let client: OpenAI;
  let accountId: string;
  const doubles: Partial<Record<CaseProvider, UpstreamDouble>> = {};
  const logLines: Array<Record<string, unknown>> = [];

  /** The kinds of the failures the router logged for a target label, in order. */
  const failuresOf = (label: string): unknown[] => logLines.filter((line) => line.msg === 'upstream target failed' && line.target === label).map((line) => line.kind);
  /** How many requests a double received for one upstream model. */
  const received = (provider: CaseProvider, upstreamModel: string): number | undefined =>
    doubles[provider]?.requests.filter((request) => request.body.model === upstreamModel).length;

  beforeAll(async () => {
    // Accepts, reads the request, and never answers.
    doubles.silent = await startUpstreamDouble(() => undefined);
    doubles.failing = await startUpstreamDouble(json(500, '{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}'));
    doubles.unauthorized = await startUpstreamDouble(
      json(401, '{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}'),
    );
    const baseUrls = {
      refused: `http://127.0.0.1:${await closedPort()}/v1`,
      silent: doubles.silent.baseUrl,
      failing: doubles.failing.baseUrl,
      unauthorized: doubles.unauthorized.baseUrl,
    };
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logLines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    harness = await startHarness({ engine, catalog: catalogFor(baseUrls), env: { TEST_UPSTREAM_KEY: 'sk-upstream-key' }, logger: pino({ level: 'warn' }, sink) });
    let secret: string;
    ({ secret, accountId } = await harness.newAccount('5'));
    client = harness.client(secret);
  });
  afterAll(async () => {
    await harness?.close();
    await Promise.all(Object.values(doubles).map((double) => double.close()));
  });

  const ask = {
    chat: async (model: string) => {
      const completion = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello' }] });
      expect(completion.model).toBe(model);
      expect(completion.choices[0]?.finish_reason).toBe('stop');
      return completion.choices[0]?.message.content ?? '';
    },
    'chat-stream': async (model: string) => {
      const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello' }], stream: true });
      let text = '';
      let finish: string | null = null;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      expect(finish).toBe('stop');
      return text;
    },
    'responses-stream': async (model: string) => {
      const final = await client.responses.stream({ model, input: 'Say hello' }).finalResponse();
      expect(final.status).toBe('completed');
      expect(final.model).toBe(model);
      return final.output_text;
    },
  };

  describe.each(cases)('when the first target $what', ({ provider, failureKind }) => {
    // The three kinds run side by side: a silent target costs its whole first-byte timeout.
    it('chat, chat streamed and Responses streamed all succeed through the second target', async () => {
      const chargesBefore = (await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge').length;
      const answers = await Promise.all(requestKinds.map(async (kind) => ({ kind, text: await ask[kind](`${provider}-${kind}`) })));
      let tried = 0;
      for (const { kind, text } of answers) {
        const model = `${provider}-${kind}`;
        // The simulated target echoes the request.
        expect(text, kind).toMatch(/Say hello/);
        const failures = failuresOf(`${provider}/${model}-upstream`);
        if (failures.length > 0) tried += 1;
        // Refused credentials take the whole provider out at once, so a request that starts after
        // the first refusal goes straight to the second target; every other failure is per target.
        if (provider === 'unauthorized') {
          expect(failures, kind).toEqual(failures.length === 0 ? [] : [failureKind]);
          expect(received(provider, `${model}-upstream`), kind).toBe(failures.length);
        } else {
          expect(failures, kind).toEqual([failureKind]);
          if (provider !== 'refused') expect(received(provider, `${model}-upstream`), kind).toBe(1);
        }
      }
      expect(tried).toBeGreaterThanOrEqual(1);
      // Billed once each, by the target that answered.
      await expect.poll(async () => harness.store.countOpenHolds(accountId)).toBe(0);
      const charges = (await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge').slice(chargesBefore);
      expect(charges.map((entry) => entry.model).sort()).toEqual(requestKinds.map((kind) => `${provider}-${kind}`).sort());
      for (const charge of charges) expect(charge.amountNanos).toBeGreaterThan(0n);
    });

    if (provider === 'unauthorized') {
      it('the target that refused our key is taken out: the next requests do not reach it', async () => {
        for (const kind of requestKinds) {
          const model = `${provider}-${kind}`;
          const before = received(provider, `${model}-upstream`);
          expect(await ask[kind](model)).toMatch(/Say hello/);
          expect(received(provider, `${model}-upstream`)).toBe(before);
        }
        expect(await ask.chat('unauthorized-fresh')).toMatch(/Say hello/);
        expect(received(provider, 'unauthorized-fresh-upstream')).toBe(0);
      });
    }
  });

  it("with every target down: the spec's 503 byte for byte on both endpoints, and nothing billed", async () => {
    const { accountId: payer, secret } = await harness.newAccount('2');
    const before = await harness.store.findAccount(payer);
    const bodies = [
      ['/v1/chat/completions', { model: 'all-down', messages: [{ role: 'user', content: 'hi' }] }],
      ['/v1/chat/completions', { model: 'all-down', messages: [{ role: 'user', content: 'hi' }], stream: true }],
      ['/v1/responses', { model: 'all-down', input: 'hi', stream: true }],
      ['/v1/responses', { model: 'all-down', input: 'hi' }],
    ] as const;
    for (const [path, body] of bodies) {
      const response = await harness.post(path, body, secret);
      expect(response.status, `${path} ${JSON.stringify(body)}`).toBe(503);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await response.text()).toBe(SPEC_503);
    }
    // Both targets were really tried (the first three requests reached the router; by then each had failed three times and cools down).
    expect(failuresOf('refused/all-down-first')).toEqual(['connect', 'connect', 'connect']);
    expect(failuresOf('failing/all-down-second')).toEqual(['status', 'status', 'status']);
    expect(received('failing', 'all-down-second')).toBe(3);

    await expect(harness.client(secret).chat.completions.create({ model: 'all-down', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({
      status: 503,
      type: 'service_api_error',
      code: 'model_not_found',
    });
    expect(await harness.store.countOpenHolds(payer)).toBe(0);
    expect((await harness.store.listLedger(payer)).filter((entry) => entry.kind === 'charge')).toEqual([]);
    const after = await harness.store.findAccount(payer);
    expect(after).toMatchObject({ balanceNanos: before!.balanceNanos, reservedNanos: 0n });
  });
});
