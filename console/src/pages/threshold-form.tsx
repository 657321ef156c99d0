/** The account's low-balance alert threshold: a `balance.low` alert fires when what it can spend drops below it. */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorNotice } from '../components/notice';
import { formatUsd, isPositiveUsdAmount } from '../money';
import type { Account } from '../types';
import { useAction } from '../use-action';

export function ThresholdForm({ account, onStart, onDone }: { account: Account; onStart: () => void; onDone: (message: string) => void }) {
  const current = account.low_balance_threshold_usd ?? null;
  const [amount, setAmount] = useState(current ?? '');
  const { busy, error, setError, attempt } = useAction();
  async function save(threshold: string | null): Promise<void> {
    onStart();
    if (threshold !== null && !isPositiveUsdAmount(threshold)) {
      setError(new Error('Enter an amount in dollars above zero, with at most 9 decimals.'));
      return;
    }
    await attempt(async () => {
      await api.setLowBalanceThreshold(account.id, threshold);
      onDone(threshold === null ? 'Low-balance alert removed.' : `Low-balance alert below ${formatUsd(threshold)}.`);
      if (threshold === null) setAmount('');
    });
  }
  return (
    <section class="card" aria-labelledby="threshold-heading">
      <h2 id="threshold-heading">Low-balance alert</h2>
      <p>{current === null ? 'No alert is set.' : `An alert fires when what it can spend drops below ${formatUsd(current)}.`}</p>
      <form
        class="stack"
        onSubmit={(event) => {
          event.preventDefault();
          void save(amount.trim());
        }}
      >
        <div class="field">
          <label for="threshold-amount">Alert below (USD)</label>
          <input id="threshold-amount" inputMode="decimal" required value={amount} onInput={(event) => setAmount(event.currentTarget.value)} />
        </div>
        <ErrorNotice error={error} />
        <div class="form-actions">
          <button type="submit" disabled={busy}>
            Set alert
          </button>
          {current === null ? null : (
            <button type="button" class="button-secondary" disabled={busy} onClick={() => void save(null)}>
              Remove alert
            </button>
          )}
        </div>
      </form>
    </section>
  );
}
