import { describe, it, expect } from 'vitest';
import { InvalidRequestError } from '../canonical.js';
import { decodeChatRequest } from './decode-request.js';

const USER = { role: 'user', content: 'hi' };

/** A valid minimal body with `extra` merged over it. */
function body(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: 'model-5.6', messages: [USER], ...extra };
}

/** [message, param, code] of the 400 thrown for `input`. */
function errorOf(input: unknown): [string, string | null, string | null] {
  try {
    decodeChatRequest(input);
  } catch (error) {
    if (error instanceof InvalidRequestError) return [error.message, error.param, error.code];
    throw error;
  }
  throw new Error(`expected an InvalidRequestError for ${JSON.stringify(input)}`);
}

const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    strict: true,
  },
};

describe('decodeChatRequest: accepted bodies', () => {
  it('decodes a minimal body with the defaults', () => {
    expect(decodeChatRequest(body())).toEqual({
      request: {
        model: 'model-5.6',
        input: [{ type: 'message', role: 'user', content: [{ type: 'text', text: 'hi' }] }],
        tools: [],
        toolChoice: 'none',
        stream: false,
      },
      includeUsage: false,
    });
  });

  it('maps tools to flat function tools and defaults tool_choice to auto', () => {
    const { request } = decodeChatRequest(body({ tools: [WEATHER_TOOL, { type: 'function', function: { name: 'no-args_2' } }] }));
    expect(request.tools).toEqual([
      { name: 'get_weather', description: 'Current weather', parameters: WEATHER_TOOL.function.parameters, strict: true },
      { name: 'no-args_2' },
    ]);
    expect(request.toolChoice).toBe('auto');
  });

  it('maps every tool_choice form', () => {
    const choose = (toolChoice: unknown) => decodeChatRequest(body({ tools: [WEATHER_TOOL], tool_choice: toolChoice })).request.toolChoice;
    expect(choose('none')).toBe('none');
    expect(choose('auto')).toBe('auto');
    expect(choose('required')).toBe('required');
    expect(choose({ type: 'function', function: { name: 'get_weather' } })).toEqual({ name: 'get_weather' });
    expect(choose(null)).toBe('auto');
  });

  it('reads stream and stream_options.include_usage', () => {
    const streamed = decodeChatRequest(body({ stream: true, stream_options: { include_usage: true, include_obfuscation: false } }));
    expect(streamed.request.stream).toBe(true);
    expect(streamed.includeUsage).toBe(true);
    expect(decodeChatRequest(body({ stream: true })).includeUsage).toBe(false);
    expect(decodeChatRequest(body({ stream: true, stream_options: {} })).includeUsage).toBe(false);
    expect(decodeChatRequest(body({ stream: false, stream_options: null })).request.stream).toBe(false);
  });

  it('takes max_completion_tokens over max_tokens, and max_tokens alone', () => {
    expect(decodeChatRequest(body({ max_completion_tokens: 100, max_tokens: 50 })).request.maxOutputTokens).toBe(100);
    expect(decodeChatRequest(body({ max_tokens: 50 })).request.maxOutputTokens).toBe(50);
    expect(decodeChatRequest(body({ max_completion_tokens: null, max_tokens: 7 })).request.maxOutputTokens).toBe(7);
    expect('maxOutputTokens' in decodeChatRequest(body()).request).toBe(false);
  });

  it('maps temperature, top_p and parallel_tool_calls, including the range ends', () => {
    const { request } = decodeChatRequest(body({ temperature: 2, top_p: 0, parallel_tool_calls: false, tools: [WEATHER_TOOL] }));
    expect([request.temperature, request.topP, request.parallelToolCalls]).toEqual([2, 0, false]);
  });

  it('maps every response_format type', () => {
    const format = (responseFormat: unknown) => decodeChatRequest(body({ response_format: responseFormat })).request.responseFormat;
    expect(format({ type: 'text' })).toEqual({ type: 'text' });
    expect(format({ type: 'json_object' })).toEqual({ type: 'json_object' });
    expect(
      format({ type: 'json_schema', json_schema: { name: 'answer', description: 'An answer', schema: { type: 'object' }, strict: true } }),
    ).toEqual({ type: 'json_schema', name: 'answer', description: 'An answer', schema: { type: 'object' }, strict: true });
    expect(format({ type: 'json_schema', json_schema: { name: 'any' } })).toEqual({ type: 'json_schema', name: 'any', schema: {} });
  });

  it('accepts every other OpenAI field with valid values, keeping them out of the canonical request but for the prompt cache key', () => {
    const decoded = decodeChatRequest(
      body({
        n: 1,
        stop: ['\n\n', 'END'],
        seed: 42,
        logprobs: true,
        top_logprobs: 20,
        logit_bias: { '50256': -100, '1000': 2.5 },
        presence_penalty: -2,
        frequency_penalty: 2,
        user: 'u-1',
        safety_identifier: 'hash-1',
        prompt_cache_key: 'k',
        prompt_cache_retention: '24h',
        prompt_cache_options: { mode: 'implicit' },
        metadata: { team: 'search' },
        store: false,
        service_tier: 'default',
        verbosity: 'low',
        modalities: ['text'],
        prediction: { type: 'content', content: 'x' },
      }),
    );
    expect(Object.keys(decoded.request).sort()).toEqual(['input', 'model', 'promptCacheKey', 'stream', 'toolChoice', 'tools']);
    expect(decoded.request.promptCacheKey).toBe('k');
    expect(decodeChatRequest(body({ stop: 'END' })).request.model).toBe('model-5.6');
  });

  it('treats null as absent for optional fields, reasoning_effort and functions included', () => {
    const nulls = { tools: null, tool_choice: null, stop: null, temperature: null, reasoning_effort: null, reasoning: null, functions: null, n: null };
    expect(decodeChatRequest(body(nulls)).request).toEqual(decodeChatRequest(body()).request);
  });
});

