/**
 * The request log: filters (time range, account, key, model, endpoint, status, a request id, errors
 * only) kept in the address, newest first, pages by cursor, each row's account and key by name (the
 * server joins them), a request's detail (`request_id` in the address), and the CSV export of every
 * matching row (a plain link: the browser downloads it with the session cookie).
 */
import { Fragment, type ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, query, type RequestFilter } from '../api';
import { PageHeading } from '../components/heading';
import { ErrorNotice, Loading } from '../components/notice';
import { Pager, usePages } from '../components/pager';
import { TableWrap } from '../components/table-wrap';
import { Time } from '../components/time';
import { Usd } from '../components/usd';
import { ENDPOINTS, endpointLabel } from '../endpoints';
import type { Page, RequestLogEntry } from '../types';
import { useLoad } from '../use-load';

/** The filters as the address names them: `id` searches by request id (`request_id` opens one request's detail). */
const FILTERS = ['from', 'to', 'account', 'key', 'model', 'surface', 'status', 'id', 'errors'] as const;
type FilterName = (typeof FILTERS)[number];
type AddressFilter = Partial<Record<FilterName, string>>;

/** The admin API's filter for the address's. */
function apiFilter({ id, ...rest }: AddressFilter): RequestFilter {
  return { ...rest, ...(id === undefined ? {} : { request_id: id }) };
}

export function RequestsPage() {
  const location = useLocation();
  const filter: AddressFilter = {};
  for (const name of FILTERS) {
    const value = location.query[name];
    if (value !== undefined && value !== '') filter[name] = value;
  }
  const requestId = location.query.request_id;
  const signature = FILTERS.map((name) => filter[name] ?? '').join('\u0000');
  if (requestId !== undefined && requestId !== '') {
    return (
      <>
        <PageHeading title="Request" />
        <p class="breadcrumb">
          <a href={`/console/requests${query({ ...filter })}`}>Request log</a> /
        </p>
        <RequestDetail load={() => api.requests({ request_id: requestId })} requestId={requestId} />
      </>
    );
  }
  return (
    <>
      <PageHeading title="Request log" />
      <FilterForm key={signature} filter={filter} onFilter={(next) => location.route(`/console/requests${query({ ...next })}`)} />
      <p>
        <a href={api.requestsCsvUrl(apiFilter(filter))} download="requests.csv">
          Export these requests as CSV
        </a>
      </p>
      <RequestList
        key={signature}
        names
        load={(cursor) => api.requests(apiFilter(filter), cursor)}
        detailHref={(entry) => `/console/requests${query({ ...filter, request_id: entry.request_id })}`}
      />
    </>
  );
}

function FilterForm({ filter, onFilter }: { filter: AddressFilter; onFilter: (filter: AddressFilter) => void }) {
  const [draft, setDraft] = useState<AddressFilter>(filter);
  const field = (name: FilterName, label: string, type: 'text' | 'date' = 'text') => (
    <div class="field">
      <label for={`filter-${name}`}>{label}</label>
      {type === 'date' ? (
        <input id={`filter-${name}`} type="date" value={draft[name] ?? ''} onInput={(event) => setDraft({ ...draft, [name]: event.currentTarget.value })} />
      ) : (
        <input id={`filter-${name}`} value={draft[name] ?? ''} onInput={(event) => setDraft({ ...draft, [name]: event.currentTarget.value.trim() })} />
      )}
    </div>
  );
  return (
    <form
      role="search"
      class="form-grid filters"
      onSubmit={(event) => {
        event.preventDefault();
        onFilter(draft);
      }}
    >
      {field('from', 'From (UTC day)', 'date')}
      {field('to', 'Before (UTC day)', 'date')}
      {field('account', 'Account')}
      {field('key', 'Key id')}
      {field('model', 'Model')}
      <div class="field">
        <label for="filter-surface">Endpoint</label>
        <select id="filter-surface" value={draft.surface ?? ''} onChange={(event) => setDraft({ ...draft, surface: event.currentTarget.value })}>
          <option value="">Any</option>
          {ENDPOINTS.map((surface) => (
            <option key={surface} value={surface}>
              {endpointLabel(surface)}
            </option>
          ))}
        </select>
      </div>
      {field('status', 'HTTP status')}
      {field('id', 'Request id')}
      <div class="field checkbox-field">
        <input id="filter-errors" type="checkbox" checked={draft.errors === 'true'} onChange={(event) => setDraft({ ...draft, errors: event.currentTarget.checked ? 'true' : '' })} />
        <label for="filter-errors">Errors only</label>
      </div>
      <button type="submit">Filter</button>
    </form>
  );
}

/**
 * Requests, newest first, page by page; used by the operators' log (with each row's account and key,
 * `names`) and the key holder's own.
 */
