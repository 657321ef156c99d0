/**
 * Page cursors: opaque to clients (base64url of a small JSON value), checked on the way back in,
 * so a tampered or foreign cursor is a 400 naming `cursor`, never a query on junk.
 */
import { GatewayError } from '../../errors/gateway-error.js';
import type { AccountCursor, AccountListCursor, AccountSort, RequestLogCursor } from '../../store/store.js';

function encode(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

function decode(cursor: string): unknown {
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function invalidCursor(): GatewayError {
  return new GatewayError('invalid_request', { message: 'Invalid cursor: pass the next_cursor of a previous page.', param: 'cursor' });
}

export function encodeIdCursor(id: number | undefined): string | null {
  return id === undefined ? null : encode({ id });
}

export function decodeIdCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  const value = decode(cursor);
  if (typeof value === 'object' && value !== null && 'id' in value && Number.isSafeInteger(value.id)) return value.id as number;
  throw invalidCursor();
}

export function encodeAccountCursor(cursor: AccountCursor | undefined): string | null {
  return cursor === undefined ? null : encode({ t: cursor.createdAt.getTime(), id: cursor.id });
}

export function decodeAccountCursor(cursor: string | undefined): AccountCursor | undefined {
  if (cursor === undefined) return undefined;
  const value = decode(cursor);
  if (typeof value === 'object' && value !== null && 't' in value && 'id' in value && Number.isSafeInteger(value.t) && typeof value.id === 'string') {
    return { createdAt: new Date(value.t as number), id: value.id };
  }
  throw invalidCursor();
}

export function encodeAccountListCursor(cursor: AccountListCursor | undefined): string | null {
  return cursor === undefined ? null : encode({ s: cursor.sort, d: cursor.descending, v: cursor.value, id: cursor.id });
}

/** A sorted account list's cursor; one read in another sort or direction is refused, as its value means nothing here. */
export function decodeAccountListCursor(cursor: string | undefined, sort: { by: AccountSort; descending: boolean }): AccountListCursor | undefined {
  if (cursor === undefined) return undefined;
  const value = decode(cursor);
  if (typeof value !== 'object' || value === null || !('s' in value && 'd' in value && 'v' in value && 'id' in value)) throw invalidCursor();
  if (value.s !== sort.by || value.d !== sort.descending || typeof value.id !== 'string') throw invalidCursor();
  const sortValue = value.v;
  const fits =
    sort.by === 'name' ? typeof sortValue === 'string' : sort.by === 'spend' ? typeof sortValue === 'string' && /^\d{1,30}$/.test(sortValue) : Number.isSafeInteger(sortValue);
  if (!fits) throw invalidCursor();
  return { sort: sort.by, descending: sort.descending, value: sortValue as string | number, id: value.id };
}

export function encodeRequestLogCursor(cursor: RequestLogCursor | undefined): string | null {
  return cursor === undefined ? null : encode({ t: cursor.at.getTime(), id: cursor.id });
}

export function decodeRequestLogCursor(cursor: string | undefined): RequestLogCursor | undefined {
  if (cursor === undefined) return undefined;
  const value = decode(cursor);
  if (typeof value === 'object' && value !== null && 't' in value && 'id' in value && Number.isSafeInteger(value.t) && Number.isSafeInteger(value.id)) {
    return { at: new Date(value.t as number), id: value.id as number };
  }
  throw invalidCursor();
}
