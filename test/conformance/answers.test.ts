/**
 * Provider conformance, the answers: text (streamed, whole, through the gateway), tool calls,
 * parallel calls, usage with cached and reasoning tokens, and upstream 400, 429 and 500, with the
 * same assertions for every provider entry of provider-table.ts.
 */
import { expect } from 'vitest';
import { startHarness } from '../support/harness.js';
import { expectNoSecrets } from '../support/provider-test-kit.js';
import {
  baseUrlOf,
  type ConformanceCase,
  doubleReplaying,
  expectCalls,
  expectStatusFailure,
  expectWholeAnswer,
  KEY_ENV,
  PARALLEL_CALLS,
  PROVIDER_NAME,
  rawEntry,
  runConformance,
  SECRET,
  streamOf,
  TEXT,
  textOf,
  TOOL_CALL,
} from './provider-table.js';

const CASES: ConformanceCase[] = [
  {
    name: 'text, streamed',
    async run(entry) {
      const events = await streamOf(entry, 'text');
      expectWholeAnswer(events, entry, 'stop');
      expect(textOf(events)).toBe(TEXT);
      expect(events.filter((event) => event.type === 'text-delta').length).toBeGreaterThan(1);
    },
  },
  {
    name: 'text, a whole JSON body from an upstream that ignores stream: true',
    async run(entry) {
      const events = await streamOf(entry, 'wholeText');
      expectWholeAnswer(events, entry, 'stop');
      expect(textOf(events)).toBe(TEXT);
    },
  },
  {
    name: 'text, not streamed, through the gateway with the official openai client',
    async run(entry) {
      // A non-streamed chat call is passed through to an upstream that speaks Chat (it then asks
      // for JSON) and streamed from the others; the double answers what it is asked for.
      const double = await doubleReplaying(entry, (request) => (request.headers.accept === 'text/event-stream' ? entry.captures.text : entry.captures.wholeText));
      const harness = await startHarness({
        catalog: {
          providers: [rawEntry(entry, baseUrlOf(entry, double))],
          models: [{ id: 'conformance-model', prices: { input: '1', output: '4' }, max_output_tokens: 512, targets: [{ provider: PROVIDER_NAME, model: entry.upstreamModel }] }],
        },
        env: { [KEY_ENV]: SECRET },
      });
      try {
        const account = await harness.newAccount('5');
        const completion = await harness.client(account.secret).chat.completions.create({ model: 'conformance-model', messages: [{ role: 'user', content: 'Say hello.' }] });
        expect(completion.choices[0]?.message.content).toBe(TEXT);
        expect(completion.choices[0]?.finish_reason).toBe('stop');
        expect(double.requests).toHaveLength(1);
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: 'tool call',
    async run(entry) {
      const events = await streamOf(entry, 'toolCall');
      expectCalls(events, entry, [TOOL_CALL]);
      expect(events.filter((event) => event.type === 'tool-call-start')).toHaveLength(1);
    },
  },
  {
    name: 'parallel tool calls, distinct ids, in order',
    async run(entry) {
      expectCalls(await streamOf(entry, 'parallelToolCalls'), entry, PARALLEL_CALLS);
    },
  },
  {
    name: 'usage with cached and reasoning tokens, and the reasoning text',
    async run(entry) {
      const events = await streamOf(entry, 'usage');
      expectWholeAnswer(events, entry, 'stop');
      expect(textOf(events)).toBe(TEXT);
      expect(events.filter((event) => event.type === 'usage')).toEqual([{ type: 'usage', usage: entry.usage }]);
      // Reasoning text, wherever the wire carries it, is the answer's reasoning.
      const reasoning = events.flatMap((event) => (event.type === 'reasoning-delta' ? [event.delta] : [])).join('');
      expect(reasoning).toBe(entry.reasoningText ?? '');
      // The usage comes before the finish, so that a client codec can put it in its last frame.
      expect(events.at(-2)).toEqual({ type: 'usage', usage: entry.usage });
    },
  },
  {
    name: 'upstream 400: the request is refused, with a reason free of the address and key',
    async run(entry) {
      const { error, secrets } = await expectStatusFailure(entry, 'error400');
      expect(error.failoverable).toBe(false);
      // Every 400 capture echoes the address and key, as upstreams do: the reason stays, they go.
      expect(error.clientMessage).toContain('[redacted]');
      expectNoSecrets(error.clientMessage, secrets);
    },
  },
  {
    name: 'upstream 429: another target may succeed',
    async run(entry) {
      expect((await expectStatusFailure(entry, 'error429')).error.failoverable).toBe(true);
    },
  },
  {
    name: 'upstream 500: another target may succeed',
    async run(entry) {
      expect((await expectStatusFailure(entry, 'error500')).error.failoverable).toBe(true);
    },
  },
  // Transport failures: every provider goes through the one shared client (src/providers/shared/),
  // so each must fail the same way, whatever its wire format.
];

runConformance('provider conformance, answers', CASES);
