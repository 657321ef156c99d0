import { describe, it, expect } from 'vitest';
import { InvalidRequestError } from '../canonical.js';
import { decodeChatRequest } from './decode-request.js';

/** [message, param, code] of the 400 thrown for a body with these messages. */
function errorFor(messages: unknown): [string, string | null, string | null] {
  try {
    decodeChatRequest({ model: 'model-5.6', messages });
  } catch (error) {
    if (error instanceof InvalidRequestError) return [error.message, error.param, error.code];
    throw error;
  }
  throw new Error('expected an InvalidRequestError');
}

function itemsFor(messages: unknown[]) {
  return decodeChatRequest({ model: 'model-5.6', messages }).request.input;
}

const USER = { role: 'user', content: 'hi' };
const CALL = (id: string, city: string) => ({ id, type: 'function', function: { name: 'weather', arguments: `{"city":"${city}"}` } });

describe('decodeChatRequest messages: mapping', () => {
  it('maps system, developer and user strings to messages with the same role', () => {
    expect(
      itemsFor([
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Use metric.' }, { type: 'text', text: ' Always.' }] },
        { role: 'user', content: 'Hi', name: 'ann' },
      ]),
    ).toEqual([
      { type: 'message', role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
      { type: 'message', role: 'developer', content: [{ type: 'text', text: 'Use metric.' }, { type: 'text', text: ' Always.' }] },
      { type: 'message', role: 'user', content: [{ type: 'text', text: 'Hi' }] },
    ]);
  });

  it('maps user text and image parts, keeping detail only when given', () => {
    expect(
      itemsFor([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare.' },
            { type: 'image_url', image_url: { url: 'https://img.example/r1.png', detail: 'low' } },
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AAAA' } },
          ],
        },
      ]),
    ).toEqual([
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'text', text: 'Compare.' },
          { type: 'image', url: 'https://img.example/r1.png', detail: 'low' },
          { type: 'image', url: 'data:image/jpeg;base64,AAAA' },
        ],
      },
    ]);
  });

  it('maps a tool round trip: the assistant text, then one function_call per call, then the outputs', () => {
    expect(
      itemsFor([
        { role: 'user', content: 'Weather in Oslo and Rome?' },
        { role: 'assistant', content: 'Checking.', tool_calls: [CALL('call_a1', 'Oslo'), CALL('call_b2', 'Rome')] },
        { role: 'tool', tool_call_id: 'call_b2', content: '17C, sun' },
        { role: 'tool', tool_call_id: 'call_a1', content: [{ type: 'text', text: '-3C,' }, { type: 'text', text: ' snow' }] },
        { role: 'assistant', content: 'Snowy and sunny.' },
      ]),
    ).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'text', text: 'Weather in Oslo and Rome?' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Checking.' }] },
      { type: 'function_call', callId: 'call_a1', name: 'weather', arguments: '{"city":"Oslo"}' },
      { type: 'function_call', callId: 'call_b2', name: 'weather', arguments: '{"city":"Rome"}' },
      { type: 'function_call_output', callId: 'call_b2', output: '17C, sun' },
      { type: 'function_call_output', callId: 'call_a1', output: '-3C, snow' },
      { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Snowy and sunny.' }] },
    ]);
  });

  it('leaves out the assistant message when its content is null or empty and it only calls tools', () => {
    for (const content of [null, '', undefined]) {
      const items = itemsFor([
        { role: 'user', content: 'Go' },
        { role: 'assistant', content, tool_calls: [CALL('call_1', 'Oslo')] },
        { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
      ]);
      expect(items.map((item) => item.type)).toEqual(['message', 'function_call', 'function_call_output']);
    }
  });

  it('keeps the model\'s arguments text as is, even when it is not valid JSON', () => {
    const items = itemsFor([
      { role: 'user', content: 'Go' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"broken' } }] },
      { role: 'tool', tool_call_id: 'c', content: 'ok' },
    ]);
    expect(items[1]).toEqual({ type: 'function_call', callId: 'c', name: 'f', arguments: '{"broken' });
  });

  it('maps assistant text and refusal parts, and the refusal field', () => {
    expect(
      itemsFor([
        { role: 'user', content: 'x' },
        { role: 'assistant', content: [{ type: 'text', text: 'A' }, { type: 'refusal', refusal: 'No.' }] },
        { role: 'user', content: 'y' },
        { role: 'assistant', content: null, refusal: 'I cannot help with that.' },
      ]).filter((item) => item.type === 'message' && item.role === 'assistant'),
    ).toEqual([
      { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'A' }, { type: 'refusal', refusal: 'No.' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help with that.' }] },
    ]);
  });

  it('accepts an assistant message with empty string content and no tool calls, carrying nothing', () => {
    expect(itemsFor([{ role: 'user', content: 'x' }, { role: 'assistant', content: '' }, { role: 'user', content: 'y' }])).toHaveLength(2);
  });
});

describe('decodeChatRequest messages: rejections', () => {
  it('rejects an empty messages array', () => {
    expect(errorFor([])).toEqual(["'messages' must contain at least one message.", 'messages', 'empty_array']);
  });

  it('rejects a message that is not an object', () => {
    expect(errorFor(['hi'])).toEqual(["Invalid type for 'messages[0]': expected an object, but got a string instead.", 'messages[0]', 'invalid_type']);
  });

  it('rejects a missing, non-string or unknown role', () => {
    expect(errorFor([{ content: 'hi' }])).toEqual(["Missing required parameter: 'messages[0].role'.", 'messages[0].role', 'missing_required_parameter']);
    expect(errorFor([{ role: 3, content: 'hi' }])).toEqual([
      "Invalid type for 'messages[0].role': expected a string, but got an integer instead.",
      'messages[0].role',
      'invalid_type',
    ]);
    expect(errorFor([USER, { role: 'robot', content: 'hi' }])).toEqual([
      "Invalid value: 'robot'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.",
      'messages[1].role',
      'invalid_value',
    ]);
  });

  it('rejects content of the wrong type, missing content and empty part arrays', () => {
    expect(errorFor([{ role: 'user', content: 5 }])).toEqual([
      "Invalid type for 'messages[0].content': expected one of a string or array of objects, but got an integer instead.",
      'messages[0].content',
      'invalid_type',
    ]);
    expect(errorFor([{ role: 'system', content: { text: 'x' } }])[0]).toBe(
      "Invalid type for 'messages[0].content': expected one of a string or array of objects, but got an object instead.",
    );
    expect(errorFor([{ role: 'user' }])).toEqual(["Missing required parameter: 'messages[0].content'.", 'messages[0].content', 'missing_required_parameter']);
    expect(errorFor([{ role: 'developer', content: null }])[1]).toBe('messages[0].content');
    expect(errorFor([{ role: 'user', content: [] }])).toEqual([
      "Invalid 'messages[0].content': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      'messages[0].content',
      'empty_array',
    ]);
    expect(errorFor([{ role: 'user', content: ['text'] }])).toEqual([
      "Invalid type for 'messages[0].content[0]': expected an object, but got a string instead.",
      'messages[0].content[0]',
      'invalid_type',
    ]);
  });

  it('rejects unknown part types, and non-text parts where only text is allowed', () => {
    expect(errorFor([{ role: 'user', content: [{ type: 'video', video: {} }] }])).toEqual([
      "Invalid value: 'video'. Supported values are: 'text', 'image_url', 'input_audio', and 'file'.",
      'messages[0].content[0].type',
      'invalid_value',
    ]);
    expect(errorFor([{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }])).toEqual([
      "Invalid value: 'image_url'. Supported values are: 'text'.",
      'messages[0].content[0].type',
      'invalid_value',
    ]);
    expect(errorFor([{ role: 'user', content: [{ text: 'x' }] }])).toEqual([
      "Missing required parameter: 'messages[0].content[0].type'.",
      'messages[0].content[0].type',
      'missing_required_parameter',
    ]);
    expect(errorFor([{ role: 'user', content: [{ type: 'text' }] }])).toEqual([
      "Missing required parameter: 'messages[0].content[0].text'.",
      'messages[0].content[0].text',
      'missing_required_parameter',
    ]);
  });

  it('rejects audio and file parts as unsupported content', () => {
    expect(errorFor([{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'input_audio', input_audio: { data: 'AA', format: 'wav' } }] }])).toEqual([
      "Content parts of type 'input_audio' are not supported on /v1/chat/completions.",
      'messages[0].content[1].type',
      'unsupported_content',
    ]);
    expect(errorFor([{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }])).toEqual([
      "Content parts of type 'file' are not supported on /v1/chat/completions.",
      'messages[0].content[0].type',
      'unsupported_content',
    ]);
  });

  it('rejects malformed image parts', () => {
    expect(errorFor([{ role: 'user', content: [{ type: 'image_url' }] }])).toEqual([
      "Missing required parameter: 'messages[0].content[0].image_url'.",
      'messages[0].content[0].image_url',
      'missing_required_parameter',
    ]);
    expect(errorFor([{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }])[1]).toBe('messages[0].content[0].image_url.url');
    expect(errorFor([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }])).toEqual([
      "Invalid 'messages[0].content[0].image_url.url': expected an http(s) URL or a data: URL.",
      'messages[0].content[0].image_url.url',
      'invalid_value',
    ]);
    expect(errorFor([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'ultra' } }] }])).toEqual([
      "Invalid value: 'ultra'. Supported values are: 'auto', 'low', and 'high'.",
      'messages[0].content[0].image_url.detail',
      'invalid_value',
    ]);
  });

  it('rejects an assistant message with neither content nor tool calls', () => {
    expect(errorFor([USER, { role: 'assistant', content: null }])).toEqual([
      "Invalid value for 'messages[1].content': expected a string or array of objects when 'tool_calls' is absent, but got null instead.",
      'messages[1].content',
      'invalid_value',
    ]);
    expect(errorFor([USER, { role: 'assistant', tool_calls: [] }])[1]).toBe('messages[1].content');
  });

  it('rejects assistant content parts other than text and refusal, and assistant audio', () => {
    expect(errorFor([USER, { role: 'assistant', content: [{ type: 'image_url', image_url: { url: 'https://x' } }] }])).toEqual([
      "Invalid value: 'image_url'. Supported values are: 'text' and 'refusal'.",
      'messages[1].content[0].type',
      'invalid_value',
    ]);
    expect(errorFor([USER, { role: 'assistant', content: null, audio: { id: 'audio_1' } }])).toEqual([
      'Assistant audio is not supported on /v1/chat/completions.',
      'messages[1].audio',
      'unsupported_content',
    ]);
  });

  it('rejects malformed tool calls', () => {
    const assistantWith = (toolCalls: unknown) => [USER, { role: 'assistant', content: null, tool_calls: toolCalls }];
    expect(errorFor(assistantWith({}))).toEqual([
      "Invalid type for 'messages[1].tool_calls': expected an array, but got an object instead.",
      'messages[1].tool_calls',
      'invalid_type',
    ]);
    expect(errorFor(assistantWith([{ type: 'function', function: { name: 'f', arguments: '{}' } }]))).toEqual([
      "Missing required parameter: 'messages[1].tool_calls[0].id'.",
      'messages[1].tool_calls[0].id',
      'missing_required_parameter',
    ]);
    expect(errorFor(assistantWith([{ id: 'c', type: 'custom', custom: { name: 'f', input: 'x' } }]))).toEqual([
      'Custom tool calls are not supported on this gateway; use function tools.',
      'messages[1].tool_calls[0].type',
      'unsupported_tool',
    ]);
    expect(errorFor(assistantWith([{ id: 'c', type: 'tool', function: { name: 'f', arguments: '{}' } }]))).toEqual([
      "Invalid value: 'tool'. Supported values are: 'function' and 'custom'.",
      'messages[1].tool_calls[0].type',
      'invalid_value',
    ]);
    expect(errorFor(assistantWith([{ id: 'c', type: 'function', function: { name: 'f', arguments: { city: 'Oslo' } } }]))).toEqual([
      "Invalid type for 'messages[1].tool_calls[0].function.arguments': expected a string, but got an object instead.",
      'messages[1].tool_calls[0].function.arguments',
      'invalid_type',
    ]);
    expect(errorFor(assistantWith([{ id: 'c', type: 'function', function: { name: 'f' } }]))[2]).toBe('missing_required_parameter');
  });

  it("rejects a tool message that answers no earlier assistant tool call, with OpenAI's wording", () => {
    const message = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
    expect(errorFor([USER, { role: 'tool', tool_call_id: 'call_1', content: 'x' }])).toEqual([message, 'messages[1].role', 'invalid_value']);
    expect(
      errorFor([
        USER,
        { role: 'assistant', content: null, tool_calls: [CALL('call_1', 'Oslo')] },
        { role: 'tool', tool_call_id: 'call_2', content: 'x' },
      ]),
    ).toEqual([message, 'messages[2].role', 'invalid_value']);
  });

  it('rejects a tool message without tool_call_id or content', () => {
    const history = [USER, { role: 'assistant', content: null, tool_calls: [CALL('call_1', 'Oslo')] }];
    expect(errorFor([...history, { role: 'tool', content: 'x' }])).toEqual([
      "Missing required parameter: 'messages[2].tool_call_id'.",
      'messages[2].tool_call_id',
      'missing_required_parameter',
    ]);
    expect(errorFor([...history, { role: 'tool', tool_call_id: 'call_1' }])[1]).toBe('messages[2].content');
    expect(errorFor([...history, { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'image_url', image_url: { url: 'https://x' } }] }])[1]).toBe(
      'messages[2].content[0].type',
    );
  });

  it('rejects tool calls that are not all answered before the next turn', () => {
    const expected = [
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_b",
      'messages[1].role',
      'invalid_value',
    ];
    const history = [USER, { role: 'assistant', content: null, tool_calls: [CALL('call_a', 'Oslo'), CALL('call_b', 'Rome')] }];
    expect(errorFor([...history, { role: 'tool', tool_call_id: 'call_a', content: 'x' }, USER])).toEqual(expected);
    expect(errorFor([...history, { role: 'tool', tool_call_id: 'call_a', content: 'x' }])).toEqual(expected);
  });

  it('rejects the deprecated function role as unsupported', () => {
    expect(errorFor([USER, { role: 'function', name: 'f', content: 'x' }])).toEqual([
      "Unsupported value: messages with role 'function' are deprecated and not supported; use 'tool_calls' and role 'tool' instead.",
      'messages[1].role',
      'unsupported_value',
    ]);
  });

  it('rejects a non-string name', () => {
    expect(errorFor([{ role: 'user', content: 'x', name: 7 }])[1]).toBe('messages[0].name');
  });
});
