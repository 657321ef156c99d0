import { describe, expect, it } from 'vitest';
import { sampleSum, samplesOf } from '../../test/support/prometheus.js';
import { createMetrics } from './metrics.js';
import { RequestMetrics } from './request-metrics.js';
import type { RequestOutcome } from './request-outcome.js';

const outcome = (fields: Partial<RequestOutcome> = {}): RequestOutcome => ({
  accountId: 'acct_1',
  keyId: 'key_1',
  surface: 'chat',
  model: 'model-a',
  target: 'sim/model-a',
  failedTarget: null,
  stream: false,
  firstByteAt: null,
  usage: null,
  costNanos: 0n,
  errorCode: null,
  toldCode: null,
  ended: Promise.resolve(),
  ...fields,
});

describe('RequestMetrics', () => {
  it('labels a model outside the catalog and a surface outside the three as unknown', async () => {
    const metrics = createMetrics();
    const recorder = new RequestMetrics(metrics, ['model-a']);
    recorder.record(outcome({ model: 'made-up' }), 200, 10, 1_000);
    recorder.record(outcome({ surface: 'something-else' }), 200, 10, 1_000);
    const text = await metrics.registry.metrics();
    expect(text).not.toContain('made-up');
    expect(text).not.toContain('something-else');
    expect(sampleSum(text, 'tollgate_request_duration_seconds_count', { surface: 'chat', model: 'unknown', status: '200' })).toBe(1);
    expect(sampleSum(text, 'tollgate_request_duration_seconds_count', { surface: 'unknown', model: 'model-a', status: '200' })).toBe(1);
  });

  it('gives both spellings of a surface one label', async () => {
    const metrics = createMetrics();
    const recorder = new RequestMetrics(metrics, ['model-a']);
    for (const surface of ['chat', 'chat-completions', 'messages', 'anthropic-messages', 'responses']) recorder.record(outcome({ surface }), 200, 10, 1_000);
    const text = await metrics.registry.metrics();
    const counts = samplesOf(text, 'tollgate_request_duration_seconds_count').map((sample) => [sample.labels.surface, sample.value]);
    expect(Object.fromEntries(counts)).toEqual({ chat: 2, messages: 2, responses: 1 });
  });

  it('measures the time to first byte from the arrival, and the duration from the elapsed time', async () => {
    const metrics = createMetrics();
    const recorder = new RequestMetrics(metrics, ['model-a']);
    // Arrived at 10_000 (now 12_500, 2.5 s elapsed), first byte at 10_300.
    recorder.record(outcome({ firstByteAt: 10_300 }), 200, 2_500, 12_500);
    recorder.record(outcome(), 502, 40, 12_600);
    const text = await metrics.registry.metrics();
    expect(sampleSum(text, 'tollgate_time_to_first_byte_seconds_sum', { status: '200' })).toBeCloseTo(0.3, 6);
    expect(sampleSum(text, 'tollgate_request_duration_seconds_sum', { status: '200' })).toBeCloseTo(2.5, 6);
    // No first byte (it failed before answering): a duration, no time to first byte.
    expect(sampleSum(text, 'tollgate_request_duration_seconds_count', { status: '502' })).toBe(1);
    expect(sampleSum(text, 'tollgate_time_to_first_byte_seconds_count', { status: '502' })).toBe(0);
  });

  it('counts tokens by kind and the cost by model', async () => {
    const metrics = createMetrics();
    const recorder = new RequestMetrics(metrics, ['model-a']);
    const usage = { inputTokens: 100, cachedInputTokens: 30, cacheWriteInputTokens: 20, outputTokens: 50, reasoningTokens: 10 };
    recorder.record(outcome({ usage, costNanos: 123_456n }), 200, 10, 1_000);
    recorder.record(outcome({ usage: { ...usage, cacheWriteInputTokens: undefined }, costNanos: 1n }), 200, 10, 1_000);
    const text = await metrics.registry.metrics();
    const tokens = Object.fromEntries(samplesOf(text, 'tollgate_tokens_total', { model: 'model-a' }).map((sample) => [sample.labels.kind, sample.value]));
    expect(tokens).toEqual({ input: 200, cached_input: 60, cache_write_input: 20, output: 100, reasoning: 20 });
    expect(sampleSum(text, 'tollgate_cost_nanos_total', { model: 'model-a' })).toBe(123_457);
  });
});
