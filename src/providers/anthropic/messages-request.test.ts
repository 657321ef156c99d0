import { describe, expect, it } from 'vitest';
import type { CanonicalRequest, ReasoningEffort, ToolChoice } from '../../protocol/canonical.js';
import { UpstreamError } from '../provider.js';
import { THINKING_BUDGETS, imageSource, toMessages, toMessagesBody, toolInput } from './messages-request.js';

const CALL = { upstreamModel: 'claude-sonnet-4-5', maxOutputTokens: 8_192 };
const weather = { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };

function request(overrides: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return {
    model: 'm',
    input: [{ type: 'message', role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    tools: [],
    toolChoice: 'auto',
    stream: true,
    ...overrides,
  };
}

/** A conversation whose last turn hands tool results back. */
const TOOL_LOOP: CanonicalRequest['input'] = [
  { type: 'message', role: 'user', content: [{ type: 'text', text: 'Weather in Oslo?' }] },
  { type: 'function_call', callId: 'toolu_1', name: 'weather', arguments: '{"city":"Oslo"}' },
  { type: 'function_call_output', callId: 'toolu_1', output: '-3C' },
];

describe('toMessagesBody', () => {
  it('sends max_tokens, stream and the model, and no optional field that was not asked for (but a cache breakpoint)', () => {
    expect(toMessagesBody(request(), CALL)).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 8_192,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }] }],
      stream: true,
    });
  });

  it.each<[ToolChoice, boolean | undefined, unknown]>([
    ['auto', undefined, { type: 'auto' }],
    ['required', undefined, { type: 'any' }],
    ['none', false, { type: 'none' }],
    [{ name: 'weather' }, undefined, { type: 'tool', name: 'weather' }],
    ['auto', false, { type: 'auto', disable_parallel_tool_use: true }],
    ['required', false, { type: 'any', disable_parallel_tool_use: true }],
    [{ name: 'weather' }, false, { type: 'tool', name: 'weather', disable_parallel_tool_use: true }],
    ['auto', true, { type: 'auto' }],
  ])('maps tool choice %j with parallel calls %s to %j', (toolChoice, parallelToolCalls, expected) => {
    const body = toMessagesBody(request({ tools: [weather], toolChoice, ...(parallelToolCalls === undefined ? {} : { parallelToolCalls }) }), CALL);
    expect(body.tool_choice).toEqual(expected);
  });

  it('sends neither tools nor tool_choice without tools', () => {
    const body = toMessagesBody(request({ toolChoice: 'required', parallelToolCalls: false }), CALL);
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('tool_choice');
  });

  it.each(Object.entries(THINKING_BUDGETS) as Array<[ReasoningEffort, number]>)('gives effort %s a budget of %i tokens when max_tokens allows it', (effort, budget) => {
    const body = toMessagesBody(request({ reasoningEffort: effort }), { ...CALL, maxOutputTokens: 100_000 });
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: budget });
  });

  it('orders the budgets by effort', () => {
    const budgets = (['low', 'medium', 'high', 'xhigh', 'max'] as const).map((effort) => THINKING_BUDGETS[effort]);
    expect([...budgets].sort((left, right) => left - right)).toEqual(budgets);
    expect(budgets[0]).toBeGreaterThanOrEqual(1_024);
  });

  it.each([
    [2_048, 1_024],
    [2_047, undefined],
    [1_024, undefined],
    [5_000, 3_976],
  ])('with max_tokens %i the budget is %s (1,024 tokens kept for the answer, at least 1,024 to think)', (maxOutputTokens, budget) => {
    const body = toMessagesBody(request({ reasoningEffort: 'medium' }), { ...CALL, maxOutputTokens });
    expect(body.thinking?.budget_tokens).toBe(budget);
    if (budget !== undefined) expect(budget).toBeLessThan(maxOutputTokens);
  });

  it('does not think when the tool choice forces a tool, and keeps the forced choice', () => {
    for (const toolChoice of ['required', { name: 'weather' }] as const) {
      const body = toMessagesBody(request({ reasoningEffort: 'low', tools: [weather], toolChoice, temperature: 0.3 }), CALL);
      expect(body).not.toHaveProperty('thinking');
      expect(body.temperature).toBe(0.3);
    }
    expect(toMessagesBody(request({ reasoningEffort: 'low', tools: [weather], toolChoice: 'auto' }), CALL).thinking).toBeDefined();
  });

  it('does not think inside a tool loop, whose signed thinking blocks the canonical model cannot send back', () => {
    expect(toMessagesBody(request({ reasoningEffort: 'low', tools: [weather], input: TOOL_LOOP }), CALL)).not.toHaveProperty('thinking');
    const nextTurn = [...TOOL_LOOP, { type: 'message' as const, role: 'assistant' as const, content: [{ type: 'text' as const, text: '-3C.' }] }, { type: 'message' as const, role: 'user' as const, content: [{ type: 'text' as const, text: 'And Rome?' }] }];
    expect(toMessagesBody(request({ reasoningEffort: 'low', tools: [weather], input: nextTurn }), CALL).thinking).toBeDefined();
  });

  it('clamps temperature to 0–1 and passes top_p', () => {
    expect(toMessagesBody(request({ temperature: 2, topP: 0.5 }), CALL)).toMatchObject({ temperature: 1, top_p: 0.5 });
    expect(toMessagesBody(request({ temperature: 0 }), CALL).temperature).toBe(0);
  });

  it("holds the answer to a JSON schema with Anthropic's structured output, not an instruction", () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    const body = toMessagesBody(request({ instructions: 'Be exact.', responseFormat: { type: 'json_schema', name: 'reply', schema, description: 'The reply' } }), CALL);
    expect(body.output_config).toEqual({ format: { type: 'json_schema', schema } });
    expect(body.system).toEqual([{ type: 'text', text: 'Be exact.', cache_control: { type: 'ephemeral' } }]);
  });

  it('asks for a JSON object for json_object, and nothing for text', () => {
    expect(toMessagesBody(request({ responseFormat: { type: 'json_object' } }), CALL).system?.[0]?.text).toMatch(/JSON object/);
    expect(toMessagesBody(request({ responseFormat: { type: 'text' } }), CALL)).not.toHaveProperty('system');
  });
});

