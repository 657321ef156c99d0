/**
 * Stored responses: the final response object and the expanded conversation it answered, kept per
 * account for `GET /v1/responses/{id}`, its input items, and `previous_response_id`. Every read
 * and delete is scoped to the account, so another account's response is simply not found.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { StoredResponse } from '../store.js';
import { StoreDataError, toDate, toEpochMilliseconds, toText } from './row-decoding.js';

/** A stored response as its row is written: checked and encoded, ready for either engine. */
export interface ResponseRowValues {
  id: string;
  account_id: string;
  response: string;
  input_items: string;
  created_at: number;
}

/** Checks and encodes a response for saving; throws on one that cannot be kept. */
export function responseRow(stored: StoredResponse): ResponseRowValues {
  if (!isPlainObject(stored.response)) throw new TypeError('response must be a JSON object');
  if (!Array.isArray(stored.inputItems) || !stored.inputItems.every(isPlainObject)) throw new TypeError('inputItems must be an array of JSON objects');
  return {
    id: stored.id,
    account_id: stored.accountId,
    response: encodeJson(stored.response, 'response'),
    input_items: encodeJson(stored.inputItems, 'inputItems'),
    created_at: toEpochMilliseconds(stored.createdAt, 'createdAt'),
  };
}

/**
 * Inserts the response, or replaces the one with the same id. A row with that id owned by another
 * account is left alone and the save throws: ids are unique (lib/ids.ts), so that only happens
 * to a forged or recycled id, and it must never move a response between accounts. On SQLite the store saves
 * through SAVE_RESPONSE_SQL in the hold group commit instead (sqlite-hold-statements.ts).
 */
export async function saveResponse(db: Kysely<Database>, stored: StoredResponse): Promise<void> {
  const row = responseRow(stored);
  const written = await db
    .insertInto('responses')
    .values(row)
    .onConflict((conflict) =>
      conflict
        .column('id')
        .doUpdateSet({ response: row.response, input_items: row.input_items, created_at: row.created_at })
        .where('responses.account_id', '=', stored.accountId),
    )
    .executeTakeFirst();
  if (written.numInsertedOrUpdatedRows !== 1n) throw responseOfAnotherAccount(stored.id);
}

/**
 * `saveResponse`'s statement for a statement prepared once (SQLite). Parameters: id, account id,
 * response, input items, created at. One row changed means saved; none, that the id is another
 * account's (nothing is written then).
 */
export const SAVE_RESPONSE_SQL = `INSERT INTO responses (id, account_id, response, input_items, created_at) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (id) DO UPDATE SET response = excluded.response, input_items = excluded.input_items, created_at = excluded.created_at
  WHERE responses.account_id = excluded.account_id`;

export function saveResponseParameters(row: ResponseRowValues): unknown[] {
  return [row.id, row.account_id, row.response, row.input_items, row.created_at];
}

/** What a save rejects with when the id is already another account's response. */
export function responseOfAnotherAccount(id: string): Error {
  return new Error(`response id ${JSON.stringify(id)} belongs to another account`);
}

export async function findResponse(db: Kysely<Database>, id: string, accountId: string): Promise<StoredResponse | undefined> {
  const row = await db.selectFrom('responses').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
  return row === undefined ? undefined : decodeStoredResponse(row);
}

export async function deleteResponse(db: Kysely<Database>, id: string, accountId: string): Promise<boolean> {
  const deleted = await db.deleteFrom('responses').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
  return deleted.numDeletedRows === 1n;
}

interface ResponseRow {
  id: unknown;
  account_id: unknown;
  response: unknown;
  input_items: unknown;
  created_at: unknown;
}

export function decodeStoredResponse(row: ResponseRow): StoredResponse {
  const response = decodeJson(row.response, 'responses.response');
  if (!isPlainObject(response)) throw new StoreDataError('responses.response: expected a JSON object');
  const inputItems = decodeJson(row.input_items, 'responses.input_items');
  if (!Array.isArray(inputItems) || !inputItems.every(isPlainObject)) {
    throw new StoreDataError('responses.input_items: expected a JSON array of objects');
  }
  return {
    id: toText(row.id, 'responses.id'),
    accountId: toText(row.account_id, 'responses.account_id'),
    response,
    inputItems,
    createdAt: toDate(row.created_at, 'responses.created_at'),
  };
}

function encodeJson(value: unknown, field: string): string {
  const text = JSON.stringify(value);
  if (typeof text !== 'string') throw new TypeError(`${field} is not JSON`);
  return text;
}

function decodeJson(value: unknown, field: string): unknown {
  const text = toText(value, field);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new StoreDataError(`${field}: not JSON: ${text.slice(0, 80)}`);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
