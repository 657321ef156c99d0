import { describe, expect, it } from 'vitest';
import { decodeChatRequest } from './chat-completions/decode-request.js';
import { decodeResponsesRequest } from './responses/decode-request.js';
import { InvalidRequestError } from './canonical.js';

const chat = (extra: Record<string, unknown>) => () => decodeChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], ...extra });
const responses = (extra: Record<string, unknown>) => () => decodeResponsesRequest({ model: 'm', input: 'x', ...extra });

describe('what a pass-through could buy at the flat price is refused', () => {
  it.each(['auto', 'default'])('service_tier %s is accepted', (tier) => {
    expect(chat({ service_tier: tier })).not.toThrow();
    expect(responses({ service_tier: tier })).not.toThrow();
  });

  it.each(['priority', 'flex', 'scale'])('service_tier %s is a 400 naming the field', (tier) => {
    for (const decode of [chat({ service_tier: tier }), responses({ service_tier: tier })]) {
      expect(decode).toThrow(InvalidRequestError);
      expect(decode).toThrow(/not available through this gateway/);
      try {
        decode();
      } catch (error) {
        expect(error).toMatchObject({ param: 'service_tier', code: 'unsupported_value' });
      }
    }
  });

  it('web_search_options on chat is a 400 (searches are billed apart from tokens)', () => {
    expect(chat({ web_search_options: {} })).toThrow(/web_search_options/);
    expect(chat({ web_search_options: null })).not.toThrow();
  });
});
