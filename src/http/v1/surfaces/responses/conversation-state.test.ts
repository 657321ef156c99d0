/**
 * Expanding `previous_response_id` against a real (in-memory SQLite) store, and reading the final
 * response out of passed-through SSE frames.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../../../errors/gateway-error.js';
import { openStore } from '../../../../store/open-store.js';
import type { AccountStore, OperationsStore } from '../../../../store/store.js';
import { createResponseKeeper, expandConversation, passthroughResponse } from './conversation-state.js';
import { DEFAULT_ECHO } from '../../../../protocol/responses/response-settings.js';
import type { DecodedResponses, ResponsesExtras } from './responses-extras.js';

function decoded(overrides: Partial<ResponsesExtras> & { text?: string; instructions?: string } = {}): DecodedResponses {
  const { text = 'new question', instructions, ...rest } = overrides;
  return {
    request: {
      model: 'm',
      ...(instructions === undefined ? {} : { instructions }),
      input: [{ type: 'message', role: 'user', content: [{ type: 'text', text }] }],
      tools: [],
      toolChoice: 'auto',
      stream: false,
    },
    clientWantsUsage: true,
    extras: { store: true, previousResponseId: null, metadata: {}, echo: DEFAULT_ECHO, compact: false, foreignCompaction: null, sealedSummaries: new Map(), ...rest },
  };
}

const silentLog = { warn: () => undefined, error: () => undefined } as unknown as Parameters<typeof createResponseKeeper>[0]['log'];

describe('expandConversation', () => {
  let store: AccountStore & OperationsStore;
  beforeAll(async () => {
    store = await openStore('sqlite::memory:');
    await store.createAccount({ id: 'acct_a', name: 'a', openingBalanceNanos: 0n });
    await store.createAccount({ id: 'acct_b', name: 'b', openingBalanceNanos: 0n });
    await store.saveResponse({
      id: 'resp_prev',
      accountId: 'acct_a',
      response: {
        id: 'resp_prev',
        object: 'response',
        instructions: 'old instructions',
        output: [{ id: 'msg_out', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'old answer', annotations: [] }] }],
      },
      inputItems: [{ id: 'msg_in', type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'old question' }] }],
      createdAt: new Date(0),
    });
  });
  afterAll(async () => store?.close());

  it('leaves a request without previous_response_id as it is, and encodes its items to store', async () => {
    const body = decoded();
    const expanded = await expandConversation(store, 'acct_a', body);
    expect(expanded.decoded).toBe(body);
    expect(expanded.inputItems).toEqual([{ id: expect.stringMatching(/^msg_/), type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'new question' }] }]);
    expect((await expandConversation(store, 'acct_a', decoded({ store: false }))).inputItems).toEqual([]);
  });

  it('puts stored input, then stored output, then the new input; keeps only the new instructions', async () => {
    const expanded = await expandConversation(store, 'acct_a', decoded({ previousResponseId: 'resp_prev', instructions: 'new instructions' }));
    expect(expanded.decoded.request.instructions).toBe('new instructions');
    expect(expanded.decoded.request.input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'text', text: 'old question' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'old answer' }] },
      { type: 'message', role: 'user', content: [{ type: 'text', text: 'new question' }] },
    ]);
    expect(expanded.inputItems.map((item) => item.id)).toEqual(['msg_in', 'msg_out', expect.stringMatching(/^msg_/)]);
    const withoutInstructions = await expandConversation(store, 'acct_a', decoded({ previousResponseId: 'resp_prev' }));
    expect(withoutInstructions.decoded.request.instructions).toBeUndefined();
  });

  it("answers OpenAI's 400 for an unknown id and for another account's", async () => {
    for (const [accountId, id] of [['acct_a', 'resp_unknown'], ['acct_b', 'resp_prev']] as const) {
      const failure = await expandConversation(store, accountId, decoded({ previousResponseId: id })).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(GatewayError);
      expect((failure as GatewayError).toBody()).toEqual({
        error: { message: `Previous response with id '${id}' not found.`, type: 'invalid_request_error', param: 'previous_response_id', code: 'previous_response_not_found' },
      });
    }
  });

  it('treats a stored item that no longer decodes as a server fault, not a client 400', async () => {
    await store.saveResponse({ id: 'resp_bad', accountId: 'acct_a', response: { output: [] }, inputItems: [{ type: 'message', role: 'nobody', content: 'x' }], createdAt: new Date(0) });
    const failure = await expandConversation(store, 'acct_a', decoded({ previousResponseId: 'resp_bad' })).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(GatewayError);
    expect(String(failure)).toMatch(/resp_bad has an unreadable item/);
  });

  it('the keeper saves once, and survives a store that refuses', async () => {
    const keep = createResponseKeeper({ store, accountId: 'acct_b', inputItems: [{ id: 'msg_k' }], now: () => 5_000, log: silentLog });
    await keep({ id: 'resp_kept', status: 'completed' });
    await keep({ id: 'resp_kept', status: 'failed' });
    expect(await store.findResponse('resp_kept', 'acct_b')).toEqual({
      id: 'resp_kept',
      accountId: 'acct_b',
      response: { id: 'resp_kept', status: 'completed' },
      inputItems: [{ id: 'msg_k' }],
      createdAt: new Date(5_000),
    });
    // Another account's id: the store refuses, the keeper logs and does not throw.
    const errors: unknown[] = [];
    const log = { warn: () => undefined, error: (details: unknown) => errors.push(details) } as unknown as typeof silentLog;
    await expect(createResponseKeeper({ store, accountId: 'acct_a', inputItems: [], now: () => 0, log })({ id: 'resp_kept' })).resolves.toBeUndefined();
    expect(errors).toHaveLength(1);
    await createResponseKeeper({ store, accountId: 'acct_a', inputItems: [], now: () => 0, log: silentLog })({ status: 'no id' });
  });
});

describe('passthroughResponse', () => {
  it('keeps a passed-through JSON body only when it is a response object', () => {
    expect(passthroughResponse({ id: 'resp_3', object: 'response' })).toEqual({ id: 'resp_3', object: 'response' });
    expect(passthroughResponse({ id: 'chatcmpl-1', object: 'chat.completion' })).toBeUndefined();
    expect(passthroughResponse({ object: 'response' })).toBeUndefined();
  });
});
