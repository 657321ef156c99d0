import { describe, expect, it } from 'vitest';
import type { AccountRecord, ApiKeyRecord } from '../store/store.js';
import { accountView, keyDetailsView, keyView, unitPricesView, usageReportView } from './views.js';

const key: ApiKeyRecord = {
  id: 'key_1',
  accountId: 'acct_1',
  name: 'ci',
  prefix: 'sk-tg-abcdef',
  hash: 'f'.repeat(64),
  models: ['model-5.6'],
  requestsPerWindow: 10,
  tokensPerMinute: null,
  expiresAt: new Date('2025-07-01T00:00:00Z'),
  disabled: false,
  createdAt: new Date('2025-01-01T00:00:00Z'),
};

describe('views', () => {
  it('shows accounts with exact decimal USD', () => {
    const account: AccountRecord = {
      id: 'acct_1',
      name: 'acme',
      balanceNanos: 12_000_000_001n,
      reservedNanos: 500_000_000n,
      disabled: false,
      createdAt: new Date('2025-01-01T00:00:00Z'),
      lowBalanceThresholdNanos: 2_500_000_000n,
    };
    expect(accountView(account)).toEqual({
      id: 'acct_1',
      name: 'acme',
      balance_usd: '12.000000001',
      reserved_usd: '0.5',
      disabled: false,
      created_at: '2025-01-01T00:00:00.000Z',
      low_balance_threshold_usd: '2.5',
    });
    expect(accountView({ ...account, lowBalanceThresholdNanos: null }).low_balance_threshold_usd).toBeNull();
  });

  it('shows keys without their hash, with a status at the given time', () => {
    const view = keyView(key, new Date('2025-06-01T00:00:00Z'));
    expect(view).toEqual({
      id: 'key_1',
      account_id: 'acct_1',
      name: 'ci',
      prefix: 'sk-tg-abcdef',
      models: ['model-5.6'],
      requests_per_window: 10,
      tokens_per_minute: null,
      expires_at: '2025-07-01T00:00:00.000Z',
      disabled: false,
      status: 'active',
      budget: null,
      created_at: '2025-01-01T00:00:00.000Z',
      deleted_at: null,
    });
    expect(JSON.stringify(view)).not.toContain(key.hash);
    expect(keyView(key, new Date('2025-08-01T00:00:00Z')).status).toBe('expired');
    expect(keyView({ ...key, disabled: true, deletedAt: new Date('2025-05-01T00:00:00Z') }, new Date('2025-08-01T00:00:00Z'))).toMatchObject({
      status: 'deleted',
      deleted_at: '2025-05-01T00:00:00.000Z',
    });
  });

  it('shows a key budget in USD, and its current period with what is left', () => {
    const budgeted = { ...key, budget: { limitNanos: 5_000_000_000n, period: 'day' as const } };
    expect(keyView(budgeted).budget).toEqual({ period: 'day', limit_usd: '5' });
    const details = keyDetailsView(
      {
        key: budgeted,
        budgetUsage: {
          window: { period: 'day', start: new Date('2025-06-01T00:00:00Z') },
          endsAt: new Date('2025-06-02T00:00:00Z'),
          spentNanos: 1_250_000_000n,
          reservedNanos: 1n,
          remainingNanos: 3_749_999_999n,
        },
      },
      new Date('2025-06-01T12:00:00Z'),
    );
    expect(details.budget).toEqual({
      period: 'day',
      limit_usd: '5',
      period_start: '2025-06-01T00:00:00.000Z',
      resets_at: '2025-06-02T00:00:00.000Z',
      spent_usd: '1.25',
      reserved_usd: '0.000000001',
      remaining_usd: '3.749999999',
    });
    expect(keyDetailsView({ key }).budget).toBeNull();
  });

  it('shows usage with snake_case counts and USD strings', () => {
    const tokens = { inputTokens: 1, cachedInputTokens: 2, cacheWriteInputTokens: 5, outputTokens: 3, reasoningTokens: 4 };
    expect(
      usageReportView({
        accountId: null,
        from: new Date('2025-01-01T00:00:00Z'),
        to: null,
        by: 'model',
        rows: [{ group: 'm', requests: 1, ...tokens, errors: 2, costNanos: 1n, excessNanos: 0n }],
        total: { requests: 1, ...tokens, errors: 2, costNanos: 1n, excessNanos: 0n },
      }),
    ).toEqual({
      account_id: null,
      from: '2025-01-01T00:00:00.000Z',
      to: null,
      by: 'model',
      rows: [{ group: 'm', requests: 1, input_tokens: 1, cached_input_tokens: 2, cache_write_input_tokens: 5, output_tokens: 3, reasoning_tokens: 4, errors: 2, cost_usd: '0.000000001', excess_usd: '0' }],
      total: { requests: 1, input_tokens: 1, cached_input_tokens: 2, cache_write_input_tokens: 5, output_tokens: 3, reasoning_tokens: 4, errors: 2, cost_usd: '0.000000001', excess_usd: '0' },
    });
  });
});

describe('unitPricesView', () => {
  it('shows each price billed per unit as an exact USD decimal, and leaves out what the model has none of', () => {
    const base = { inputPerMillion: 1n, cachedInputPerMillion: 1n, outputPerMillion: 1n };
    expect(unitPricesView(base)).toEqual({});
    expect(
      unitPricesView({
        ...base,
        imageInputPerMillion: 10_000_000_000n,
        perImage: new Map([['1024x1024/high', 167_000_000n], ['default', 40_000_000n]]),
        perAudioSecond: 100_000n,
        perMillionCharacters: 15_000_000_000n,
      }),
    ).toEqual({ image_input_per_million: '10', per_image: { '1024x1024/high': '0.167', default: '0.04' }, per_audio_second: '0.0001', per_million_characters: '15' });
  });
});
