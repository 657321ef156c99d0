/** The catalog the end-to-end suites run against: simulated providers with every failure mode. */
export function testCatalog(options: { upstreamBaseUrl?: string; requestsPerWindow?: number; tokensPerMinute?: number } = {}): unknown {
  const prices = { input: '1', cached_input: '0.5', output: '4' };
  const model = (id: string, targets: Array<{ provider: string; model?: string; priority?: number }>, extra: Record<string, unknown> = {}) => ({
    id,
    prices,
    max_output_tokens: 512,
    targets: targets.map((target) => ({ provider: target.provider, model: target.model ?? id, priority: target.priority ?? 0 })),
    ...extra,
  });
  // Room for the largest simulated reasoning budget (max: 2048 tokens) plus the answer.
  const efforts = { reasoning_efforts: ['low', 'medium', 'high', 'xhigh', 'max'], max_output_tokens: 4096 };
  const providers: unknown[] = [
    { name: 'sim', type: 'simulated' },
    { name: 'sim-slow', type: 'simulated', pace_ms: 40 },
    { name: 'sim-fail-before', type: 'simulated', failure: { mode: 'before_first_byte' } },
    { name: 'sim-fail-mid', type: 'simulated', failure: { mode: 'mid_stream', after_chunks: 2 } },
    { name: 'sim-hang', type: 'simulated', failure: { mode: 'hang' }, timeouts: { first_byte_ms: 300 } },
  ];
  const models: unknown[] = [
    model('model-5.6', [{ provider: 'sim' }], efforts),
    model('model-5.6-sol', [{ provider: 'sim' }], efforts),
    model('model-5.6-terra', [{ provider: 'sim' }], efforts),
    model('model-5.6-luna', [{ provider: 'sim' }], efforts),
    model('model-5.6-mini', [{ provider: 'sim' }]),
    model('slow-model', [{ provider: 'sim-slow' }]),
    model('failover-model', [{ provider: 'sim-fail-before', priority: 0 }, { provider: 'sim', priority: 1 }]),
    model('broken-model', [{ provider: 'sim-fail-before' }]),
    model('mid-fail-model', [{ provider: 'sim-fail-mid' }]),
    model('hang-model', [{ provider: 'sim-hang' }]),
    model('disabled-model', [{ provider: 'sim' }], { enabled: false }),
  ];
  if (options.upstreamBaseUrl !== undefined) {
    providers.push({ name: 'upstream', type: 'openai', base_url: options.upstreamBaseUrl, api_key_env: 'TEST_UPSTREAM_KEY', timeouts: { first_byte_ms: 2000, idle_ms: 2000 } });
    models.push(model('relay-model', [{ provider: 'upstream', model: 'upstream-model' }]));
  }
  return {
    providers,
    models,
    rate_limits: { requests: options.requestsPerWindow ?? 10_000, window_seconds: 60, tokens_per_minute: options.tokensPerMinute ?? 0 },
  };
}
