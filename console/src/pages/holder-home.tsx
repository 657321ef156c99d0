/** The key holder's start page: the account's balance and the key's limits, from /console/api/self. */
import { api } from '../api';
import { PageHeading } from '../components/heading';
import { ErrorNotice, Loading } from '../components/notice';
import { Status } from '../components/status';
import { Time } from '../components/time';
import { Usd } from '../components/usd';
import { availableUsd } from '../money';
import { useLoad } from '../use-load';

export function HolderHomePage() {
  const self = useLoad(() => api.self(), []);
  if (self.data === undefined) {
    return (
      <>
        <PageHeading title="Balance and key" />
        <ErrorNotice error={self.error} />
        {self.loading ? <Loading what="your balance" /> : null}
      </>
    );
  }
  const { account, key } = self.data;
  return (
    <>
      <PageHeading title="Balance and key" />
      <section aria-labelledby="balance-heading">
        <h2 id="balance-heading">
          Account <span class="muted">{account.name}</span>
        </h2>
        <dl class="stats">
          <div class="stat">
            <dt>Balance</dt>
            <dd>
              <Usd value={account.balance_usd} />
            </dd>
          </div>
          <div class="stat">
            <dt>Held by running requests</dt>
            <dd>
              <Usd value={account.reserved_usd} />
            </dd>
          </div>
          <div class="stat">
            <dt>Available</dt>
            <dd>
              <Usd value={availableUsd(account)} />
            </dd>
          </div>
        </dl>
        <p class="help">The balance is shared by every key of the account; requests are refused when it cannot cover them.</p>
      </section>
      <section aria-labelledby="key-heading" class="card">
        <h2 id="key-heading">Your key</h2>
        <dl class="details">
          <dt>Name</dt>
          <dd>{key.name ?? <span class="muted">(no name)</span>}</dd>
          <dt>Key</dt>
          <dd>
            <code>{key.prefix}…</code>
          </dd>
          <dt>Status</dt>
          <dd>
            <Status state={key.status} />
          </dd>
          <dt>Models</dt>
          <dd>{key.models === null ? 'Every model of the gateway' : key.models.join(', ')}</dd>
          <dt>Requests per window</dt>
          <dd>{key.requests_per_window ?? 'The gateway default'}</dd>
          <dt>Tokens per minute</dt>
          <dd>{key.tokens_per_minute ?? 'The gateway default'}</dd>
          <dt>Expires</dt>
          <dd>{key.expires_at === null ? 'Never' : <Time iso={key.expires_at} />}</dd>
          <dt>Created</dt>
          <dd>
            <Time iso={key.created_at} />
          </dd>
        </dl>
      </section>
    </>
  );
}
