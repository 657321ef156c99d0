/**
 * A Responses stream that fails after it started ends the same way on every route, whether the
 * gateway passes the upstream's events through (an OpenAI Responses upstream) or translates them
 * (Chat, Anthropic, Gemini upstreams): `response.failed`, numbered right after the last event, with
 * the response the stream announced, `status: "failed"`, the catalogue's error code and the usage
 * billed (docs/wire-protocols.md §2.5). The official openai client sees the same last event.
 */
import { expect } from 'vitest';
import type { ServerResponse } from 'node:http';
import { startHarness } from '../support/harness.js';
import { baseUrlOf, type ConformanceCase, doubleSendingHead, KEY_ENV, PROVIDER_NAME, type ProviderEntry, rawEntry, runConformance, SECRET } from './provider-table.js';

interface StreamEvent {
  event: string;
  data: { type: string; sequence_number: number; response?: Record<string, unknown> };
}

/** Streams a Responses request through the gateway to a double that sends some events, then does `then`. */
async function failedStream(entry: ProviderEntry, then: (response: ServerResponse) => void): Promise<{ events: StreamEvent[]; sdkLast: { type: string; response?: unknown } | undefined }> {
  const double = await doubleSendingHead(entry, then);
  const harness = await startHarness({
    catalog: {
      providers: [rawEntry(entry, baseUrlOf(entry, double))],
      models: [{ id: 'conformance-model', prices: { input: '1', output: '4' }, max_output_tokens: 1_000, targets: [{ provider: PROVIDER_NAME, model: entry.upstreamModel }] }],
    },
    env: { [KEY_ENV]: SECRET },
  });
  try {
    const account = await harness.newAccount('5');
    const body = { model: 'conformance-model', input: 'Say hello.', stream: true, store: false };
    const response = await harness.post('/v1/responses', body, account.secret);
    expect(response.status).toBe(200);
    const events = (await response.text())
      .split('\n\n')
      .filter((frame) => frame !== '')
      .map((frame) => {
        const [eventLine, dataLine] = frame.split('\n');
        return { event: eventLine!.slice('event: '.length), data: JSON.parse(dataLine!.slice('data: '.length)) as StreamEvent['data'] };
      });
    let sdkLast: { type: string; response?: unknown } | undefined;
    for await (const event of await harness.client(account.secret).responses.create({ ...body, stream: true })) sdkLast = event;
    return { events, sdkLast };
  } finally {
    await harness.close();
  }
}

/** What every route must agree on about a failed stream. */
function expectFailedTheOneWay(events: StreamEvent[], sdkLast: { type: string; response?: unknown } | undefined): void {
  expect(events.map((event) => event.data.sequence_number)).toEqual(events.map((_event, index) => index));
  for (const event of events) expect(event.data.type).toBe(event.event);
  const created = events[0]!;
  const last = events.at(-1)!;
  expect(created.event).toBe('response.created');
  expect(last.event).toBe('response.failed');
  expect(events.filter((event) => /^response\.(completed|incomplete|failed)$/.test(event.event))).toHaveLength(1);
  expect(last.data.response).toMatchObject({
    id: created.data.response?.id,
    object: 'response',
    model: 'conformance-model',
    status: 'failed',
    error: { code: 'upstream_error', message: expect.stringMatching(/\S/) },
    usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) },
  });
  expect(sdkLast).toMatchObject({ type: 'response.failed', response: { status: 'failed', error: { code: 'upstream_error' } } });
}

const CASES: ConformanceCase[] = [
  {
    name: 'a Responses stream whose upstream connection breaks ends with response.failed, the same on every route',
    async run(entry) {
      const { events, sdkLast } = await failedStream(entry, (response) => response.destroy());
      expectFailedTheOneWay(events, sdkLast);
    },
  },
  {
    name: 'a Responses stream whose upstream sends garbage ends with response.failed, the same on every route',
    async run(entry) {
      const { events, sdkLast } = await failedStream(entry, (response) => response.end('data: {not json\n\n'));
      expectFailedTheOneWay(events, sdkLast);
    },
  },
];

runConformance('Responses stream failures', CASES);
