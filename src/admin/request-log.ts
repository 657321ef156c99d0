/**
 * Searching the request log for operators (admin API; docs/architecture.md, Request log): filters
 * checked here, an account named by id or name, pages newest first, and the CSV export: a short
 * query per page, each in its export turn (export-turns.ts), up to a bound of rows.
 */
import type { Page, RequestLogCursor, RequestLogFilter, RequestLogRecord, AccountStore, OperationsStore } from '../store/store.js';
import { requireAccount } from './accounts.js';
import { csvLine, csvRows } from './csv.js';
import { inExportTurn } from './export-turns.js';
import { requireOrderedRange, requireValidDate } from './input.js';
import { REQUEST_LOG_CSV_COLUMNS, requestLogView } from './views.js';

export interface RequestLogSearch {
  /** Arrived at or after. */
  from?: Date;
  /** Arrived before. */
  to?: Date;
  /** Account id or name. */
  accountRef?: string;
  keyId?: string;
  model?: string;
  /** The endpoint (client surface). */
  surface?: string;
  status?: number;
  requestId?: string;
  /** Only the errors: a status of 400 or more, or an error code. */
  errorsOnly?: boolean;
}

/**
 * Rows per page of an export: on SQLite a page's query runs on the event loop, so a page is kept
 * short (a few milliseconds for its query and its CSV).
 */
const EXPORT_PAGE_ROWS = 200;

/**
 * A CSV export of the request log: the header line, then one chunk of lines per page, newest first.
 * It returns where the next export continues when it stopped at its bound with rows left, and
 * undefined when it held every matching row.
 */
export type RequestLogCsvExport = AsyncGenerator<string, RequestLogCursor | undefined>;

export async function searchRequestLog(store: AccountStore & OperationsStore, search: RequestLogSearch, page: { limit: number; after?: RequestLogCursor }): Promise<Page<RequestLogRecord, RequestLogCursor>> {
  return store.listRequestLog(await resolveFilter(store, search), page);
}

/**
 * Every matching row after `after` as CSV (without the bodies), at most `maxRows` of them, a page
 * per query, each page in its export turn (export-turns.ts), so other requests are answered while
 * an export of any size streams. The filter is checked and the first page read before this
 * resolves, so that a bad account or a database that is away is an error answer rather than a cut
 * stream. A consumer that stops asking (a client gone) stops the queries.
 */
export async function exportRequestLogCsv(store: AccountStore & OperationsStore, search: RequestLogSearch, bound: { maxRows: number; after?: RequestLogCursor }): Promise<RequestLogCsvExport> {
  const filter = await resolveFilter(store, search);
  const first = await readCsvPage(store, filter, bound.after, bound.maxRows);
  return csvPages(store, filter, first, bound.maxRows);
}

interface CsvPage {
  lines: string;
  count: number;
  next: RequestLogCursor | undefined;
}

async function* csvPages(store: OperationsStore, filter: RequestLogFilter, first: CsvPage, maxRows: number): RequestLogCsvExport {
  yield csvLine(REQUEST_LOG_CSV_COLUMNS);
  let page = first;
  let left = maxRows;
  for (;;) {
    if (page.count > 0) yield page.lines;
    left -= page.count;
    if (page.next === undefined) return undefined;
    if (left <= 0) return page.next;
    page = await readCsvPage(store, filter, page.next, left);
  }
}

/** The rows after `after` (at most a page, and at most `left`) as CSV lines, read in an export turn. */
function readCsvPage(store: OperationsStore, filter: RequestLogFilter, after: RequestLogCursor | undefined, left: number): Promise<CsvPage> {
  return inExportTurn(async () => {
    const { rows, next } = await store.listRequestLog(filter, { limit: Math.min(EXPORT_PAGE_ROWS, left), ...(after === undefined ? {} : { after }) }, { bodies: false });
    return { lines: csvRows(REQUEST_LOG_CSV_COLUMNS, rows.map(requestLogView)), count: rows.length, next };
  });
}

async function resolveFilter(store: AccountStore & OperationsStore, search: RequestLogSearch): Promise<RequestLogFilter> {
  const from = search.from === undefined ? undefined : requireValidDate(search.from, 'from');
  const to = search.to === undefined ? undefined : requireValidDate(search.to, 'to');
  requireOrderedRange(from, to);
  const accountId = search.accountRef === undefined ? undefined : (await requireAccount(store, search.accountRef)).id;
  return {
    ...(from === undefined ? {} : { from }),
    ...(to === undefined ? {} : { to }),
    ...(accountId === undefined ? {} : { accountId }),
    ...(search.keyId === undefined ? {} : { keyId: search.keyId }),
    ...(search.model === undefined ? {} : { model: search.model }),
    ...(search.surface === undefined ? {} : { surface: search.surface }),
    ...(search.status === undefined ? {} : { status: search.status }),
    ...(search.requestId === undefined ? {} : { requestId: search.requestId }),
    ...(search.errorsOnly === true ? { errorsOnly: true } : {}),
  };
}

