import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig } from './load.js';

describe('config', () => {
  it('the demo catalog serves the spec model ids', () => {
    const config = loadConfig(undefined);
    const ids = config.models.map((model) => model.id);
    expect(ids).toEqual(expect.arrayContaining(['model-5.6', 'model-5.6-sol', 'model-5.6-terra', 'model-5.6-luna', 'model-5.6-mini']));
    expect(Object.isFrozen(config.models[0])).toBe(true);
  });

  it('names the bad field', () => {
    const bad = {
      providers: [{ name: 'sim', type: 'simulated' }],
      models: [{ id: 'm', prices: { input: 'cheap', output: 1 }, targets: [{ provider: 'sim', model: 'x' }] }],
    };
    expect(() => parseConfig(bad)).toThrow(/models\[0\]\.prices\.input/);
  });

  it('rejects unknown keys and dangling provider references', () => {
    expect(() => parseConfig({ providers: [{ name: 'sim', type: 'simulated', colour: 'red' }], models: [] })).toThrow(ConfigError);
    const dangling = {
      providers: [{ name: 'sim', type: 'simulated' }],
      models: [{ id: 'm', prices: { input: 1, output: 1 }, targets: [{ provider: 'nope', model: 'x' }] }],
    };
    expect(() => parseConfig(dangling)).toThrow(/models\[0\]\.targets\[0\]\.provider: no provider named "nope"/);
  });

  describe('alerts', () => {
    const base = {
      providers: [{ name: 'sim', type: 'simulated' }],
      models: [{ id: 'm', prices: { input: 1, output: 1 }, targets: [{ provider: 'sim', model: 'x' }] }],
    };
    const hook = { url: 'https://ops.example.com/tollgate', secret_env: 'TOLLGATE_WEBHOOK_SECRET', events: ['balance.low', 'target.down'] };

    it('defaults to no webhooks, with the delivery defaults', () => {
      expect(parseConfig(base).alerts).toEqual({
        webhooks: [],
        check_ms: 5_000,
        delivery: { poll_ms: 1_000, timeout_ms: 10_000, first_retry_ms: 5_000, max_retry_ms: 600_000, max_age_seconds: 86_400 },
        spend_report: { every: 'day', top: 10 },
      });
    });

    it('reads webhooks with their events', () => {
      const config = parseConfig({ ...base, alerts: { webhooks: [hook], delivery: { first_retry_ms: 100 } } });
      expect(config.alerts.webhooks).toEqual([{ ...hook, format: 'generic' }]);
      expect(config.alerts.delivery).toMatchObject({ first_retry_ms: 100, max_retry_ms: 600_000 });
    });

    it('reads chat webhooks without a secret, and slow_answer thresholds', () => {
      const slack = { url: 'https://hooks.slack.com/services/T/B/X', format: 'slack', events: ['slow_answer'] };
      const config = parseConfig({ ...base, alerts: { webhooks: [slack], slow_answer: { first_token_ms: 5_000 } } });
      expect(config.alerts.webhooks).toEqual([slack]);
      expect(config.alerts.slow_answer).toEqual({ first_token_ms: 5_000, rearm_seconds: 600 });
    });

    it.each([
      [{ webhooks: [{ ...hook, url: 'ftp://ops.example.com/x' }] }, /alerts\.webhooks\[0\]\.url/],
      [{ webhooks: [{ ...hook, url: 'not a url' }] }, /alerts\.webhooks\[0\]\.url/],
      [{ webhooks: [{ ...hook, secret_env: 'has-dash' }] }, /alerts\.webhooks\[0\]\.secret_env: an environment variable name/],
      [{ webhooks: [{ ...hook, secret: 'inline' }] }, /alerts\.webhooks\[0\]/],
      [{ webhooks: [{ ...hook, events: [] }] }, /alerts\.webhooks\[0\]\.events/],
      [{ webhooks: [{ ...hook, events: ['balance.low', 'balance.low'] }] }, /event types must not repeat/],
      [{ webhooks: [{ ...hook, events: ['balance.gone'] }] }, /alerts\.webhooks\[0\]\.events\[0\]/],
      [{ webhooks: [hook, { ...hook, events: ['target.up'] }] }, /alerts\.webhooks\[1\]\.url: duplicate webhook URL/],
      [{ webhooks: [{ url: hook.url, events: ['target.up'] }] }, /alerts\.webhooks\[0\]\.secret_env: a generic webhook needs secret_env/],
      [{ webhooks: [{ ...hook, format: 'mattermost' }] }, /alerts\.webhooks\[0\]\.format/],
      [{ webhooks: [{ ...hook, events: ['slow_answer'] }] }, /alerts\.slow_answer: a webhook receives slow_answer/],
      [{ slow_answer: { rearm_seconds: 60 } }, /alerts\.slow_answer: set first_token_ms, duration_ms or both/],
      [{ slow_answer: { duration_ms: 0 } }, /alerts\.slow_answer\.duration_ms/],
      [{ spend_report: { every: 'month' } }, /alerts\.spend_report\.every/],
      [{ spend_report: { top: 0 } }, /alerts\.spend_report\.top/],
      [{ check_ms: 10 }, /alerts\.check_ms/],
      [{ delivery: { first_retry_ms: 2_000, max_retry_ms: 1_000 } }, /alerts\.delivery\.first_retry_ms: first_retry_ms must not exceed max_retry_ms/],
      [{ delivery: { timeout_ms: 0 } }, /alerts\.delivery\.timeout_ms/],
      [{ colour: 'red' }, /alerts/],
    ])('refuses %j', (alerts, message) => {
      expect(() => parseConfig({ ...base, alerts })).toThrow(message);
    });
  });

  it('metrics.require_admin_token: off by default, a boolean, no other key', () => {
    const base = { providers: [{ name: 'sim', type: 'simulated' }], models: [{ id: 'm', prices: { input: 1, output: 1 }, targets: [{ provider: 'sim', model: 'x' }] }] };
    expect(parseConfig(base).metrics).toEqual({ require_admin_token: false });
    expect(parseConfig({ ...base, metrics: { require_admin_token: true } }).metrics).toEqual({ require_admin_token: true });
    expect(() => parseConfig({ ...base, metrics: { require_admin_token: 'yes' } })).toThrow(/metrics\.require_admin_token/);
    expect(() => parseConfig({ ...base, metrics: { require_token: true } })).toThrow(ConfigError);
  });

  it('billing.slices: auto by default, with the defaults; a partial one filled in; bad values name the field', () => {
    const base = { providers: [{ name: 'sim', type: 'simulated' }], models: [{ id: 'm', prices: { input: 1, output: 1 }, targets: [{ provider: 'sim', model: 'x' }] }] };
    const defaults = { enabled: 'auto', size_usd: '1', headroom: 8, idle_seconds: 10 };
    expect(parseConfig(base).billing).toEqual({ hold_ttl_seconds: 900, checkpoint_seconds: 2, slices: defaults });
    expect(parseConfig({ ...base, billing: { hold_ttl_seconds: 60 } }).billing.slices).toEqual(defaults);
    expect(parseConfig({ ...base, billing: { slices: { enabled: false } } }).billing.slices).toEqual({ ...defaults, enabled: false });
    expect(parseConfig({ ...base, billing: { slices: { enabled: true, size_usd: '0.25', headroom: 3 } } }).billing.slices).toEqual({ ...defaults, enabled: true, size_usd: '0.25', headroom: 3 });
    expect(() => parseConfig({ ...base, billing: { slices: { headroom: 1 } } })).toThrow(/billing\.slices\.headroom/);
    expect(() => parseConfig({ ...base, billing: { slices: { enabled: 'yes' } } })).toThrow(/billing\.slices\.enabled/);
    expect(() => parseConfig({ ...base, billing: { slices: { size: 1 } } })).toThrow(ConfigError);
  });

  it('server.trusted_proxies: none by default; addresses, CIDR ranges and proxy-addr names; anything else names the entry', () => {
    const base = { providers: [{ name: 'sim', type: 'simulated' }], models: [{ id: 'm', prices: { input: 1, output: 1 }, targets: [{ provider: 'sim', model: 'x' }] }] };
    expect(parseConfig(base).server).toEqual({ trusted_proxies: [] });
    const proxies = ['10.0.0.5', '10.0.0.0/8', '::1', 'fd00::/8', 'loopback', 'uniquelocal'];
    expect(parseConfig({ ...base, server: { trusted_proxies: proxies } }).server.trusted_proxies).toEqual(proxies);
    for (const bad of ['10.0.0.0/33', 'proxy.internal', '10.0.0.0/8/8', '::1/129', '*']) {
      expect(() => parseConfig({ ...base, server: { trusted_proxies: ['127.0.0.1', bad] } })).toThrow(/server\.trusted_proxies\[1\]/);
    }
  });

  it('rate_limits.auth_lookups_per_second: 1000 by default, 0 turns it off', () => {
    const base = { providers: [{ name: 'sim', type: 'simulated' }], models: [{ id: 'm', prices: { input: 1, output: 1 }, targets: [{ provider: 'sim', model: 'x' }] }] };
    expect(parseConfig(base).rate_limits.auth_lookups_per_second).toBe(1_000);
    expect(parseConfig({ ...base, rate_limits: { auth_lookups_per_second: 0 } }).rate_limits.auth_lookups_per_second).toBe(0);
    expect(() => parseConfig({ ...base, rate_limits: { auth_lookups_per_second: -1 } })).toThrow(/rate_limits\.auth_lookups_per_second/);
  });
});