export function RequestList({
  load,
  detailHref,
  names = false,
}: {
  load: (cursor: string | undefined) => Promise<Page<RequestLogEntry>>;
  detailHref?: (entry: RequestLogEntry) => string;
  names?: boolean;
}) {
  const pages = usePages();
  const list = useLoad(() => load(pages.cursor), [pages.cursor]);
  return (
    <section aria-labelledby="requests-heading">
      <h2 id="requests-heading" class="visually-hidden">
        Requests
      </h2>
      <ErrorNotice error={list.error} />
      {list.data === undefined ? (
        list.loading ? <Loading what="requests" /> : null
      ) : list.data.data.length === 0 ? (
        <p>No requests match.</p>
      ) : (
        <TableWrap label="Request list">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Request id</th>
                {names ? (
                  <>
                    <th scope="col">Account</th>
                    <th scope="col">Key</th>
                  </>
                ) : null}
                <th scope="col">Endpoint</th>
                <th scope="col">Model</th>
                <th scope="col">Status</th>
                <th scope="col" class="number">
                  Tokens in / out
                </th>
                <th scope="col" class="number">
                  Cost
                </th>
                <th scope="col" class="number">
                  Latency
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((entry) => (
                <tr key={entry.id}>
                  <td data-label="When" class="wraps-words">
                    <Time iso={entry.at} />
                  </td>
                  <td data-label="Request id" class="request-id">
                    {detailHref === undefined ? <code>{entry.request_id}</code> : <a href={detailHref(entry)}><code>{entry.request_id}</code></a>}
                  </td>
                  {names ? (
                    <>
                      <td data-label="Account" class="wraps-words">
                        <AccountName entry={entry} />
                      </td>
                      <td data-label="Key" class="wraps-words">
                        <KeyName entry={entry} />
                      </td>
                    </>
                  ) : null}
                  <td data-label="Endpoint" class="wraps-words">
                    <BreakablePath path={endpointLabel(entry.surface)} />
                  </td>
                  <td data-label="Model" class="wraps-words">
                    {entry.model ?? ''}
                  </td>
                  <td data-label="Status" class="wraps-words">
                    {entry.status}
                    {entry.error_code === null ? '' : ` ${entry.error_code}`}
                  </td>
                  <td data-label="Tokens" class="number">
                    {entry.input_tokens} / {entry.output_tokens}
                  </td>
                  <td data-label="Cost" class="number">
                    <Usd value={entry.cost_usd} />
                  </td>
                  <td data-label="Latency" class="number">
                    {entry.latency_ms} ms
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <Pager pages={pages} nextCursor={list.data?.next_cursor} label="Requests" />
    </section>
  );
}

/**
 * An endpoint's path that may wrap before each of its inner slashes: with the account and key
 * columns the log's table is otherwise too wide for its frame at 1440 px (the model and the
 * status with its error code wrap too, at their hyphens and spaces).
 */
function BreakablePath({ path }: { path: string }) {
  const parts = path.split(/(?=\/)/);
  return (
    <>
      {parts.map((part, index) => (
        <Fragment key={index}>
          {index > 0 ? <wbr /> : null}
          {part}
        </Fragment>
      ))}
    </>
  );
}

/** The row's account by name (its id when it has gone), linked to its page; nothing for a refusal before a key was known. */
function AccountName({ entry }: { entry: RequestLogEntry }) {
  if (entry.account_id === null) return <span class="muted">none</span>;
  return <a href={`/console/accounts/${encodeURIComponent(entry.account_id)}`}>{entry.account_name ?? entry.account_id}</a>;
}

/** The row's key by name (its id when it has none), linked to its page. */
function KeyName({ entry }: { entry: RequestLogEntry }) {
  if (entry.key_id === null) return <span class="muted">none</span>;
  return <a href={`/console/keys/${encodeURIComponent(entry.key_id)}`}>{entry.key_name ?? <code>{entry.key_id}</code>}</a>;
}

function RequestDetail({ load, requestId }: { load: () => Promise<Page<RequestLogEntry>>; requestId: string }) {
  const answer = useLoad(load, [requestId]);
  if (answer.data === undefined) return answer.loading ? <Loading what="the request" /> : <ErrorNotice error={answer.error} />;
  const entry = answer.data.data[0];
  if (entry === undefined) return <p>No request with id {requestId} in the log.</p>;
  const rows: Array<[string, ComponentChildren]> = [
    ['Request id', <code>{entry.request_id}</code>],
    ['When', <Time iso={entry.at} />],
    ['Account', entry.account_id === null ? 'none (refused before a key was known)' : <><AccountName entry={entry} /> (<code>{entry.account_id}</code>)</>],
    ['Key', entry.key_id === null ? 'none' : <><KeyName entry={entry} /> (<code>{entry.key_id}</code>)</>],
    ['Endpoint', entry.surface === null ? 'none' : `${endpointLabel(entry.surface)} (${entry.surface})`],
    ['Model', entry.model ?? 'none'],
    ['Target', entry.target ?? 'none tried'],
    ['Status', `${entry.status}${entry.error_code === null ? '' : ` (${entry.error_code})`}`],
    ['Stream', entry.stream ? 'yes' : 'no'],
    ['Latency', `${entry.latency_ms} ms${entry.first_byte_ms === null ? '' : `, first byte after ${entry.first_byte_ms} ms`}`],
    ['Input tokens', `${entry.input_tokens} (cached ${entry.cached_input_tokens}, cache write ${entry.cache_write_input_tokens})`],
    ['Output tokens', `${entry.output_tokens} (reasoning ${entry.reasoning_tokens})`],
    ['Cost', <Usd value={entry.cost_usd} />],
  ];
  return (
    <>
      <dl class="details">
        {rows.map(([label, value]) => (
          <Fragment key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </Fragment>
        ))}
      </dl>
      {entry.request_body === null ? null : (
        <section aria-labelledby="request-body-heading">
          <h2 id="request-body-heading">Request body</h2>
          <pre tabIndex={0}>{entry.request_body}</pre>
        </section>
      )}
      {entry.response_body === null ? null : (
        <section aria-labelledby="response-body-heading">
          <h2 id="response-body-heading">Response body</h2>
          <pre tabIndex={0}>{entry.response_body}</pre>
        </section>
      )}
    </>
  );
}
