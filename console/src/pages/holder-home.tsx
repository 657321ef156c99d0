/**
 * The key holder's start page: the account's balance, the key's budget and limits (/console/api/self),
 * the key's usage chart and its own requests (/console/api/self/usage and /requests, filtered to the
 * key by the server).
 */
import { api } from '../api';
import { PageHeading } from '../components/heading';
import { ErrorNotice, Loading } from '../components/notice';
import { Status } from '../components/status';
import { Time } from '../components/time';
import { Usd } from '../components/usd';
import { availableUsd } from '../money';
import { UsageSection } from '../components/usage-section';
import { useLoad } from '../use-load';
import { RequestList } from './requests';

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
      {key.budget === null ? null : (
        <section aria-labelledby="budget-heading">
          <h2 id="budget-heading">Budget</h2>
          <dl class="stats">
            <div class="stat">
              <dt>Budget per {key.budget.period === 'total' ? 'all time' : key.budget.period}</dt>
              <dd>
                <Usd value={key.budget.limit_usd} />
              </dd>
            </div>
            <div class="stat">
              <dt>Spent</dt>
              <dd>
                <Usd value={key.budget.spent_usd} />
              </dd>
            </div>
            <div class="stat">
              <dt>Left</dt>
              <dd>
                <Usd value={key.budget.remaining_usd} />
              </dd>
            </div>
          </dl>
        </section>
      )}
      <UsageSection id="self-usage" title="Your key's usage" load={(choice) => api.selfUsage(choice)} />
      <section aria-labelledby="own-requests-heading">
        <h2 id="own-requests-heading">Your key's requests</h2>
        <RequestList load={(cursor) => api.selfRequests({}, cursor)} />
      </section>
    </>
  );
}
