import { describe, expect, it } from 'vitest';
import { decodeStoredResponse } from './response-queries.js';
import { StoreDataError } from './row-decoding.js';

const row = {
  id: 'resp_1',
  account_id: 'acct_1',
  response: '{"id":"resp_1","object":"response"}',
  input_items: '[{"id":"msg_1","type":"message"}]',
  created_at: 1_767_225_600_000n,
};

describe('decodeStoredResponse', () => {
  it('reads the JSON columns and the time', () => {
    expect(decodeStoredResponse(row)).toEqual({
      id: 'resp_1',
      accountId: 'acct_1',
      response: { id: 'resp_1', object: 'response' },
      inputItems: [{ id: 'msg_1', type: 'message' }],
      createdAt: new Date(1_767_225_600_000),
    });
  });

  it('refuses rows whose JSON is broken or of the wrong shape', () => {
    expect(() => decodeStoredResponse({ ...row, response: '{"id":' })).toThrow(/responses.response: not JSON/);
    expect(() => decodeStoredResponse({ ...row, response: '[1]' })).toThrow(StoreDataError);
    expect(() => decodeStoredResponse({ ...row, response: 'null' })).toThrow(StoreDataError);
    expect(() => decodeStoredResponse({ ...row, input_items: '{}' })).toThrow(/input_items: expected a JSON array of objects/);
    expect(() => decodeStoredResponse({ ...row, input_items: '[1, 2]' })).toThrow(StoreDataError);
    expect(() => decodeStoredResponse({ ...row, input_items: 7 })).toThrow(/expected text/);
  });
});
