/**
 * The operator's start page: usage over time (overview-sections.tsx), the accounts closest to running out, read from the accounts list
 * (the admin API has no balance ordering, so the console reads up to MAX_PAGES pages of active
 * accounts and orders them by what they can still spend, exactly, in nano-USD).
 */
import { api } from '../api';
import { PageHeading } from '../components/heading';
import { ErrorNotice, Loading } from '../components/notice';
import { TableWrap } from '../components/table-wrap';
import { Time } from '../components/time';
import { Usd } from '../components/usd';
import { availableUsd, usdToNanos } from '../money';
import { useAdminSession } from '../session';
import type { Account } from '../types';
import { useLoad } from '../use-load';
import { OutOfRotation, OverviewBreakdown, OverviewUsage } from './overview-sections';

const PAGE_SIZE = 200;
const MAX_PAGES = 5;
const SHOWN = 8;

interface Overview {
  active: Account[];
  /** More active accounts exist than were read. */
  more: boolean;
  disabled: number;
  moreDisabled: boolean;
}

async function loadOverview(): Promise<Overview> {
  const active: Account[] = [];
  let cursor: string | undefined;
  let more = false;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const answer = await api.accounts({ status: 'active', limit: PAGE_SIZE, cursor });
    active.push(...answer.data);
    more = answer.has_more;
    if (answer.next_cursor === null) break;
    cursor = answer.next_cursor;
  }
  const disabled = await api.accounts({ status: 'disabled', limit: PAGE_SIZE });
  return { active, more, disabled: disabled.data.length, moreDisabled: disabled.has_more };
}

function byAvailable(left: Account, right: Account): number {
  const difference = usdToNanos(availableUsd(left)) - usdToNanos(availableUsd(right));
  return difference < 0n ? -1 : difference > 0n ? 1 : 0;
}

export function OverviewPage() {
  const session = useAdminSession();
  const overview = useLoad(loadOverview, []);
  const lowest = overview.data === undefined ? [] : [...overview.data.active].sort(byAvailable).slice(0, SHOWN);
  return (
    <>
      <PageHeading title="Overview" />
      <ErrorNotice error={overview.error} />
      {overview.data === undefined ? (
        overview.loading ? <Loading what="accounts" /> : null
      ) : (
        <>
          <dl class="stats">
            <div class="stat">
              <dt>Active accounts</dt>
              <dd>
                {overview.data.active.length}
                {overview.data.more ? '+' : ''}
              </dd>
            </div>
            <div class="stat">
              <dt>Disabled accounts</dt>
              <dd>
                {overview.data.disabled}
                {overview.data.moreDisabled ? '+' : ''}
              </dd>
            </div>
            <div class="stat">
              <dt>Signed in as</dt>
              <dd class="stat-text">
                {session.admin_token.name ?? session.admin_token.prefix} ({session.admin_token.role})
              </dd>
            </div>
            <div class="stat">
              <dt>Session ends</dt>
              <dd class="stat-text">
                <Time iso={session.expires_at} />
              </dd>
            </div>
          </dl>
          <section aria-labelledby="lowest-heading">
            <h2 id="lowest-heading">Closest to running out</h2>
            {lowest.length === 0 ? (
              <p>
                No active accounts yet. <a href="/console/accounts">Create one</a>.
              </p>
            ) : (
              <TableWrap label="Accounts closest to running out">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Account</th>
                      <th scope="col" class="number">
                        Available
                      </th>
                      <th scope="col" class="number">
                        Balance
                      </th>
                      <th scope="col" class="number">
                        Held by running requests
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {lowest.map((account) => (
                      <tr key={account.id}>
                        <td data-label="Account">
                          <a href={`/console/accounts/${encodeURIComponent(account.id)}`}>{account.name}</a>
                        </td>
                        <td data-label="Available" class="number">
                          <Usd value={availableUsd(account)} />
                        </td>
                        <td data-label="Balance" class="number">
                          <Usd value={account.balance_usd} />
                        </td>
                        <td data-label="Held" class="number">
                          <Usd value={account.reserved_usd} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            )}
            {overview.data.more ? <p class="help">Ordered among the first {overview.data.active.length} active accounts.</p> : null}
          </section>
          <OverviewUsage />
          <OverviewBreakdown />
          <OutOfRotation />
        </>
      )}
    </>
  );
}
