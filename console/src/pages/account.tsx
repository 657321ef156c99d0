/**
 * One account: balance, what running requests hold, what is left; credit or debit with a reason,
 * rename, low-balance alert, disable or enable (operator and owner); its usage chart, keys and ledger.
 */
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api } from '../api';
import { PageHeading } from '../components/heading';
import { ErrorNotice, Loading, SuccessNotice } from '../components/notice';
import { Status } from '../components/status';
import { Time } from '../components/time';
import { Usd } from '../components/usd';
import { availableUsd, formatUsd, isPositiveUsdAmount } from '../money';
import { roleReaches, useAdminSession } from '../session';
import type { Account } from '../types';
import { useLoad } from '../use-load';
import { UsageSection } from '../components/usage-section';
import { KeysSection } from './keys-section';
import { LedgerSection } from './ledger-section';
import { ThresholdForm } from './threshold-form';
import { useAction } from '../use-action';

export function AccountPage() {
  const { params } = useRoute();
  const id = params.id ?? '';
  const session = useAdminSession();
  const account = useLoad(() => api.account(id), [id]);
  const [ledgerVersion, setLedgerVersion] = useState(0);
  const [done, setDone] = useState<string | null>(null);
  const canChange = roleReaches(session.admin_token.role, 'operator');

  if (account.data === undefined) {
    return (
      <>
        <PageHeading title="Account" />
        <ErrorNotice error={account.error} />
        {account.loading ? <Loading what="the account" /> : null}
      </>
    );
  }
  const current = account.data;
  const changed = (message: string, ledgerMoved: boolean): void => {
    setDone(message);
    account.reload();
    if (ledgerMoved) setLedgerVersion((value) => value + 1);
  };
  return (
    <>
      <p class="breadcrumb">
        <a href="/console/accounts">Accounts</a> /
      </p>
      <PageHeading title={current.name}>
        <Status state={current.disabled ? 'disabled' : 'active'} />
      </PageHeading>
      <dl class="stats">
        <div class="stat">
          <dt>Balance</dt>
          <dd>
            <Usd value={current.balance_usd} />
          </dd>
        </div>
        <div class="stat">
          <dt>Held by running requests</dt>
          <dd>
            <Usd value={current.reserved_usd} />
          </dd>
        </div>
        <div class="stat">
          <dt>Available</dt>
          <dd>
            <Usd value={availableUsd(current)} />
          </dd>
        </div>
        <div class="stat">
          <dt>Created</dt>
          <dd class="stat-text">
            <Time iso={current.created_at} />
          </dd>
        </div>
      </dl>
      <p class="help">
        Account id <code>{current.id}</code>
      </p>
      {done === null ? null : <SuccessNotice>{done}</SuccessNotice>}
      {canChange ? (
        <div class="panels">
          <AdjustForm account={current} onStart={() => setDone(null)} onDone={(message) => changed(message, true)} />
          <RenameForm account={current} onStart={() => setDone(null)} onDone={(message) => changed(message, false)} />
          <ThresholdForm key={current.low_balance_threshold_usd ?? ''} account={current} onStart={() => setDone(null)} onDone={(message) => changed(message, false)} />
          <StatusForm account={current} onStart={() => setDone(null)} onDone={(message) => changed(message, false)} />
        </div>
      ) : null}
      <UsageSection id="account-usage" title="Usage" load={(choice) => api.usage({ ...choice, account: current.id })} />
      <KeysSection accountId={current.id} canChange={canChange} />
      <LedgerSection accountId={current.id} version={ledgerVersion} />
    </>
  );
}

interface FormProps {
  account: Account;
  /** A change is being sent: the page's last success message no longer describes the latest attempt. */
  onStart: () => void;
  onDone: (message: string) => void;
}