describe('toMessages', () => {
  it('merges consecutive same-role items and leaves out empty texts and empty messages', () => {
    expect(
      toMessages([
        { type: 'message', role: 'user', content: [{ type: 'text', text: 'a' }] },
        { type: 'message', role: 'user', content: [{ type: 'text', text: '' }] },
        { type: 'message', role: 'user', content: [{ type: 'text', text: 'b' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'text', text: '' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot.' }, { type: 'image', url: 'https://example.com/a.png' }] },
      ]),
    ).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'I cannot.' }] },
    ]);
  });

  it('puts tool results first in their user message', () => {
    const messages = toMessages([
      { type: 'function_call', callId: 'toolu_1', name: 'weather', arguments: '{}' },
      { type: 'message', role: 'user', content: [{ type: 'text', text: 'Quick, please.' }] },
      { type: 'function_call_output', callId: 'toolu_1', output: 'sunny' },
    ]);
    expect(messages[1]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' },
        { type: 'text', text: 'Quick, please.' },
      ],
    });
  });

  it('leaves system and developer messages out of the conversation', () => {
    expect(toMessages([{ type: 'message', role: 'developer', content: [{ type: 'text', text: 'x' }] }])).toEqual([]);
  });
});

describe('toolInput', () => {
  it.each([
    ['{"city":"Oslo"}', { city: 'Oslo' }],
    ['', {}],
    ['{"city":', {}],
    ['[1,2]', {}],
    ['"text"', {}],
    ['null', {}],
  ])('reads %j as %j', (text, expected) => {
    expect(toolInput(text)).toEqual(expected);
  });
});

describe('imageSource', () => {
  it('splits a base64 data URL into media type and data', () => {
    expect(imageSource('data:image/JPEG;base64,/9j/4AAQ')).toEqual({ type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' });
    expect(imageSource('data:image/webp;charset=binary;base64,UklGR')).toEqual({ type: 'base64', media_type: 'image/webp', data: 'UklGR' });
  });

  it('passes other URLs as url sources', () => {
    expect(imageSource('https://example.com/cat.gif')).toEqual({ type: 'url', url: 'https://example.com/cat.gif' });
  });

  it.each(['data:image/svg+xml;base64,PHN2Zz4=', 'data:image/png,%89PNG', 'data:,hello', 'data:image/png;base64'])('refuses %s with a non-failoverable 400', (url) => {
    let caught: unknown;
    try {
      imageSource(url);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(UpstreamError);
    expect(caught).toMatchObject({ kind: 'status', status: 400, failoverable: false, clientMessage: expect.stringContaining('image/png') });
  });
});
