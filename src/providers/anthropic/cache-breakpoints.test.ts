/**
 * Prompt-cache breakpoints in the Messages body (cache-breakpoints.ts through toMessagesBody): the
 * client's own markers as `cache_control` (the last four of more), none added to a client that
 * placed its own or chose none; the gateway's two for a client that cannot say (the end of the
 * tools and system, the conversation's last block).
 */
import { describe, expect, it } from 'vitest';
import type { CanonicalRequest } from '../../protocol/canonical.js';
import { MAX_CACHE_BREAKPOINTS } from './cache-breakpoints.js';
import { toMessagesBody, type MessagesRequestBody } from './messages-request.js';

const CALL = { upstreamModel: 'claude-sonnet-4-5', maxOutputTokens: 8_192 };
const EPHEMERAL = { type: 'ephemeral' };
const schema = { type: 'object', properties: {} };

function request(overrides: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return {
    model: 'm',
    input: [
      { type: 'message', role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
      { type: 'function_call', callId: 'toolu_1', name: 'weather', arguments: '{}' },
      { type: 'function_call_output', callId: 'toolu_1', output: '-3C' },
    ],
    tools: [
      { name: 'weather', parameters: schema },
      { name: 'clock', parameters: schema },
    ],
    toolChoice: 'auto',
    stream: true,
    ...overrides,
  };
}

/** Where a body carries `cache_control`, in prompt order (tools, system, messages). */
function marks(body: MessagesRequestBody): Array<[string, unknown]> {
  const found: Array<[string, unknown]> = [];
  (body.tools ?? []).forEach((tool, index) => {
    if ('cache_control' in tool && tool.cache_control !== undefined) found.push([`tools[${index}]`, tool.cache_control]);
  });
  (body.system ?? []).forEach((block, index) => {
    if (block.cache_control !== undefined) found.push([`system[${index}]`, block.cache_control]);
  });
  body.messages.forEach((message, index) =>
    message.content.forEach((block, at) => {
      if (block.cache_control !== undefined) found.push([`messages[${index}].content[${at}]`, block.cache_control]);
    }),
  );
  return found;
}

describe('prompt-cache breakpoints on Anthropic', () => {
  it('places two for a client that cannot say: after the system prompt and on the last block', () => {
    expect(marks(toMessagesBody(request({ instructions: 'Be brief.' }), CALL))).toEqual([
      ['system[0]', EPHEMERAL],
      ['messages[2].content[0]', EPHEMERAL],
    ]);
  });

  it('without a system prompt, the first goes on the last tool; without tools either, only the last block is marked', () => {
    expect(marks(toMessagesBody(request(), CALL))).toEqual([
      ['tools[1]', EPHEMERAL],
      ['messages[2].content[0]', EPHEMERAL],
    ]);
    expect(marks(toMessagesBody(request({ tools: [] }), CALL))).toEqual([['messages[2].content[0]', EPHEMERAL]]);
  });

  it("sends a client's own markers where it placed them, lifetimes kept, and adds none", () => {
    const body = toMessagesBody(
      request({
        cacheMarked: true,
        instructions: 'Be brief.',
        instructionsCache: { ttl: '1h' },
        tools: [{ name: 'weather', parameters: schema, cache: {} }, { name: 'clock', parameters: schema }],
        input: [
          { type: 'message', role: 'user', content: [{ type: 'text', text: 'Weather?', cache: { ttl: '5m' } }] },
          { type: 'function_call', callId: 'toolu_1', name: 'weather', arguments: '{}', cache: {} },
          { type: 'function_call_output', callId: 'toolu_1', output: '-3C' },
        ],
      }),
      CALL,
    );
    expect(marks(body)).toEqual([
      ['tools[0]', EPHEMERAL],
      ['system[0]', { type: 'ephemeral', ttl: '1h' }],
      ['messages[0].content[0]', { type: 'ephemeral', ttl: '5m' }],
      ['messages[1].content[0]', EPHEMERAL],
    ]);
  });

  it('adds none for a client that places its own and placed none', () => {
    expect(marks(toMessagesBody(request({ cacheMarked: true, instructions: 'Be brief.' }), CALL))).toEqual([]);
  });

  it(`keeps the last ${MAX_CACHE_BREAKPOINTS} of more markers, in prompt order`, () => {
    const body = toMessagesBody(
      request({
        cacheMarked: true,
        instructions: 'Be brief.',
        instructionsCache: {},
        tools: [{ name: 'weather', parameters: schema, cache: {} }, { name: 'clock', parameters: schema, cache: {} }],
        input: [
          { type: 'message', role: 'user', content: [{ type: 'text', text: 'One', cache: {} }, { type: 'text', text: 'Two', cache: {} }] },
          { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Three', cache: {} }] },
        ],
      }),
      CALL,
    );
    expect(marks(body).map(([where]) => where)).toEqual(['system[0]', 'messages[0].content[0]', 'messages[0].content[1]', 'messages[1].content[0]']);
  });

  it('moves the marker of a part Anthropic cannot take (an empty text, an assistant image) to the block before it', () => {
    const body = toMessagesBody(
      request({
        cacheMarked: true,
        tools: [],
        input: [
          { type: 'message', role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'text', text: '', cache: {} }] },
          { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Seen' }, { type: 'image', url: 'https://x/y.png', cache: { ttl: '1h' } }] },
        ],
      }),
      CALL,
    );
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Look', cache_control: EPHEMERAL }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Seen', cache_control: { type: 'ephemeral', ttl: '1h' } }] },
    ]);
  });
});
