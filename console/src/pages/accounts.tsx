/**
 * Accounts: search by name and status, sorted on the server by name, spend over the last 30 days,
 * last use or creation (the column headers sort; all kept in the address, so a view can be shared),
 * pages, and a new account.
 */
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

/** What the list sorts by, as the admin API names it; `created` (oldest first) when the address names none. */
type SortBy = 'created' | 'name' | 'spend' | 'last_used';
const SORTS: Record<SortBy, { label: string; descendingFirst: boolean }> = {
  created: { label: 'Created', descendingFirst: false },
  name: { label: 'Name', descendingFirst: false },
  spend: { label: 'Spend (30 days)', descendingFirst: true },
  last_used: { label: 'Last used', descendingFirst: true },
};

interface Search {
  name: string;
  status: string;
  sort: SortBy;
  /** Empty: the sort's own first direction (A to Z, oldest, highest spend, latest use first). */
  order: '' | 'asc' | 'desc';
}

const isSort = (value: string | undefined): value is SortBy => value !== undefined && Object.hasOwn(SORTS, value);

function descending(search: Search): boolean {
  return search.order === '' ? SORTS[search.sort].descendingFirst : search.order === 'desc';
}

export function AccountsPage() {
  const session = useAdminSession();
  const location = useLocation();
  const order = location.query.order;
  const search: Search = {
    name: location.query.name ?? '',
    status: location.query.status ?? '',
    sort: isSort(location.query.sort) ? location.query.sort : 'created',
    order: order === 'asc' || order === 'desc' ? order : '',
  };
  const signature = `${search.name}\u0000${search.status}\u0000${search.sort}\u0000${search.order}`;
  const go = (next: Search) => location.route(`/console/accounts${searchQuery(next)}`);
  return (
    <>
      <PageHeading title="Accounts" />
      <SearchForm key={signature} search={search} onSearch={go} />
      <AccountList key={signature} search={search} onSort={go} />
      {roleReaches(session.admin_token.role, 'operator') ? <NewAccountForm /> : null}
    </>
  );
}

function searchQuery(search: Search): string {
  const parameters = new URLSearchParams();
  if (search.name !== '') parameters.set('name', search.name);
  if (search.status !== '') parameters.set('status', search.status);
  if (search.sort !== 'created') parameters.set('sort', search.sort);
  if (search.order !== '' && descending(search) !== SORTS[search.sort].descendingFirst) parameters.set('order', search.order);
  const text = parameters.toString();
  return text === '' ? '' : `?${text}`;
}

function SearchForm({ search, onSearch }: { search: Search; onSearch: (search: Search) => void }) {
  const [draftName, setDraftName] = useState(search.name);
  const [draftStatus, setDraftStatus] = useState(search.status);
  const [draftSort, setDraftSort] = useState<SortBy>(search.sort);
  return (
    <form
      role="search"
      class="toolbar"
      onSubmit={(event) => {
        event.preventDefault();
        onSearch({ name: draftName.trim(), status: draftStatus, sort: draftSort, order: draftSort === search.sort ? search.order : '' });
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
      <div class="field">
        <label for="search-sort">Sort by</label>
        <select id="search-sort" value={draftSort} onChange={(event) => setDraftSort(isSort(event.currentTarget.value) ? event.currentTarget.value : 'created')}>
          <option value="created">Oldest first</option>
          <option value="name">Name</option>
          <option value="spend">Spend (30 days)</option>
          <option value="last_used">Last used</option>
        </select>
      </div>
      <button type="submit">Search</button>
    </form>
  );
}

/** A column header that sorts the list by its column; a second click turns the order round. */
function SortHeader({ column, search, onSort, number = false }: { column: SortBy; search: Search; onSort: (search: Search) => void; number?: boolean }) {
  const sorted = search.sort === column;
  const down = descending(search);
  const next: Search = { ...search, sort: column, order: sorted ? (down ? 'asc' : 'desc') : '' };
  return (
    <th scope="col" class={number ? 'number' : undefined} aria-sort={sorted ? (down ? 'descending' : 'ascending') : undefined}>
      <button type="button" class="sort-button" onClick={() => onSort(next)}>
        {SORTS[column].label}
        {sorted ? (down ? ' ↓' : ' ↑') : ''}
      </button>
    </th>
  );
}

function AccountList({ search, onSort }: { search: Search; onSort: (search: Search) => void }) {
  const pages = usePages();
  const { name, status, sort } = search;
  const list = useLoad(() => api.accounts({ name, status, sort, order: descending(search) ? 'desc' : 'asc', cursor: pages.cursor, limit: 50 }), [pages.cursor]);
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
                <SortHeader column="name" search={search} onSort={onSort} />
                <th scope="col">Status</th>
                <th scope="col" class="number">
                  Balance
                </th>
                <th scope="col" class="number">
                  Held
                </th>
                <SortHeader column="spend" search={search} onSort={onSort} number />
                <SortHeader column="last_used" search={search} onSort={onSort} />
                <SortHeader column="created" search={search} onSort={onSort} />
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
                  <td data-label="Spend (30 days)" class="number">
                    <Usd value={account.spend_usd} />
                  </td>
                  <td data-label="Last used">{account.last_used_at === null ? <span class="muted">never</span> : <Time iso={account.last_used_at} />}</td>
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
