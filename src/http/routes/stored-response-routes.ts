/**
 * The stored-response endpoints (docs/wire-protocols.md §2.6): GET and DELETE /v1/responses/{id}, and
 * GET /v1/responses/{id}/input_items as a cursor list. Each account sees only its own responses;
 * another account's id is answered exactly like an unknown one, with OpenAI's 404.
 * https://platform.openai.com/docs/api-reference/responses/get
 */
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.js';
import { clipEcho } from '../../protocol/client-echo.js';
import type { OperationsStore, StoredResponse } from '../../store/store.js';
import { requireContext } from '../api-hooks.js';

interface IdParams {
  Params: { id: string };
}

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
const ORDERS = ['asc', 'desc'] as const;
type Order = (typeof ORDERS)[number];

export function registerStoredResponseRoutes(app: FastifyInstance, deps: { onRequest: onRequestAsyncHookHandler[]; store: OperationsStore }): void {
  const { onRequest, store } = deps;

  app.get<IdParams>('/v1/responses/:id', { onRequest }, async (request) => {
    // Replaying a stored response as a stream is OpenAI's feature for background responses only.
    if (queryValue(request.query, 'stream') === 'true') {
      throw new GatewayError('invalid_request', {
        message: 'Streaming a stored response is only supported for background responses, which Tollgate does not run.',
        param: 'stream',
        code: 'unsupported_value',
      });
    }
    return (await findOwn(store, request)).response;
  });

  app.delete<IdParams>('/v1/responses/:id', { onRequest }, async (request) => {
    const id = request.params.id;
    if (!(await store.deleteResponse(id, requireContext(request).account.id))) throw notFound(id);
    return { id, object: 'response', deleted: true };
  });

  app.get<IdParams>('/v1/responses/:id/input_items', { onRequest }, async (request) => {
    // The query is checked before the lookup, so a bad value is a 400 whether or not the id exists.
    const page = readPageQuery(request.query);
    const stored = await findOwn(store, request);
    return listItems(stored.inputItems, page);
  });
}

async function findOwn(store: OperationsStore, request: FastifyRequest<IdParams>): Promise<StoredResponse> {
  const id = request.params.id;
  const stored = await store.findResponse(id, requireContext(request).account.id);
  if (stored === undefined) throw notFound(id);
  return stored;
}

/** OpenAI's 404 for a response id it does not know (OpenAI sends `param: null`; the spec allows only a string or nothing). */
function notFound(id: string): GatewayError {
  return new GatewayError('not_found', { message: `Response with id '${clipEcho(id)}' not found.` });
}

export interface PageQuery {
  limit: number;
  order: Order;
  after: string | undefined;
}

/** `limit` (1–100, default 20), `order` (`asc`|`desc`, default `desc`), `after` (an item id). */
export function readPageQuery(query: unknown): PageQuery {
  const limitText = queryValue(query, 'limit');
  let limit = DEFAULT_LIMIT;
  if (limitText !== undefined) {
    limit = /^\d{1,4}$/.test(limitText) ? Number(limitText) : Number.NaN;
    if (!(limit >= 1 && limit <= MAX_LIMIT)) {
      throw invalidQuery('limit', `Invalid 'limit': expected an integer from 1 to ${MAX_LIMIT}, but got '${limitText}' instead.`);
    }
  }
  const orderText = queryValue(query, 'order');
  if (orderText !== undefined && !isOrder(orderText)) {
    throw invalidQuery('order', `Invalid value: '${orderText}'. Supported values are: 'asc' and 'desc'.`);
  }
  const after = queryValue(query, 'after');
  if (after === '') throw invalidQuery('after', "Invalid 'after': expected an item id, but got an empty string instead.");
  return { limit, order: orderText ?? 'desc', after };
}

/** One page of the stored items, in OpenAI's cursor-list shape; `after` must name one of them. */
export function listItems(items: ReadonlyArray<Record<string, unknown>>, page: PageQuery): Record<string, unknown> {
  const ordered = page.order === 'asc' ? items : [...items].reverse();
  let start = 0;
  if (page.after !== undefined) {
    const index = ordered.findIndex((item) => item.id === page.after);
    if (index < 0) throw invalidQuery('after', `Invalid 'after': no input item with id '${page.after}' in this response.`);
    start = index + 1;
  }
  const data = ordered.slice(start, start + page.limit);
  return {
    object: 'list',
    data,
    first_id: itemId(data[0]),
    last_id: itemId(data.at(-1)),
    has_more: start + page.limit < ordered.length,
  };
}

function itemId(item: Record<string, unknown> | undefined): string | null {
  return typeof item?.id === 'string' ? item.id : null;
}

function isOrder(value: string): value is Order {
  return (ORDERS as readonly string[]).includes(value);
}

/**
 * One query parameter's value. A parameter given twice is refused rather than guessed at; the
 * query arrives from the framework as `unknown`-shaped data.
 */
function queryValue(query: unknown, name: string): string | undefined {
  if (typeof query !== 'object' || query === null) return undefined;
  const value: unknown = (query as Record<string, unknown>)[name];
  if (value === undefined || typeof value === 'string') return value;
  throw invalidQuery(name, `Invalid '${name}': expected a single value.`);
}

function invalidQuery(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request', { message, param, code: 'invalid_value' });
}