function AdjustForm({ account, onStart, onDone }: FormProps) {
  const [direction, setDirection] = useState<'credit' | 'debit'>('credit');
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const { busy, error, setError, attempt } = useAction();
  async function submit(event: Event): Promise<void> {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    onStart();
    if (!isPositiveUsdAmount(amount)) {
      setError(new Error('Enter an amount in dollars above zero, with at most 9 decimals (like 10 or 0.25).'));
      return;
    }
    await attempt(async () => {
      await api.adjustAccount(account.id, direction, amount.trim(), reason.trim());
      onDone(`${direction === 'credit' ? 'Credited' : 'Debited'} ${formatUsd(amount.trim())} (${reason.trim()}).`);
      // Emptied for the next adjustment: a reset, so the browser no longer marks the required fields
      // the person typed into as wrongly filled (red), which they were not.
      form.reset();
      setAmount('');
      setReason('');
    });
  }
  return (
    <section class="card" aria-labelledby="adjust-heading">
      <h2 id="adjust-heading">Credit or debit</h2>
      <form class="stack" onSubmit={(event) => void submit(event)}>
        <fieldset class="choice">
          <legend>Direction</legend>
          <label>
            <input type="radio" name="direction" value="credit" checked={direction === 'credit'} onChange={() => setDirection('credit')} /> Credit (add)
          </label>
          <label>
            <input type="radio" name="direction" value="debit" checked={direction === 'debit'} onChange={() => setDirection('debit')} /> Debit (take off)
          </label>
        </fieldset>
        <div class="field">
          <label for="adjust-amount">Amount (USD)</label>
          <input id="adjust-amount" inputMode="decimal" required value={amount} onInput={(event) => setAmount(event.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="adjust-reason">Reason</label>
          <input id="adjust-reason" required maxLength={500} value={reason} onInput={(event) => setReason(event.currentTarget.value)} aria-describedby="adjust-help" />
          <p id="adjust-help" class="help">
            Kept on the ledger entry and in the audit log. A debit never takes the balance below what is held.
          </p>
        </div>
        <ErrorNotice error={error} />
        <div class="form-actions">
          <button type="submit" disabled={busy}>
            {direction === 'credit' ? 'Add credit' : 'Debit'}
          </button>
        </div>
      </form>
    </section>
  );
}

function RenameForm({ account, onStart, onDone }: FormProps) {
  const [name, setName] = useState(account.name);
  const { busy, error, attempt } = useAction();
  async function submit(event: Event): Promise<void> {
    event.preventDefault();
    onStart();
    await attempt(async () => {
      const renamed = await api.renameAccount(account.id, name.trim());
      onDone(`Renamed to ${renamed.name}.`);
    });
  }
  return (
    <section class="card" aria-labelledby="rename-heading">
      <h2 id="rename-heading">Rename</h2>
      <form class="stack" onSubmit={(event) => void submit(event)}>
        <div class="field">
          <label for="rename-name">New name</label>
          <input id="rename-name" required maxLength={100} value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </div>
        <ErrorNotice error={error} />
        <div class="form-actions">
          <button type="submit" class="button-secondary" disabled={busy || name.trim() === account.name}>
            Rename
          </button>
        </div>
      </form>
    </section>
  );
}

/** Disabling asks for a second press: its keys are refused everywhere within a second. */
function StatusForm({ account, onStart, onDone }: FormProps) {
  const [confirming, setConfirming] = useState(false);
  const { busy, error, attempt } = useAction();
  async function change(disabled: boolean): Promise<void> {
    onStart();
    await attempt(async () => {
      await api.setAccountDisabled(account.id, disabled);
      setConfirming(false);
      onDone(disabled ? 'Account disabled: its keys are refused.' : 'Account enabled.');
    });
  }
  return (
    <section class="card" aria-labelledby="status-heading">
      <h2 id="status-heading">Status</h2>
      <p>
        This account is <strong>{account.disabled ? 'disabled' : 'active'}</strong>.{' '}
        {account.disabled ? 'Its keys are refused.' : 'Disabling it refuses its keys on every instance within a second.'}
      </p>
      <ErrorNotice error={error} />
      {account.disabled ? (
        <button type="button" disabled={busy} onClick={() => void change(false)}>
          Enable account
        </button>
      ) : confirming ? (
        <div class="form-actions">
          <button type="button" class="button-danger" disabled={busy} onClick={() => void change(true)}>
            Yes, disable {account.name}
          </button>
          <button type="button" class="button-secondary" onClick={() => setConfirming(false)}>
            Keep it active
          </button>
        </div>
      ) : (
        <button type="button" class="button-danger" onClick={() => setConfirming(true)}>
          Disable account…
        </button>
      )}
    </section>
  );
}
