/**
 * The request log: filters (time range, account, key, model, endpoint, status) kept in the
 * address, pages by cursor, a request's detail (`request_id` in the address), and the CSV export
 * of every matching row (a plain link: the browser downloads it with the session cookie).
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

const FILTERS = ['from', 'to', 'account', 'key', 'model', 'surface', 'status'] as const;
type FilterName = (typeof FILTERS)[number];

export function RequestsPage() {
  const location = useLocation();
  const filter: RequestFilter = {};
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
        <a href={api.requestsCsvUrl(filter)} download="requests.csv">
          Export these requests as CSV
        </a>
      </p>
      <RequestList key={signature} load={(cursor) => api.requests(filter, cursor)} detailHref={(entry) => `/console/requests${query({ ...filter, request_id: entry.request_id })}`} />
    </>
  );
}

function FilterForm({ filter, onFilter }: { filter: RequestFilter; onFilter: (filter: RequestFilter) => void }) {
  const [draft, setDraft] = useState<RequestFilter>(filter);
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
      <button type="submit">Filter</button>
    </form>
  );
}

/** Requests, newest first, page by page; used by the operators' log and the key holder's own. */
export function RequestList({ load, detailHref }: { load: (cursor: string | undefined) => Promise<Page<RequestLogEntry>>; detailHref?: (entry: RequestLogEntry) => string }) {
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
                <th scope="col">Request id</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((entry) => (
                <tr key={entry.id}>
                  <td data-label="When" class="wraps-words">
                    <Time iso={entry.at} />
                  </td>
                  <td data-label="Endpoint" class="wraps-words">
                    {endpointLabel(entry.surface)}
                  </td>
                  <td data-label="Model">{entry.model ?? ''}</td>
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
                  <td data-label="Request id" class="request-id">
                    {detailHref === undefined ? <code>{entry.request_id}</code> : <a href={detailHref(entry)}><code>{entry.request_id}</code></a>}
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

function RequestDetail({ load, requestId }: { load: () => Promise<Page<RequestLogEntry>>; requestId: string }) {
  const answer = useLoad(load, [requestId]);
  if (answer.data === undefined) return answer.loading ? <Loading what="the request" /> : <ErrorNotice error={answer.error} />;
  const entry = answer.data.data[0];
  if (entry === undefined) return <p>No request with id {requestId} in the log.</p>;
  const rows: Array<[string, ComponentChildren]> = [
    ['Request id', <code>{entry.request_id}</code>],
    ['When', <Time iso={entry.at} />],
    ['Account', entry.account_id === null ? 'none (refused before a key was known)' : <a href={`/console/accounts/${encodeURIComponent(entry.account_id)}`}>{entry.account_id}</a>],
    ['Key', entry.key_id === null ? 'none' : <a href={`/console/keys/${encodeURIComponent(entry.key_id)}`}>{entry.key_id}</a>],
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
