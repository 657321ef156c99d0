/**
 * Searching the request log for operators (admin API; docs/architecture.md, Request log): filters
 * checked here, an account named by id or name, pages newest first, and every matching row for a
 * CSV export, read a page at a time so an export of any size holds one page in memory.
 */
import type { Page, RequestLogCursor, RequestLogFilter, RequestLogRecord, Store } from '../store/store.js';
import { requireAccount } from './accounts.js';
import { AdminError } from './admin-error.js';
import { requireValidDate } from './input.js';

export interface RequestLogSearch {
  /** Arrived at or after. */
  from?: Date;
  /** Arrived before. */
  to?: Date;
  /** Account id or name. */
  accountRef?: string;
  keyId?: string;
  model?: string;
  status?: number;
  requestId?: string;
}

/** Rows read per query of an export. */
const EXPORT_PAGE_ROWS = 500;

export async function searchRequestLog(store: Store, search: RequestLogSearch, page: { limit: number; after?: RequestLogCursor }): Promise<Page<RequestLogRecord, RequestLogCursor>> {
  return store.listRequestLog(await resolveFilter(store, search), page);
}

/** Every matching row, newest first, a page at a time. */
export async function* everyRequestLogRow(store: Store, search: RequestLogSearch): AsyncGenerator<RequestLogRecord> {
  const filter = await resolveFilter(store, search);
  let after: RequestLogCursor | undefined;
  do {
    const page = await store.listRequestLog(filter, { limit: EXPORT_PAGE_ROWS, ...(after === undefined ? {} : { after }) });
    yield* page.rows;
    after = page.next;
  } while (after !== undefined);
}

async function resolveFilter(store: Store, search: RequestLogSearch): Promise<RequestLogFilter> {
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
    ...(search.status === undefined ? {} : { status: search.status }),
    ...(search.requestId === undefined ? {} : { requestId: search.requestId }),
  };
}

/** A range that ends before it starts is a mistake worth saying, not an empty answer. */
export function requireOrderedRange(from: Date | undefined, to: Date | undefined, names: readonly [string, string] = ['from', 'to']): void {
  if (from !== undefined && to !== undefined && from.getTime() > to.getTime()) {
    throw new AdminError('invalid_input', `${names[0]} must not be after ${names[1]} (got ${from.toISOString()} and ${to.toISOString()})`);
  }
}
