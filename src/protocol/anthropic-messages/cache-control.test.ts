/**
 * Anthropic's `cache_control` markers as canonical prompt-cache breakpoints (cache-control.ts,
 * decode-content.ts): on the system prompt, on each kind of content block, on tools; a block left
 * out passes its marker back; lifetimes kept; a malformed marker refused.
 */
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../canonical.js';
import { decodeMessagesRequest } from './decode-request.js';

const base = { model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] };
const EPHEMERAL = { type: 'ephemeral' };

describe('cache_control decoded as prompt-cache breakpoints', () => {
  it('says the client places its own breakpoints, even when it placed none', () => {
    const { request } = decodeMessagesRequest(base);
    expect(request.cacheMarked).toBe(true);
    expect(request.instructionsCache).toBeUndefined();
    expect(request.input).toEqual([{ type: 'message', role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
  });

  it('keeps a marked system block as a breakpoint on the joined instructions, with its lifetime', () => {
    const marked = decodeMessagesRequest({ ...base, system: [{ type: 'text', text: 'A', cache_control: { type: 'ephemeral', ttl: '1h' } }, { type: 'text', text: 'B' }] }).request;
    expect(marked.instructions).toBe('A\nB');
    expect(marked.instructionsCache).toEqual({ ttl: '1h' });
    const last = decodeMessagesRequest({ ...base, system: [{ type: 'text', text: 'A', cache_control: { type: 'ephemeral', ttl: '1h' } }, { type: 'text', text: 'B', cache_control: EPHEMERAL }] }).request;
    expect(last.instructionsCache).toEqual({});
    expect(decodeMessagesRequest({ ...base, system: 'Plain' }).request).not.toHaveProperty('instructionsCache');
  });

  it('keeps markers on text, image, tool_use and tool_result blocks', () => {
    const { request } = decodeMessagesRequest({
      ...base,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Look', cache_control: EPHEMERAL }, { type: 'image', source: { type: 'url', url: 'https://x/y.png' }, cache_control: { type: 'ephemeral', ttl: '5m' } }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'ls', input: {}, cache_control: EPHEMERAL }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'a.txt', cache_control: { type: 'ephemeral', ttl: '1h' } }] },
      ],
    });
    expect(request.input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'text', text: 'Look', cache: {} }, { type: 'image', url: 'https://x/y.png', cache: { ttl: '5m' } }] },
      { type: 'function_call', callId: 't1', name: 'ls', arguments: '{}', cache: {} },
      { type: 'function_call_output', callId: 't1', output: 'a.txt', cache: { ttl: '1h' } },
    ]);
  });

  it('moves the marker of a block left out (thinking, a Files API image) to the block before it in the message', () => {
    const { request } = decodeMessagesRequest({
      ...base,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Q' }, { type: 'image', source: { type: 'file', file_id: 'f1' }, cache_control: EPHEMERAL }] },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'hm', signature: 's', cache_control: EPHEMERAL }, { type: 'text', text: 'A' }] },
      ],
    });
    expect(request.input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'text', text: 'Q', cache: {} }] },
      // Nothing before the thinking block in its message: its marker has nowhere to go.
      { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'A' }] },
    ]);
  });

  it('keeps markers on client tools; a marked server tool passes its marker to the tool before it', () => {
    const schema = { type: 'object', properties: {} };
    const { request } = decodeMessagesRequest({
      ...base,
      tools: [
        { name: 'ls', input_schema: schema },
        { name: 'cat', input_schema: schema, cache_control: { type: 'ephemeral', ttl: '1h' } },
        { name: 'grep', input_schema: schema },
        { type: 'web_search_20250305', name: 'web_search', cache_control: EPHEMERAL },
      ],
    });
    expect(request.tools.map((tool) => [tool.name, tool.cache])).toEqual([
      ['ls', undefined],
      ['cat', { ttl: '1h' }],
      ['grep', {}],
    ]);
  });

  it('reads an unknown type as no breakpoint and an unknown ttl as the default, and refuses a marker that is not an object', () => {
    const unknown = decodeMessagesRequest({ ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 'a', cache_control: { type: 'persistent' } }, { type: 'text', text: 'b', cache_control: { type: 'ephemeral', ttl: '7d' } }] }] });
    expect(unknown.request.input).toEqual([{ type: 'message', role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b', cache: {} }] }]);
    const refused = (): unknown => decodeMessagesRequest({ ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 'a', cache_control: 'ephemeral' }] }] });
    expect(refused).toThrow(InvalidRequestError);
    try {
      refused();
    } catch (error) {
      expect((error as InvalidRequestError).param).toBe('messages[0].content[0].cache_control');
    }
    expect(() => decodeMessagesRequest({ ...base, system: [{ type: 'text', text: 'S', cache_control: { type: 'ephemeral', ttl: 5 } }] })).toThrow(InvalidRequestError);
  });
});