describe('decodeChatRequest: top-level rejections', () => {
  it('rejects a body that is not an object, with param null', () => {
    expect(errorOf([1])).toEqual(['Invalid type for request body: expected an object, but got an array instead.', null, 'invalid_type']);
    expect(errorOf('x')[1]).toBeNull();
    expect(errorOf(null)[0]).toBe('Invalid type for request body: expected an object, but got null instead.');
  });

  it('rejects a missing, non-string or empty model', () => {
    expect(errorOf({ messages: [USER] })).toEqual(["Missing required parameter: 'model'.", 'model', 'missing_required_parameter']);
    expect(errorOf(body({ model: 4 }))).toEqual(["Invalid type for 'model': expected a string, but got an integer instead.", 'model', 'invalid_type']);
    expect(errorOf(body({ model: '' }))[2]).toBe('empty_string');
  });

  it('rejects missing or non-array messages', () => {
    expect(errorOf({ model: 'm' })).toEqual(["Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter']);
    expect(errorOf({ model: 'm', messages: 'hi' })).toEqual([
      "Invalid type for 'messages': expected an array, but got a string instead.",
      'messages',
      'invalid_type',
    ]);
  });

  it('refuses reasoning effort, pointing to /v1/responses', () => {
    const message = "Reasoning effort cannot be configured on /v1/chat/completions; use /v1/responses with 'reasoning.effort' instead.";
    expect(errorOf(body({ reasoning_effort: 'high' }))).toEqual([message, 'reasoning_effort', 'unsupported_parameter']);
    expect(errorOf(body({ reasoning: { effort: 'low' } }))).toEqual([message, 'reasoning', 'unsupported_parameter']);
  });

  it('refuses the deprecated functions API and audio output', () => {
    expect(errorOf(body({ functions: [{ name: 'f' }] }))).toEqual([
      "Unsupported parameter: 'functions' is deprecated and not supported; use 'tools' instead.",
      'functions',
      'unsupported_parameter',
    ]);
    expect(errorOf(body({ function_call: 'auto' }))).toEqual([
      "Unsupported parameter: 'function_call' is deprecated and not supported; use 'tool_choice' instead.",
      'function_call',
      'unsupported_parameter',
    ]);
    expect(errorOf(body({ audio: { voice: 'alloy', format: 'wav' } }))[2]).toBe('unsupported_parameter');
    expect(errorOf(body({ moderation: { model: 'omni-moderation-latest' } }))[1]).toBe('moderation');
    expect(errorOf(body({ modalities: ['text', 'audio'] }))).toEqual([
      "Unsupported value: 'modalities' may only contain 'text' on this gateway.",
      'modalities[1]',
      'unsupported_value',
    ]);
  });

  it('rejects unrecognized keys', () => {
    expect(errorOf(body({ temprature: 1 }))).toEqual(['Unrecognized request argument supplied: temprature', 'temprature', 'unknown_parameter']);
  });

  it('rejects stream_options unless stream is true', () => {
    const expected = ["The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options', 'invalid_value'];
    expect(errorOf(body({ stream_options: { include_usage: true } }))).toEqual(expected);
    expect(errorOf(body({ stream: false, stream_options: { include_usage: true } }))).toEqual(expected);
    expect(errorOf(body({ stream: true, stream_options: { include_usage: 'yes' } }))).toEqual([
      "Invalid type for 'stream_options.include_usage': expected a boolean, but got a string instead.",
      'stream_options.include_usage',
      'invalid_type',
    ]);
    expect(errorOf(body({ stream: true, stream_options: true }))[1]).toBe('stream_options');
    expect(errorOf(body({ stream: 'true' }))).toEqual(["Invalid type for 'stream': expected a boolean, but got a string instead.", 'stream', 'invalid_type']);
  });

  it('rejects token caps that are not positive integers', () => {
    expect(errorOf(body({ max_tokens: 0 }))).toEqual([
      "Invalid 'max_tokens': integer below minimum value. Expected a value >= 1, but got 0 instead.",
      'max_tokens',
      'integer_below_min_value',
    ]);
    expect(errorOf(body({ max_completion_tokens: 1.5 }))).toEqual([
      "Invalid type for 'max_completion_tokens': expected an integer, but got a decimal instead.",
      'max_completion_tokens',
      'invalid_type',
    ]);
    expect(errorOf(body({ max_completion_tokens: '100' }))[2]).toBe('invalid_type');
  });

  it('rejects sampling values out of range or of the wrong type', () => {
    expect(errorOf(body({ temperature: 2.5 }))).toEqual([
      "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 2.5 instead.",
      'temperature',
      'decimal_above_max_value',
    ]);
    expect(errorOf(body({ temperature: -0.1 }))[2]).toBe('decimal_below_min_value');
    expect(errorOf(body({ top_p: 1.01 }))[1]).toBe('top_p');
    expect(errorOf(body({ temperature: 'hot' }))[0]).toBe("Invalid type for 'temperature': expected a decimal, but got a string instead.");
    expect(errorOf(body({ presence_penalty: 3 }))[1]).toBe('presence_penalty');
    expect(errorOf(body({ frequency_penalty: -2.1 }))[1]).toBe('frequency_penalty');
  });

  it('refuses n > 1 as unsupported and n < 1 as invalid', () => {
    expect(errorOf(body({ n: 2 }))).toEqual(["Unsupported value: 'n' must be 1; generating 2 choices is not supported.", 'n', 'unsupported_value']);
    expect(errorOf(body({ n: 0 }))[2]).toBe('integer_below_min_value');
  });

  it('rejects malformed stop sequences', () => {
    expect(errorOf(body({ stop: ['a', 'b', 'c', 'd', 'e'] }))).toEqual([
      "Invalid 'stop': array too long. Expected an array with maximum length 4, but got an array with length 5 instead.",
      'stop',
      'array_above_max_length',
    ]);
    expect(errorOf(body({ stop: 5 }))[0]).toBe("Invalid type for 'stop': expected one of a string or array of strings, but got an integer instead.");
    expect(errorOf(body({ stop: ['a', 1] }))[1]).toBe('stop[1]');
  });

  it('rejects malformed pass-through fields', () => {
    expect(errorOf(body({ top_logprobs: 21 }))[2]).toBe('integer_above_max_value');
    expect(errorOf(body({ logit_bias: { '50256': 101 } }))[1]).toBe('logit_bias.50256');
    expect(errorOf(body({ seed: 1.5 }))[1]).toBe('seed');
    expect(errorOf(body({ logprobs: 1 }))[1]).toBe('logprobs');
    expect(errorOf(body({ user: 5 }))[1]).toBe('user');
    expect(errorOf(body({ store: 'yes' }))[1]).toBe('store');
    expect(errorOf(body({ verbosity: 'loud' }))).toEqual(["Invalid value: 'loud'. Supported values are: 'low', 'medium', and 'high'.", 'verbosity', 'invalid_value']);
    expect(errorOf(body({ modalities: 'text' }))[1]).toBe('modalities');
    expect(errorOf(body({ prediction: 'x' }))[1]).toBe('prediction');
    expect(errorOf(body({ web_search_options: [] }))[1]).toBe('web_search_options');
  });

  it('rejects metadata beyond OpenAI\'s limits', () => {
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, 'v']));
    expect(errorOf(body({ metadata: many }))).toEqual([
      "Invalid 'metadata': too many properties. Expected an object with at most 16 properties, but got an object with 17 properties instead.",
      'metadata',
      'object_above_max_properties',
    ]);
    expect(errorOf(body({ metadata: { team: 1 } }))[1]).toBe('metadata.team');
    expect(errorOf(body({ metadata: { team: 'x'.repeat(513) } }))[2]).toBe('string_above_max_length');
    expect(errorOf(body({ metadata: { ['k'.repeat(65)]: 'v' } }))[1]).toBe('metadata');
  });

  it('rejects malformed response formats', () => {
    expect(errorOf(body({ response_format: { type: 'xml' } }))).toEqual([
      "Invalid value: 'xml'. Supported values are: 'text', 'json_object', and 'json_schema'.",
      'response_format.type',
      'invalid_value',
    ]);
    expect(errorOf(body({ response_format: 'json' }))[1]).toBe('response_format');
    expect(errorOf(body({ response_format: { type: 'json_schema' } }))[1]).toBe('response_format.json_schema');
    expect(errorOf(body({ response_format: { type: 'json_schema', json_schema: { schema: {} } } }))[1]).toBe('response_format.json_schema.name');
    expect(errorOf(body({ response_format: { type: 'json_schema', json_schema: { name: 'a b' } } }))[1]).toBe('response_format.json_schema.name');
    expect(errorOf(body({ response_format: { type: 'json_schema', json_schema: { name: 'a', schema: [] } } }))[1]).toBe(
      'response_format.json_schema.schema',
    );
  });
});

