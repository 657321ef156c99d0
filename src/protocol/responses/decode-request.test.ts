import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../canonical.js';
import { decodeResponsesBody, decodeResponsesRequest } from './decode-request.js';

const base = { model: 'model-5.6', input: 'hi' };

/** Decodes `body` and returns the InvalidRequestError it must throw. */
function rejection(body: unknown): InvalidRequestError {
  try {
    decodeResponsesBody(body);
  } catch (error) {
    if (error instanceof InvalidRequestError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(body)} to be rejected`);
}

function expectRejected(body: unknown, param: string | null, code: string, message?: string): void {
  const error = rejection(body);
  expect({ param: error.param, code: error.code }).toEqual({ param, code });
  if (message !== undefined) expect(error.message).toBe(message);
}

describe('decodeResponsesBody: the minimal request', () => {
  it('turns a string input into one user message and fills the defaults', () => {
    const decoded = decodeResponsesBody(base);
    expect(decoded.request).toEqual({
      model: 'model-5.6',
      input: [{ type: 'message', role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      tools: [],
      toolChoice: 'auto',
      stream: false,
    });
    expect(decoded.store).toBe(true);
    expect(decoded.previousResponseId).toBeNull();
    expect(decoded.metadata).toEqual({});
    expect(decoded.echo).toEqual({
      user: null,
      truncation: 'disabled',
      reasoningSummary: null,
      verbosity: 'medium',
      topLogprobs: 0,
      promptCacheKey: null,
      safetyIdentifier: null,
    });
  });

  it('decodeResponsesRequest returns the canonical request alone', () => {
    expect(decodeResponsesRequest({ ...base, stream: true })).toEqual(decodeResponsesBody({ ...base, stream: true }).request);
    expect(decodeResponsesRequest({ ...base, stream: true }).stream).toBe(true);
  });

  it.each([
    ['a string', '"hi"'],
    ['an array', []],
    ['null', null],
    ['a number', 3],
  ])('rejects a body that is %s with param null', (_label, body) => {
    expectRejected(body, null, 'invalid_type');
  });

  it('rejects unknown top-level fields the way OpenAI does', () => {
    expectRejected({ ...base, frobnicate: 1 }, 'frobnicate', 'unknown_parameter', 'Unrecognized request argument supplied: frobnicate');
    expectRejected({ ...base, messages: [] }, 'messages', 'unknown_parameter');
  });
});

describe('model', () => {
  it.each([[undefined], [null], ['']])('is required (%s)', (model) => {
    expectRejected({ input: 'hi', model }, 'model', 'missing_required_parameter', "Missing required parameter: 'model'.");
  });
  it('must be a string', () => {
    expectRejected({ input: 'hi', model: 5 }, 'model', 'invalid_type', "Invalid type for 'model': expected a string, but got an integer instead.");
  });
});

describe('input', () => {
  it('is required', () => {
    expectRejected({ model: 'm' }, 'input', 'missing_required_parameter', "Missing required parameter: 'input'.");
  });
  it.each([
    [3, 'an integer'],
    [1.5, 'a decimal'],
    [true, 'a boolean'],
    [{ role: 'user' }, 'an object'],
  ])('rejects %j with OpenAI wording', (input, got) => {
    expectRejected(
      { model: 'm', input },
      'input',
      'invalid_type',
      `Invalid type for 'input': expected a string or an array of input items, but got ${got} instead.`,
    );
  });
  it('rejects an empty array', () => {
    expectRejected({ model: 'm', input: [] }, 'input', 'empty_array');
  });

  it('decodes messages of every role, typed or not, with string or part content', () => {
    const { request } = decodeResponsesBody({
      model: 'm',
      input: [
        { role: 'system', content: 'be brief' },
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'dev' }] },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'look' },
            { type: 'input_image', image_url: 'https://img.example/a.png', detail: 'low' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA' },
          ],
        },
        {
          type: 'message',
          id: 'msg_1',
          status: 'completed',
          role: 'assistant',
          phase: 'final_answer',
          content: [
            { type: 'output_text', text: 'seen', annotations: [], logprobs: [] },
            { type: 'refusal', refusal: 'no' },
          ],
        },
      ],
    });
    expect(request.input).toEqual([
      { type: 'message', role: 'system', content: [{ type: 'text', text: 'be brief' }] },
      { type: 'message', role: 'developer', content: [{ type: 'text', text: 'dev' }] },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image', url: 'https://img.example/a.png', detail: 'low' },
          { type: 'image', url: 'data:image/png;base64,AAAA' },
        ],
      },
      { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'seen' }, { type: 'refusal', refusal: 'no' }] },
    ]);
  });

  it('decodes function calls and outputs, drops reasoning items, and allows an output with no earlier call', () => {
    const { request } = decodeResponsesBody({
      model: 'm',
      input: [
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAA' },
        { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'weather', arguments: '{"city":"Bergen"}', status: 'completed' },
        { type: 'function_call_output', call_id: 'call_1', output: '{"temp":6}' },
        { type: 'function_call_output', call_id: 'call_stored', output: [{ type: 'input_text', text: 'a' }, { type: 'input_text', text: 'b' }] },
      ],
    });
    expect(request.input).toEqual([
      { type: 'function_call', callId: 'call_1', name: 'weather', arguments: '{"city":"Bergen"}' },
      { type: 'function_call_output', callId: 'call_1', output: '{"temp":6}' },
      { type: 'function_call_output', callId: 'call_stored', output: 'ab' },
    ]);
  });

  it.each([
    ['an item that is not an object', ['hi'], 'input[0]', 'invalid_type'],
    ['a non-string item type', [{ type: 3 }], 'input[0].type', 'invalid_type'],
    ['a message without role', [{ content: 'x' }], 'input[0].role', 'missing_required_parameter'],
    ['an unknown role', [{ role: 'tool', content: 'x' }], 'input[0].role', 'invalid_value'],
    ['a null role', [{ role: null, content: 'x' }], 'input[0].role', 'invalid_type'],
    ['a message without content', [{ role: 'user' }], 'input[0].content', 'missing_required_parameter'],
    ['numeric content', [{ role: 'user', content: 5 }], 'input[0].content', 'invalid_type'],
    ['a bad message status', [{ role: 'user', content: 'x', status: 'done' }], 'input[0].status', 'invalid_value'],
    ['a part that is not an object', [{ role: 'user', content: ['x'] }], 'input[0].content[0]', 'invalid_type'],
    ['a part without type', [{ role: 'user', content: [{ text: 'x' }] }], 'input[0].content[0].type', 'missing_required_parameter'],
    ['a part with a null type', [{ role: 'user', content: [{ type: null, text: 'x' }] }], 'input[0].content[0].type', 'invalid_type'],
    ['output_text in a user message', [{ role: 'user', content: [{ type: 'output_text', text: 'x' }] }], 'input[0].content[0].type', 'invalid_value'],
    ['input_text in an assistant message', [{ role: 'assistant', content: [{ type: 'input_text', text: 'x' }] }], 'input[0].content[0].type', 'invalid_value'],
    ['an input_file part', [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }], 'input[0].content[0].type', 'invalid_value'],
    ['a text part without text', [{ role: 'user', content: [{ type: 'input_text' }] }], 'input[0].content[0].text', 'missing_required_parameter'],
    ['a refusal without refusal', [{ role: 'assistant', content: [{ type: 'refusal' }] }], 'input[0].content[0].refusal', 'missing_required_parameter'],
    ['an image without url', [{ role: 'user', content: [{ type: 'input_image', detail: 'auto' }] }], 'input[0].content[0].image_url', 'missing_required_parameter'],
    ['an image by file id', [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }], 'input[0].content[0].file_id', 'unsupported_value'],
    ['an image url object (Chat shape)', [{ role: 'user', content: [{ type: 'input_image', image_url: { url: 'x' } }] }], 'input[0].content[0].image_url', 'invalid_type'],
    ['a bad image detail', [{ role: 'user', content: [{ type: 'input_image', image_url: 'x', detail: 'ultra' }] }], 'input[0].content[0].detail', 'invalid_value'],
    ['a call without call_id', [{ type: 'function_call', name: 'f', arguments: '{}' }], 'input[0].call_id', 'missing_required_parameter'],
    ['a call with an empty call_id', [{ type: 'function_call', call_id: '', name: 'f', arguments: '{}' }], 'input[0].call_id', 'empty_string'],
    ['a call without name', [{ type: 'function_call', call_id: 'c', arguments: '{}' }], 'input[0].name', 'missing_required_parameter'],
    ['a call with object arguments', [{ type: 'function_call', call_id: 'c', name: 'f', arguments: {} }], 'input[0].arguments', 'invalid_type'],
    ['a call with a numeric id', [{ type: 'function_call', call_id: 'c', name: 'f', arguments: '{}', id: 1 }], 'input[0].id', 'invalid_type'],
    ['a call with a bad status', [{ type: 'function_call', call_id: 'c', name: 'f', arguments: '{}', status: 'x' }], 'input[0].status', 'invalid_value'],
    ['an output without call_id', [{ type: 'function_call_output', output: 'x' }], 'input[0].call_id', 'missing_required_parameter'],
    ['an output without output', [{ type: 'function_call_output', call_id: 'c' }], 'input[0].output', 'missing_required_parameter'],
    ['a numeric output', [{ type: 'function_call_output', call_id: 'c', output: 1 }], 'input[0].output', 'invalid_type'],
    ['an unknown part in an output', [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_video', url: 'x' }] }], 'input[0].output[0].type', 'invalid_value'],
    ['an output part without text', [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_text' }] }], 'input[0].output[0].text', 'missing_required_parameter'],
  ])('rejects %s', (_label, input, param, code) => {
    expectRejected({ model: 'm', input }, param, code);
  });

  it('names the exact path of a deep problem', () => {
    const input = [{ role: 'user', content: 'ok' }, { role: 'user', content: 'ok' }, { role: 'user', content: [{ type: 'input_text', text: 'a' }, { type: 'input_text', text: 7 }] }];
    expectRejected({ model: 'm', input }, 'input[2].content[1].text', 'invalid_type', "Invalid type for 'input[2].content[1].text': expected a string, but got an integer instead.");
  });

  it('lists the supported values OpenAI style', () => {
    expectRejected(
      { model: 'm', input: [{ role: 'user', content: [{ type: 'output_text', text: 'x' }] }] },
      'input[0].content[0].type',
      'invalid_value',
      "Invalid value: 'output_text'. Supported values are: 'input_text' and 'input_image'.",
    );
  });
});

describe('instructions', () => {
  it('accepts a string and treats null as absent', () => {
    expect(decodeResponsesRequest({ ...base, instructions: 'Answer tersely.' }).instructions).toBe('Answer tersely.');
    expect(decodeResponsesRequest({ ...base, instructions: null })).not.toHaveProperty('instructions');
  });
  it('rejects other types', () => {
    expectRejected({ ...base, instructions: ['a'] }, 'instructions', 'invalid_type');
  });
});

describe('tools and tool_choice', () => {
  const weather = { type: 'function', name: 'weather', description: 'Current weather', parameters: { type: 'object', properties: {} }, strict: true };

  it('decodes flat function tools', () => {
    const request = decodeResponsesRequest({ ...base, tools: [weather, { type: 'function', name: 'ping', parameters: null, strict: null }] });
    expect(request.tools).toEqual([
      { name: 'weather', description: 'Current weather', parameters: { type: 'object', properties: {} }, strict: true },
      { name: 'ping' },
    ]);
  });

  it.each([
    ['a non-array', { ...base, tools: {} }, 'tools', 'invalid_type'],
    ['a non-object tool', { ...base, tools: ['weather'] }, 'tools[0]', 'invalid_type'],
    ['a tool without type', { ...base, tools: [{ name: 'x' }] }, 'tools[0].type', 'missing_required_parameter'],
    ['a namespace without name', { ...base, tools: [{ type: 'namespace', tools: [weather] }] }, 'tools[0].name', 'missing_required_parameter'],
    ['a bad name inside a namespace', { ...base, tools: [{ type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 'a b' }] }] }, 'tools[0].tools[0].name', 'invalid_value'],
    ['additional_tools without tools', { ...base, input: [{ type: 'additional_tools' }] }, 'input[0].tools', 'missing_required_parameter'],
    ['the nested Chat shape', { ...base, tools: [{ type: 'function', function: { name: 'x' } }] }, 'tools[0].name', 'missing_required_parameter'],
    ['a name with spaces', { ...base, tools: [{ type: 'function', name: 'get weather' }] }, 'tools[0].name', 'invalid_value'],
    ['a 65-character name', { ...base, tools: [{ type: 'function', name: 'a'.repeat(65) }] }, 'tools[0].name', 'invalid_value'],
    ['an empty name', { ...base, tools: [{ type: 'function', name: '' }] }, 'tools[0].name', 'invalid_value'],
    ['a duplicate name', { ...base, tools: [weather, weather] }, 'tools[1].name', 'invalid_value'],
    ['a numeric description', { ...base, tools: [{ ...weather, description: 1 }] }, 'tools[0].description', 'invalid_type'],
    ['string parameters', { ...base, tools: [{ ...weather, parameters: '{}' }] }, 'tools[0].parameters', 'invalid_type'],
    ['a string strict', { ...base, tools: [{ ...weather, strict: 'yes' }] }, 'tools[0].strict', 'invalid_type'],
  ])('rejects %s', (_label, body, param, code) => {
    expectRejected(body, param, code);
  });

  it('accepts a 64-character name with dashes and underscores', () => {
    const name = `a-_${'b'.repeat(61)}`;
    expect(decodeResponsesRequest({ ...base, tools: [{ type: 'function', name }] }).tools[0]?.name).toBe(name);
  });

  it.each(['none', 'auto', 'required'] as const)('accepts tool_choice %s', (choice) => {
    expect(decodeResponsesRequest({ ...base, tools: [weather], tool_choice: choice }).toolChoice).toBe(choice);
  });

  it('accepts a named function that is among the tools', () => {
    expect(decodeResponsesRequest({ ...base, tools: [weather], tool_choice: { type: 'function', name: 'weather' } }).toolChoice).toEqual({ name: 'weather' });
  });

  it.each([
    ['an unknown mode', { tools: [weather], tool_choice: 'any' }, 'tool_choice', 'invalid_value'],
    ['required without tools', { tool_choice: 'required' }, 'tool_choice', 'invalid_value'],
    ['a number', { tools: [weather], tool_choice: 1 }, 'tool_choice', 'invalid_type'],
    ['an object without type', { tools: [weather], tool_choice: { name: 'weather' } }, 'tool_choice.type', 'missing_required_parameter'],
    ['a named function missing from tools', { tools: [weather], tool_choice: { type: 'function', name: 'other' } }, 'tool_choice.name', 'invalid_value'],
    ['a named function without name', { tools: [weather], tool_choice: { type: 'function' } }, 'tool_choice.name', 'missing_required_parameter'],
  ])('rejects tool_choice as %s', (_label, extra, param, code) => {
    expectRejected({ ...base, ...extra }, param, code);
  });
});

describe('numeric and boolean settings', () => {
  it('accepts the bounds', () => {
    const request = decodeResponsesRequest({ ...base, temperature: 0, top_p: 1, max_output_tokens: 1, parallel_tool_calls: false });
    expect(request).toMatchObject({ temperature: 0, topP: 1, maxOutputTokens: 1, parallelToolCalls: false });
    expect(decodeResponsesRequest({ ...base, temperature: 2, top_p: 0 })).toMatchObject({ temperature: 2, topP: 0 });
  });

  it('treats null as absent', () => {
    const request = decodeResponsesRequest({ ...base, temperature: null, top_p: null, max_output_tokens: null, parallel_tool_calls: null, stream: null });
    expect(request).not.toHaveProperty('temperature');
    expect(request).not.toHaveProperty('topP');
    expect(request).not.toHaveProperty('maxOutputTokens');
    expect(request).not.toHaveProperty('parallelToolCalls');
    expect(request.stream).toBe(false);
  });

  it.each([
    ['temperature', 2.5, 'decimal_above_max_value', "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 2.5 instead."],
    ['temperature', -0.1, 'decimal_below_min_value', undefined],
    ['temperature', '1', 'invalid_type', "Invalid type for 'temperature': expected a number, but got a string instead."],
    ['top_p', 1.01, 'decimal_above_max_value', undefined],
    ['top_p', -1, 'decimal_below_min_value', undefined],
    ['max_output_tokens', 0, 'integer_below_min_value', "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 1, but got 0 instead."],
    ['max_output_tokens', 10.5, 'invalid_type', undefined],
    ['max_output_tokens', '100', 'invalid_type', undefined],
    ['parallel_tool_calls', 'true', 'invalid_type', undefined],
    ['stream', 1, 'invalid_type', "Invalid type for 'stream': expected a boolean, but got an integer instead."],
    ['store', 'no', 'invalid_type', undefined],
    ['top_logprobs', 21, 'integer_above_max_value', undefined],
    ['top_logprobs', -1, 'integer_below_min_value', undefined],
    ['background', 'false', 'invalid_type', undefined],
  ])('rejects %s = %j', (field, value, code, message) => {
    expectRejected({ ...base, [field]: value }, field, code, message);
  });
});

describe('reasoning', () => {
  it.each(['low', 'medium', 'high', 'xhigh', 'max'] as const)('accepts effort %s', (effort) => {
    expect(decodeResponsesRequest({ ...base, reasoning: { effort } }).reasoningEffort).toBe(effort);
  });

  it('treats a null effort or null reasoning as none, and echoes the summary setting', () => {
    expect(decodeResponsesRequest({ ...base, reasoning: { effort: null } })).not.toHaveProperty('reasoningEffort');
    expect(decodeResponsesRequest({ ...base, reasoning: null })).not.toHaveProperty('reasoningEffort');
    expect(decodeResponsesBody({ ...base, reasoning: { effort: 'low', summary: 'auto' } }).echo.reasoningSummary).toBe('auto');
    expect(decodeResponsesBody({ ...base, reasoning: { generate_summary: 'concise' } }).echo.reasoningSummary).toBe('concise');
  });

  it('rejects an unknown effort with the list of supported values', () => {
    expectRejected(
      { ...base, reasoning: { effort: 'huge' } },
      'reasoning.effort',
      'invalid_value',
      "Invalid value: 'huge'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', and 'max'.",
    );
  });

  it.each([
    [{ ...base, reasoning: 'high' }, 'reasoning', 'invalid_type'],
    [{ ...base, reasoning: { effort: 3 } }, 'reasoning.effort', 'invalid_type'],
    [{ ...base, reasoning: { summary: 'long' } }, 'reasoning.summary', 'invalid_value'],
  ])('rejects %j', (body, param, code) => {
    expectRejected(body, param, code);
  });
});

describe('text', () => {
  it('decodes every format and the verbosity', () => {
    expect(decodeResponsesRequest({ ...base, text: { format: { type: 'text' } } }).responseFormat).toEqual({ type: 'text' });
    expect(decodeResponsesRequest({ ...base, text: { format: { type: 'json_object' } } }).responseFormat).toEqual({ type: 'json_object' });
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const decoded = decodeResponsesBody({ ...base, text: { format: { type: 'json_schema', name: 'thing', schema, strict: true, description: 'd' }, verbosity: 'low' } });
    expect(decoded.request.responseFormat).toEqual({ type: 'json_schema', name: 'thing', schema, strict: true, description: 'd' });
    expect(decoded.echo.verbosity).toBe('low');
    expect(decodeResponsesRequest({ ...base, text: {} })).not.toHaveProperty('responseFormat');
  });

  it.each([
    [{ text: 'json' }, 'text', 'invalid_type'],
    [{ text: { format: 'json' } }, 'text.format', 'invalid_type'],
    [{ text: { format: {} } }, 'text.format.type', 'missing_required_parameter'],
    [{ text: { format: { type: 'xml' } } }, 'text.format.type', 'invalid_value'],
    [{ text: { format: { type: 'json_schema', schema: {} } } }, 'text.format.name', 'missing_required_parameter'],
    [{ text: { format: { type: 'json_schema', name: 'a b', schema: {} } } }, 'text.format.name', 'invalid_value'],
    [{ text: { format: { type: 'json_schema', name: 'a' } } }, 'text.format.schema', 'missing_required_parameter'],
    [{ text: { format: { type: 'json_schema', name: 'a', schema: [] } } }, 'text.format.schema', 'invalid_type'],
    [{ text: { format: { type: 'json_schema', name: 'a', schema: {}, strict: 1 } } }, 'text.format.strict', 'invalid_type'],
    [{ text: { format: { type: 'json_schema', name: 'a', schema: {}, description: 1 } } }, 'text.format.description', 'invalid_type'],
    [{ text: { verbosity: 'loud' } }, 'text.verbosity', 'invalid_value'],
  ])('rejects %j', (extra, param, code) => {
    expectRejected({ ...base, ...extra }, param, code);
  });
});

describe('gateway-only fields', () => {
  it('decodes store, previous_response_id and metadata', () => {
    // Bodies come from JSON.parse, which makes "__proto__" an own key; it must survive decoding.
    const metadata: unknown = JSON.parse('{"team":"a","__proto__":"kept"}');
    const decoded = decodeResponsesBody({ ...base, store: false, previous_response_id: 'resp_1', metadata });
    expect(decoded.store).toBe(false);
    expect(decoded.previousResponseId).toBe('resp_1');
    expect(Object.entries(decoded.metadata)).toEqual([['team', 'a'], ['__proto__', 'kept']]);
    expect(decodeResponsesBody({ ...base, store: null, previous_response_id: null, metadata: null })).toMatchObject({ store: true, previousResponseId: null, metadata: {} });
  });

  it('accepts 16 metadata pairs and rejects 17', () => {
    const pairs = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, index) => [`k${index}`, 'v']));
    expect(Object.keys(decodeResponsesBody({ ...base, metadata: pairs(16) }).metadata)).toHaveLength(16);
    expectRejected({ ...base, metadata: pairs(17) }, 'metadata', 'object_above_max_properties');
  });

  it.each([
    [{ metadata: [] }, 'metadata', 'invalid_type'],
    [{ metadata: { a: 1 } }, 'metadata.a', 'invalid_type'],
    [{ metadata: { a: 'x'.repeat(513) } }, 'metadata.a', 'string_above_max_length'],
    [{ metadata: { ['k'.repeat(65)]: 'v' } }, `metadata.${'k'.repeat(65)}`, 'string_above_max_length'],
    [{ previous_response_id: 1 }, 'previous_response_id', 'invalid_type'],
  ])('rejects %j', (extra, param, code) => {
    expectRejected({ ...base, ...extra }, param, code);
  });

  it('echoes the pass-through settings', () => {
    const decoded = decodeResponsesBody({
      ...base,
      user: 'u1',
      safety_identifier: 'hash',
      prompt_cache_key: 'pk',
      service_tier: 'auto',
      truncation: 'auto',
      include: ['reasoning.encrypted_content'],
      stream_options: { include_obfuscation: false },
      top_logprobs: 3,
      background: false,
      conversation: null,
      client_metadata: { session_id: 's1', turn_id: 't1' },
    });
    expect(decoded.echo).toMatchObject({ user: 'u1', safetyIdentifier: 'hash', promptCacheKey: 'pk', truncation: 'auto', topLogprobs: 3 });
    // The prompt cache key also travels to OpenAI upstreams on translated routes.
    expect(decoded.request.promptCacheKey).toBe('pk');
    expect(decodeResponsesBody(base).request).not.toHaveProperty('promptCacheKey');
  });

  it.each([
    [{ user: 1 }, 'user', 'invalid_type'],
    [{ safety_identifier: 's'.repeat(65) }, 'safety_identifier', 'string_above_max_length'],
    [{ prompt_cache_key: {} }, 'prompt_cache_key', 'invalid_type'],
    [{ service_tier: 'gold' }, 'service_tier', 'invalid_value'],
    [{ truncation: 'sometimes' }, 'truncation', 'invalid_value'],
    [{ include: 'reasoning.encrypted_content' }, 'include', 'invalid_type'],
    [{ include: ['reasoning.encrypted_content', 'everything'] }, 'include[1]', 'invalid_value'],
    [{ stream_options: true }, 'stream_options', 'invalid_type'],
    [{ stream_options: { include_obfuscation: 'no' } }, 'stream_options.include_obfuscation', 'invalid_type'],
    [{ top_logprobs: 1.5 }, 'top_logprobs', 'invalid_type'],
    [{ background: true }, 'background', 'unsupported_value'],
    [{ conversation: 'conv_1' }, 'conversation', 'unsupported_parameter'],
    [{ conversation: { id: 'conv_1' } }, 'conversation', 'unsupported_parameter'],
    [{ prompt: { id: 'pmpt_1' } }, 'prompt', 'unsupported_parameter'],
    [{ client_metadata: 'x' }, 'client_metadata', 'invalid_type'],
    [{ client_metadata: { turn: 1 } }, 'client_metadata.turn', 'invalid_type'],
  ])('rejects %j', (extra, param, code) => {
    expectRejected({ ...base, ...extra }, param, code);
  });
});

describe('tools Tollgate does not run (hosted, namespaced, listed in the input)', () => {
  const exec = { type: 'custom', name: 'exec', description: 'Run JavaScript.', format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' } };
  const spawn = { type: 'function', name: 'spawn_agent', parameters: { type: 'object', properties: { task: { type: 'string' } } }, strict: false };

  it('keeps hosted tools and unknown types as they came, with where they were declared', () => {
    const request = decodeResponsesRequest({ ...base, tools: [{ type: 'web_search', external_web_access: false }, { type: 'tool_search' }, { type: 'tool_of_2030', x: 1 }] });
    expect(request.tools).toEqual([]);
    expect(request.hostedTools).toEqual([
      { type: 'web_search', raw: { type: 'web_search', external_web_access: false }, param: 'tools[0].type' },
      { type: 'tool_search', raw: { type: 'tool_search' }, param: 'tools[1].type' },
      { type: 'tool_of_2030', raw: { type: 'tool_of_2030', x: 1 }, param: 'tools[2].type' },
    ]);
  });

  it('flattens a namespace into functions that remember the declared namespace and name', () => {
    const request = decodeResponsesRequest({ ...base, tools: [{ type: 'namespace', name: 'collaboration', description: 'Sub-agents.', tools: [spawn] }] });
    expect(request.tools).toEqual([
      { name: 'collaboration__spawn_agent', parameters: spawn.parameters, strict: false, declared: { namespace: 'collaboration', name: 'spawn_agent' } },
    ]);
  });

  it('merges the tools of an additional_tools item and leaves the item out of the conversation', () => {
    const request = decodeResponsesRequest({
      ...base,
      input: [{ type: 'additional_tools', role: 'developer', tools: [{ type: 'namespace', name: 'functions', tools: [exec] }, { type: 'web_search' }] }, { role: 'user', content: 'hi' }],
    });
    expect(request.input).toEqual([{ type: 'message', role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
    expect(request.tools.map((tool) => [tool.name, tool.declared, tool.custom !== undefined])).toEqual([['functions__exec', { namespace: 'functions', name: 'exec' }, true]]);
    expect(request.hostedTools?.map((tool) => tool.param)).toEqual(['input[0].tools[1].type']);
  });

  it('replays a namespaced call under the flat name the upstream knew', () => {
    const request = decodeResponsesRequest({
      ...base,
      input: [
        { type: 'custom_tool_call', call_id: 'c1', namespace: 'functions', name: 'exec', input: 'text(1)' },
        { type: 'custom_tool_call_output', call_id: 'c1', output: [{ type: 'input_text', text: '1' }] },
        { type: 'function_call', call_id: 'c2', namespace: 'collaboration', name: 'spawn_agent', arguments: '{}' },
      ],
    });
    expect(request.input.filter((item) => item.type === 'function_call').map((item) => (item.type === 'function_call' ? item.name : ''))).toEqual([
      'functions__exec',
      'collaboration__spawn_agent',
    ]);
  });

  it('keeps items of unknown types at their place, for Responses upstreams only', () => {
    const search = { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'x' } };
    const reference = { type: 'item_reference', id: 'msg_1' };
    const request = decodeResponsesRequest({ ...base, input: [{ role: 'user', content: 'a' }, search, reference, { role: 'user', content: 'b' }] });
    expect(request.input).toHaveLength(2);
    expect(request.opaqueInput).toEqual([
      { index: 1, raw: search },
      { index: 1, raw: reference },
    ]);
  });

  it('takes a hosted tool choice and allowed_tools without refusing them', () => {
    expect(decodeResponsesRequest({ ...base, tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } }).toolChoice).toBe('auto');
    expect(decodeResponsesRequest({ ...base, tools: [spawn], tool_choice: { type: 'allowed_tools', mode: 'required', tools: [] } }).toolChoice).toBe('required');
  });
});

describe('tool outputs with images', () => {
  it('name the image in its place for translated routes (a Responses upstream gets the parts as sent)', () => {
    const request = decodeResponsesRequest({
      ...base,
      input: [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_text', text: 'Here: ' }, { type: 'input_image', image_url: 'data:image/png;base64,AA==' }] }],
    });
    expect(request.input).toEqual([{ type: 'function_call_output', callId: 'c', output: 'Here: [image not shown]' }]);
  });
});
