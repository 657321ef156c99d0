import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../../errors/gateway-error.js';
import { listItems, readPageQuery } from './stored-response-routes.js';

const items = ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id, type: 'message' }));

describe('readPageQuery', () => {
  it("defaults to OpenAI's limit 20, newest first, from the start", () => {
    expect(readPageQuery({})).toEqual({ limit: 20, order: 'desc', after: undefined });
    expect(readPageQuery(undefined)).toEqual({ limit: 20, order: 'desc', after: undefined });
    expect(readPageQuery({ limit: '100', order: 'asc', after: 'b', 'include[]': 'x' })).toEqual({ limit: 100, order: 'asc', after: 'b' });
    expect(readPageQuery({ limit: '1' }).limit).toBe(1);
  });

  it.each([
    [{ limit: '0' }, 'limit'],
    [{ limit: '101' }, 'limit'],
    [{ limit: '-1' }, 'limit'],
    [{ limit: '' }, 'limit'],
    [{ limit: '2e1' }, 'limit'],
    [{ limit: '00000000007' }, 'limit'],
    [{ order: 'DESC' }, 'order'],
    [{ order: ['asc', 'desc'] }, 'order'],
    [{ after: '' }, 'after'],
  ])('refuses %j naming %s', (query, param) => {
    const failure = (() => {
      try {
        readPageQuery(query);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(failure).toBeInstanceOf(GatewayError);
    expect((failure as GatewayError).toBody().error).toMatchObject({ type: 'invalid_request_error', param, code: 'invalid_value' });
  });
});

describe('listItems', () => {
  it('pages in either order after a cursor', () => {
    expect(listItems(items, { limit: 2, order: 'desc', after: undefined })).toEqual({
      object: 'list',
      data: [items[4], items[3]],
      first_id: 'e',
      last_id: 'd',
      has_more: true,
    });
    expect(listItems(items, { limit: 2, order: 'asc', after: 'c' })).toEqual({ object: 'list', data: [items[3], items[4]], first_id: 'd', last_id: 'e', has_more: false });
    expect(listItems(items, { limit: 20, order: 'desc', after: 'a' })).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
    expect(listItems([], { limit: 20, order: 'desc', after: undefined })).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });

  it('refuses a cursor that is not one of the items', () => {
    expect(() => listItems(items, { limit: 2, order: 'asc', after: 'z' })).toThrow(/no input item with id 'z'/);
  });
});