describe('decodeChatRequest: tool rejections', () => {
  it('rejects tools that are not a non-empty array of objects', () => {
    expect(errorOf(body({ tools: {} }))).toEqual(["Invalid type for 'tools': expected an array, but got an object instead.", 'tools', 'invalid_type']);
    expect(errorOf(body({ tools: [] }))).toEqual([
      "Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      'tools',
      'empty_array',
    ]);
    expect(errorOf(body({ tools: ['get_weather'] }))[1]).toBe('tools[0]');
  });

  it('refuses custom tools and rejects unknown tool types', () => {
    expect(errorOf(body({ tools: [WEATHER_TOOL, { type: 'custom', custom: { name: 'sql' } }] }))).toEqual([
      'Custom tools are not supported on /v1/chat/completions; use function tools.',
      'tools[1].type',
      'unsupported_tool',
    ]);
    expect(errorOf(body({ tools: [{ type: 'retrieval' }] }))).toEqual([
      "Invalid value: 'retrieval'. Supported values are: 'function' and 'custom'.",
      'tools[0].type',
      'invalid_value',
    ]);
    expect(errorOf(body({ tools: [{ function: { name: 'f' } }] }))[1]).toBe('tools[0].type');
  });

  it('rejects bad function definitions with the field as param', () => {
    const tool = (fn: unknown) => body({ tools: [{ type: 'function', function: fn }] });
    expect(errorOf(body({ tools: [{ type: 'function' }] }))).toEqual([
      "Missing required parameter: 'tools[0].function'.",
      'tools[0].function',
      'missing_required_parameter',
    ]);
    expect(errorOf(tool({}))).toEqual(["Missing required parameter: 'tools[0].function.name'.", 'tools[0].function.name', 'missing_required_parameter']);
    expect(errorOf(tool({ name: 'get weather' }))).toEqual([
      "Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
      'tools[0].function.name',
      'invalid_value',
    ]);
    expect(errorOf(tool({ name: 'f'.repeat(65) }))).toEqual([
      "Invalid 'tools[0].function.name': string too long. Expected a string with maximum length 64, but got a string with length 65 instead.",
      'tools[0].function.name',
      'string_above_max_length',
    ]);
    expect(decodeChatRequest(tool({ name: 'f'.repeat(64) })).request.tools[0]?.name).toHaveLength(64);
    expect(errorOf(tool({ name: '' }))[2]).toBe('empty_string');
    expect(errorOf(tool({ name: 'f', parameters: [] }))[1]).toBe('tools[0].function.parameters');
    expect(errorOf(tool({ name: 'f', strict: 'yes' }))[1]).toBe('tools[0].function.strict');
    expect(errorOf(tool({ name: 'f', description: 1 }))[1]).toBe('tools[0].function.description');
  });

  it('rejects duplicate tool names', () => {
    expect(errorOf(body({ tools: [WEATHER_TOOL, WEATHER_TOOL] }))).toEqual([
      "Invalid 'tools[1].function.name': duplicate function name 'get_weather'; tool names must be unique.",
      'tools[1].function.name',
      'invalid_value',
    ]);
  });

  it('rejects tool_choice without tools, as OpenAI does', () => {
    const expected = ["Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.", 'tool_choice', 'invalid_value'];
    expect(errorOf(body({ tool_choice: 'auto' }))).toEqual(expected);
    expect(errorOf(body({ tool_choice: { type: 'function', function: { name: 'get_weather' } } }))).toEqual(expected);
  });

  it('rejects bad tool_choice values', () => {
    const choose = (toolChoice: unknown) => body({ tools: [WEATHER_TOOL], tool_choice: toolChoice });
    expect(errorOf(choose('any'))).toEqual(["Invalid value: 'any'. Supported values are: 'none', 'auto', and 'required'.", 'tool_choice', 'invalid_value']);
    expect(errorOf(choose(1))[0]).toBe("Invalid type for 'tool_choice': expected one of a string or object, but got an integer instead.");
    expect(errorOf(choose({ type: 'function', function: { name: 'get_time' } }))).toEqual([
      "Invalid value for 'tool_choice': function 'get_time' is not among the provided 'tools'.",
      'tool_choice.function.name',
      'invalid_value',
    ]);
    expect(errorOf(choose({ type: 'function' }))[1]).toBe('tool_choice.function');
    expect(errorOf(choose({ type: 'custom', custom: { name: 'x' } }))[2]).toBe('unsupported_tool');
    expect(errorOf(choose({ type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [] } }))[2]).toBe('unsupported_value');
    expect(errorOf(choose({ type: 'tool' }))[1]).toBe('tool_choice.type');
  });

  it('rejects a non-boolean parallel_tool_calls', () => {
    expect(errorOf(body({ tools: [WEATHER_TOOL], parallel_tool_calls: 'yes' }))[1]).toBe('parallel_tool_calls');
  });
});
