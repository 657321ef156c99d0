/** Accounts: search by name and status (kept in the address, so a search can be shared), pages, and a new account. */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../api';
import { PageHeading } from '../components/heading';
import { ErrorNotice, Loading } from '../components/notice';
import { Pager, usePages } from '../components/pager';
import { Status } from '../components/status';
import { TableWrap } from '../components/table-wrap';
import { Time } from '../components/time';
import { Usd } from '../components/usd';
import { roleReaches, useAdminSession } from '../session';
import { useLoad } from '../use-load';
import { useAction } from '../use-action';

export function AccountsPage() {
  const session = useAdminSession();
  const location = useLocation();
  const name = location.query.name ?? '';
  const status = location.query.status ?? '';
  return (
    <>
      <PageHeading title="Accounts" />
      <SearchForm
        key={`${name}\u0000${status}`}
        name={name}
        status={status}
        onSearch={(next) => location.route(`/console/accounts${searchQuery(next)}`)}
      />
      <AccountList key={`${name}\u0000${status}`} name={name} status={status} />
      {roleReaches(session.admin_token.role, 'operator') ? <NewAccountForm /> : null}
    </>
  );
}

function searchQuery(filter: { name: string; status: string }): string {
  const search = new URLSearchParams();
  if (filter.name !== '') search.set('name', filter.name);
  if (filter.status !== '') search.set('status', filter.status);
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

function SearchForm({ name, status, onSearch }: { name: string; status: string; onSearch: (filter: { name: string; status: string }) => void }) {
  const [draftName, setDraftName] = useState(name);
  const [draftStatus, setDraftStatus] = useState(status);
  return (
    <form
      role="search"
      class="toolbar"
      onSubmit={(event) => {
        event.preventDefault();
        onSearch({ name: draftName.trim(), status: draftStatus });
      }}
    >
      <div class="field">
        <label for="search-name">Name contains</label>
        <input id="search-name" type="search" value={draftName} onInput={(event) => setDraftName(event.currentTarget.value)} />
      </div>
      <div class="field">
        <label for="search-status">Status</label>
        <select id="search-status" value={draftStatus} onChange={(event) => setDraftStatus(event.currentTarget.value)}>
          <option value="">Any</option>
          <option value="active">Active</option>
          <option value="disabled">Disabled</option>
        </select>
      </div>
      <button type="submit">Search</button>
    </form>
  );
}

function AccountList({ name, status }: { name: string; status: string }) {
  const pages = usePages();
  const list = useLoad(() => api.accounts({ name, status, cursor: pages.cursor, limit: 50 }), [name, status, pages.cursor]);
  return (
    <section aria-labelledby="accounts-heading">
      <h2 id="accounts-heading" class="visually-hidden">
        Accounts found
      </h2>
      <ErrorNotice error={list.error} />
      {list.data === undefined ? (
        list.loading ? <Loading what="accounts" /> : null
      ) : list.data.data.length === 0 ? (
        <p>{name !== '' || status !== '' ? 'No account matches this search.' : 'No accounts yet.'}</p>
      ) : (
        <TableWrap label="Accounts">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col" class="number">
                  Balance
                </th>
                <th scope="col" class="number">
                  Held
                </th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((account) => (
                <tr key={account.id}>
                  <td data-label="Name">
                    <a href={`/console/accounts/${encodeURIComponent(account.id)}`}>{account.name}</a>
                  </td>
                  <td data-label="Status">
                    <Status state={account.disabled ? 'disabled' : 'active'} />
                  </td>
                  <td data-label="Balance" class="number">
                    <Usd value={account.balance_usd} />
                  </td>
                  <td data-label="Held" class="number">
                    <Usd value={account.reserved_usd} />
                  </td>
                  <td data-label="Created">
                    <Time iso={account.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <Pager pages={pages} nextCursor={list.data?.next_cursor} label="Accounts" />
    </section>
  );
}

function NewAccountForm() {
  const location = useLocation();
  const [name, setName] = useState('');
  const [balance, setBalance] = useState('');
  const { busy, error, attempt } = useAction();
  async function submit(event: Event): Promise<void> {
    event.preventDefault();
    await attempt(async () => {
      const account = await api.createAccount(name.trim(), balance.trim());
      location.route(`/console/accounts/${encodeURIComponent(account.id)}`);
    });
  }
  return (
    <section aria-labelledby="new-account-heading" class="card">
      <h2 id="new-account-heading">New account</h2>
      <form class="form-grid" onSubmit={(event) => void submit(event)}>
        <div class="field">
          <label for="new-account-name">Name</label>
          <input id="new-account-name" required maxLength={100} value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="new-account-balance">Opening balance (USD)</label>
          <input
            id="new-account-balance"
            inputMode="decimal"
            placeholder="0"
            pattern="\d+(\.\d{1,9})?"
            title="Dollars, with at most 9 decimals, like 25 or 0.5"
            value={balance}
            onInput={(event) => setBalance(event.currentTarget.value)}
          />
        </div>
        <div class="form-actions">
          <button type="submit" disabled={busy}>
            Create account
          </button>
        </div>
      </form>
      <ErrorNotice error={error} />
    </section>
  );
}
