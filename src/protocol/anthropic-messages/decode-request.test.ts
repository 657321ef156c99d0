import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../canonical.js';
import { decodeMessagesRequest } from './decode-request.js';

const base = { model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] };

describe('decodeMessagesRequest', () => {
  it('reads system, messages with text, image and tool blocks, in order', () => {
    const { request } = decodeMessagesRequest({
      ...base,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'Use tools.' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAA' } }, { type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'hm', signature: 's' }, { type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 't1', name: 'ls', input: { dir: '.' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'a.txt' }, { type: 'image', source: { type: 'url', url: 'u' } }] }, { type: 'text', text: 'Next?' }] },
        { role: 'system', content: 'A mid-conversation system turn.' },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't2', content: 'boom', is_error: true }] },
      ],
    });
    expect(request.instructions).toBe('Be brief.\nUse tools.');
    expect(request.input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image', url: 'data:image/png;base64,AAA' }, { type: 'image', url: 'https://x/y.png' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Checking.' }] },
      { type: 'function_call', callId: 't1', name: 'ls', arguments: '{"dir":"."}' },
      { type: 'function_call_output', callId: 't1', output: 'a.txt' },
      { type: 'message', role: 'user', content: [{ type: 'text', text: 'Next?' }] },
      { type: 'message', role: 'system', content: [{ type: 'text', text: 'A mid-conversation system turn.' }] },
      { type: 'function_call_output', callId: 't2', output: 'Error: boom' },
    ]);
    expect(request.maxOutputTokens).toBe(100);
    expect(request.stream).toBe(false);
  });

  it('reads client tools, skips server tools, and maps tool_choice', () => {
    const tools = [
      { name: 'ls', description: 'List', input_schema: { type: 'object', properties: {} } },
      { name: 'later', input_schema: { type: 'object' }, defer_loading: true },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
    ];
    const auto = decodeMessagesRequest({ ...base, tools }).request;
    expect(auto.tools).toEqual([
      { name: 'ls', description: 'List', parameters: { type: 'object', properties: {} } },
      { name: 'later', parameters: { type: 'object' } },
    ]);
    expect(auto.toolChoice).toBe('auto');
    expect(decodeMessagesRequest({ ...base, tools, tool_choice: { type: 'any', disable_parallel_tool_use: true } }).request).toMatchObject({ toolChoice: 'required', parallelToolCalls: false });
    expect(decodeMessagesRequest({ ...base, tools, tool_choice: { type: 'tool', name: 'ls' } }).request.toolChoice).toEqual({ name: 'ls' });
    expect(decodeMessagesRequest({ ...base, tools, tool_choice: { type: 'none' } }).request.toolChoice).toBe('none');
  });

  it('reads thinking as a reasoning effort', () => {
    const effort = (body: Record<string, unknown>) => decodeMessagesRequest({ ...base, ...body }).request.reasoningEffort;
    expect(effort({})).toBeUndefined();
    expect(effort({ thinking: { type: 'adaptive' } })).toBe('high');
    expect(effort({ thinking: { type: 'adaptive', display: 'omitted' }, output_config: { effort: 'medium' } })).toBe('medium');
    expect(effort({ output_config: { effort: 'max' } })).toBe('max');
    expect(effort({ thinking: { type: 'enabled', budget_tokens: 1_024 } })).toBe('low');
    expect(effort({ thinking: { type: 'enabled', budget_tokens: 8_192 } })).toBe('medium');
    expect(effort({ thinking: { type: 'enabled', budget_tokens: 20_000 } })).toBe('high');
    expect(effort({ thinking: { type: 'enabled', budget_tokens: 30_000 } })).toBe('xhigh');
    expect(effort({ thinking: { type: 'enabled', budget_tokens: 60_000 } })).toBe('max');
    expect(effort({ thinking: { type: 'disabled' }, output_config: { effort: 'high' } })).toBeUndefined();
    expect(decodeMessagesRequest({ ...base, thinking: { type: 'adaptive', display: 'omitted' } }).omitThinking).toBe(true);
    expect(decodeMessagesRequest({ ...base, thinking: { type: 'adaptive', display: 'summarized' } }).omitThinking).toBe(false);
    // A display newer than this code is taken (it may be passed through), and shows the text.
    expect(decodeMessagesRequest({ ...base, thinking: { type: 'adaptive', display: 'highlights' } }).omitThinking).toBe(false);
  });

  it('leaves out blocks only Anthropic can read, rather than refusing a body it may pass through', () => {
    const { request } = decodeMessagesRequest({
      ...base,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'file', file_id: 'file_1' } },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' } },
            { type: 'text', text: 'Read these.' },
          ],
        },
        { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'x' }, { type: 'server_tool_use', id: 's', name: 'web_search', input: {} }, { type: 'text', text: 'Done.' }] },
      ],
    });
    expect(request.input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'text', text: 'Read these.' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
    ]);
  });

  it('keeps sampling settings and ignores fields it has no place for', () => {
    const { request } = decodeMessagesRequest({ ...base, stream: true, temperature: 0.5, top_p: 0.9, top_k: 5, stop_sequences: ['x'], metadata: { user_id: 'u' }, context_management: {}, future_field: 1 });
    expect(request).toMatchObject({ stream: true, temperature: 0.5, topP: 0.9 });
  });

  it('takes a count_tokens body without max_tokens', () => {
    expect(decodeMessagesRequest({ model: 'm', messages: [] }, { countOnly: true }).request.maxOutputTokens).toBeUndefined();
  });

  it.each([
    ['no model', { ...base, model: undefined }, 'model'],
    ['no max_tokens', { ...base, max_tokens: undefined }, 'max_tokens'],
    ['max_tokens 0', { ...base, max_tokens: 0 }, 'max_tokens'],
    ['no messages', { ...base, messages: undefined }, 'messages'],
    ['messages not an array', { ...base, messages: 'hi' }, 'messages'],
    ['a message not an object', { ...base, messages: ['hi'] }, 'messages[0]'],
    ['an unknown role', { ...base, messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].role'],
    ['content missing', { ...base, messages: [{ role: 'user' }] }, 'messages[0].content'],
    ['content a number', { ...base, messages: [{ role: 'user', content: 3 }] }, 'messages[0].content'],
    ['a text block without text', { ...base, messages: [{ role: 'user', content: [{ type: 'text' }] }] }, 'messages[0].content[0].text'],
    ['a block without a type', { ...base, messages: [{ role: 'user', content: [{ text: 'x' }] }] }, 'messages[0].content[0].type'],
    ['an image source without a type', { ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { data: 'f' } }] }] }, 'messages[0].content[0].source.type'],
    ['an image without a source', { ...base, messages: [{ role: 'user', content: [{ type: 'image' }] }] }, 'messages[0].content[0].source'],
    ['a tool_use without an id', { ...base, messages: [{ role: 'assistant', content: [{ type: 'tool_use', name: 'x', input: {} }] }] }, 'messages[0].content[0].id'],
    ['a tool_result without its id', { ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] }, 'messages[0].content[0].tool_use_id'],
    ['a tool_result of the wrong content', { ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 5 }] }] }, 'messages[0].content[0].content'],
    ['a system block that is not text', { ...base, system: [{ type: 'image' }] }, 'system[0].type'],
    ['a tool without a name', { ...base, tools: [{ input_schema: {} }] }, 'tools[0].name'],
    ['a tool without a schema', { ...base, tools: [{ name: 'x' }] }, 'tools[0].input_schema'],
    ['an unknown tool_choice', { ...base, tool_choice: { type: 'some' } }, 'tool_choice.type'],
    ['tool_choice tool without a name', { ...base, tool_choice: { type: 'tool' } }, 'tool_choice.name'],
    ['an unknown thinking type', { ...base, thinking: { type: 'deep' } }, 'thinking.type'],
    ['enabled thinking without a budget', { ...base, thinking: { type: 'enabled' } }, 'thinking.budget_tokens'],
    ['a budget below 1024', { ...base, thinking: { type: 'enabled', budget_tokens: 100 } }, 'thinking.budget_tokens'],
    ['an unknown effort', { ...base, output_config: { effort: 'extreme' } }, 'output_config.effort'],
    ['a display that is not a string', { ...base, thinking: { type: 'adaptive', display: 1 } }, 'thinking.display'],
    ['temperature above 1', { ...base, temperature: 1.5 }, 'temperature'],
    ['stream not a boolean', { ...base, stream: 'yes' }, 'stream'],
    ['a body that is an array', [], 'body'],
  ])('refuses %s, naming the field', (_what, body, param) => {
    let caught: unknown;
    try {
      decodeMessagesRequest(body);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidRequestError);
    expect((caught as InvalidRequestError).param).toBe(param);
  });
});
