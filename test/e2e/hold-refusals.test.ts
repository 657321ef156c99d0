/**
 * A refused hold explains itself, end to end on SQLite and PostgreSQL: the 403 body stays the
 * spec's (balance) or the key budget's exact text, and two headers say what the request needed
 * held and what was left (USD, exact to the nano). The hold is the input bound plus the model's
 * whole `max_output_tokens` unless the request caps its output, so a one-word request refused by
 * default passes with a small `max_tokens`.
 *
 * model-5.6-mini: input $1 and output $4 per 1M tokens, max_output_tokens 512.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NANOS_PER_USD, formatUsd } from '../../src/billing/money.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';

const ONE_WORD = { model: 'model-5.6-mini', messages: [{ role: 'user', content: 'Hi' }] };
const BALANCE_REFUSAL = { error: { message: 'Insufficient balance.', type: 'service_api_error', param: '', code: 'insufficient_user_quota' } };
const KEY_BUDGET_REFUSAL = {
  error: { message: "Insufficient key budget: this API key's spend limit cannot cover the request.", type: 'service_api_error', param: '', code: 'insufficient_user_quota' },
};
/** 512 − 100 output tokens at $4 per 1M: what `max_tokens: 100` holds less than `max_tokens: 512`, in nano-USD. */
const OUTPUT_SAVED_NANOS = (412n * 4n * NANOS_PER_USD) / 1_000_000n;

/** USD decimal text → nano-USD, exactly (the headers are decimals of at most 9 places). */
function nanos(usd: string | null): bigint {
  expect(usd).toMatch(/^\d+(\.\d{1,9})?$/);
  const [whole = '0', fraction = ''] = usd!.split('.');
  return BigInt(whole) * NANOS_PER_USD + BigInt(fraction.padEnd(9, '0'));
}

describe.each(engines)('hold refusals on %s', (engine) => {
  let harness: Harness;
  /** The hold of ONE_WORD by default, as its refusal told it. */
  let defaultHold = 0n;

  beforeAll(async () => {
    harness = await startHarness({ engine });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('a key budget refusal: the exact 403 body, the hold needed and the budget left', async () => {
    const { accountId, secret } = await harness.newAccount('10', { budget: { limitUsd: '0.001', period: 'total' } });
    const refused = await harness.post('/v1/chat/completions', ONE_WORD, secret);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual(KEY_BUDGET_REFUSAL);
    expect(refused.headers.get('x-tollgate-budget-left-usd')).toBe('0.001');
    defaultHold = nanos(refused.headers.get('x-tollgate-hold-needed-usd'));
    // The whole output (512 tokens at $4 per 1M = $0.002048) plus the input's bound.
    expect(defaultHold).toBeGreaterThan(2_048_000n);
    expect(defaultHold).toBeLessThan(2_148_000n);
    expect(await harness.store.countOpenHolds(accountId)).toBe(0);
  });

  it('max_tokens lowers the hold by exactly the output it no longer reserves, and passes where the default is refused', async () => {
    // A budget of 10 nano-USD refuses everything, and so tells each request's hold. Bodies of the
    // same length (512 and 100) have the same input bound: only the output differs.
    const tiny = await harness.newAccount('10', { budget: { limitUsd: '0.00000001', period: 'total' } });
    const holdOf = async (maxTokens: number) => {
      const refused = await harness.post('/v1/chat/completions', { ...ONE_WORD, max_tokens: maxTokens }, tiny.secret);
      expect(refused.status).toBe(403);
      expect(refused.headers.get('x-tollgate-budget-left-usd')).toBe('0.00000001');
      return nanos(refused.headers.get('x-tollgate-hold-needed-usd'));
    };
    const full = await holdOf(512);
    const capped = await holdOf(100);
    expect(full - capped).toBe(OUTPUT_SAVED_NANOS);
    expect(formatUsd(OUTPUT_SAVED_NANOS)).toBe('0.001648');
    // No max_tokens holds the model's whole max_output_tokens, as 512 does (the body is a few bytes shorter).
    expect(defaultHold).toBeLessThanOrEqual(full);
    expect(full - defaultHold).toBeLessThan(20_000n);

    const { secret } = await harness.newAccount('10', { budget: { limitUsd: '0.001', period: 'total' } });
    expect((await harness.post('/v1/chat/completions', ONE_WORD, secret)).status).toBe(403);
    const small = await harness.post('/v1/chat/completions', { ...ONE_WORD, max_tokens: 16 }, secret);
    expect(small.status).toBe(200);
    expect(small.headers.get('x-tollgate-hold-needed-usd')).toBeNull();
  });

  it('an account balance refusal: the spec 403 body, the hold needed and the balance left', async () => {
    const { accountId, secret } = await harness.newAccount('0.0015');
    const refused = await harness.post('/v1/chat/completions', ONE_WORD, secret);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual(BALANCE_REFUSAL);
    expect(refused.headers.get('x-tollgate-budget-left-usd')).toBe('0.0015');
    expect(nanos(refused.headers.get('x-tollgate-hold-needed-usd'))).toBe(defaultHold);
    const small = await harness.post('/v1/chat/completions', { ...ONE_WORD, max_tokens: 16 }, secret);
    expect(small.status).toBe(200);
    // What is left after a charge is the balance less it, to the nano.
    const after = await harness.store.findAccount(accountId);
    const again = await harness.post('/v1/chat/completions', ONE_WORD, secret);
    expect(again.status).toBe(403);
    expect(nanos(again.headers.get('x-tollgate-budget-left-usd'))).toBe(after!.balanceNanos - after!.reservedNanos);
    expect(after!.balanceNanos).toBeLessThan(1_500_000n);
  });
});
