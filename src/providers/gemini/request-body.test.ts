import { describe, expect, it } from 'vitest';
import type { CanonicalRequest, InputItem } from '../../protocol/canonical.js';
import type { RememberedCall } from './call-memory.js';
import { SKIP_SIGNATURE_CHECK, toGeminiBody, UnmatchedCallOutputError } from './request-body.js';
import { THINKING_BUDGETS, thinkingBudgetFor } from './thinking-budget.js';

function request(overrides: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return { model: 'tollgate-gemini', input: [], tools: [], toolChoice: 'auto', stream: true, ...overrides };
}

const nothingRemembered = (_callId: string): RememberedCall | undefined => undefined;

function body(overrides: Partial<CanonicalRequest>, recall = nothingRemembered, maxOutputTokens = 2_048) {
  return toGeminiBody(request(overrides), { maxOutputTokens }, recall);
}

const user = (text: string): InputItem => ({ type: 'message', role: 'user', content: [{ type: 'text', text }] });

describe('toGeminiBody: instructions and contents', () => {
  it('gathers instructions, system and developer messages into systemInstruction, in order', () => {
    const built = body({
      instructions: 'Be brief.',
      input: [
        { type: 'message', role: 'system', content: [{ type: 'text', text: 'You are a weather bot.' }] },
        user('Hi'),
        { type: 'message', role: 'developer', content: [{ type: 'text', text: 'Use metric units.' }] },
        user('Oslo?'),
      ],
    });
    expect(built.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }, { text: 'You are a weather bot.' }, { text: 'Use metric units.' }] });
    // The two user messages, no longer separated once the developer message left, become one turn.
    expect(built.contents).toEqual([{ role: 'user', parts: [{ text: 'Hi' }, { text: 'Oslo?' }] }]);
  });

  it('maps assistant messages to the model role, refusals as text, and drops empty text', () => {
    const built = body({
      input: [
        user('Tell me a secret'),
        { type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot.' }, { type: 'text', text: '' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Anything else?' }] },
        { type: 'message', role: 'user', content: [{ type: 'text', text: '' }] },
      ],
    });
    expect(built.contents).toEqual([
      { role: 'user', parts: [{ text: 'Tell me a secret' }] },
      { role: 'model', parts: [{ text: 'I cannot.' }, { text: 'Anything else?' }] },
    ]);
    expect(built.systemInstruction).toBeUndefined();
  });

  it('sends data-URL images inline and http images by reference with a guessed media type', () => {
    const built = body({
      input: [
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'text', text: 'Compare these' },
            { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=' },
            { type: 'image', url: 'https://example.com/photos/harbor.JPG?size=large' },
            { type: 'image', url: 'https://example.com/render' },
            { type: 'image', url: 'data:,hello%20world' },
          ],
        },
      ],
    });
    expect(built.contents[0]?.parts).toEqual([
      { text: 'Compare these' },
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      { fileData: { fileUri: 'https://example.com/photos/harbor.JPG?size=large', mimeType: 'image/jpeg' } },
      { fileData: { fileUri: 'https://example.com/render' } },
      { inlineData: { mimeType: 'text/plain', data: Buffer.from('hello world').toString('base64') } },
    ]);
  });
});

describe('toGeminiBody: function calls', () => {
  const call = (callId: string, name: string, args: string): InputItem => ({ type: 'function_call', callId, name, arguments: args });
  const output = (callId: string, text: string): InputItem => ({ type: 'function_call_output', callId, output: text });

  it('names each function response after its call, and merges calls and responses into single turns', () => {
    const built = body({
      input: [user('Weather and time in Oslo?'), call('call_1', 'weather', '{"city":"Oslo"}'), call('call_2', 'clock', '{"zone":"Europe/Oslo"}'), output('call_2', '14:02'), output('call_1', 'snow')],
    });
    expect(built.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather and time in Oslo?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'weather', args: { city: 'Oslo' } }, thoughtSignature: SKIP_SIGNATURE_CHECK },
          { functionCall: { name: 'clock', args: { zone: 'Europe/Oslo' } } },
        ],
      },
      {
        role: 'user',
        parts: [{ functionResponse: { name: 'clock', response: { result: '14:02' } } }, { functionResponse: { name: 'weather', response: { result: 'snow' } } }],
      },
    ]);
  });

  it('restores remembered signatures and Gemini ids, and adds no sentinel to a signed step', () => {
    const memory = new Map<string, RememberedCall>([
      ['call_1', { upstreamId: false, signature: 'CiQBsig==' }],
      ['gemini-id-2', { upstreamId: true }],
    ]);
    const built = body({ input: [user('Go'), call('call_1', 'a', '{}'), call('gemini-id-2', 'b', '{}'), output('call_1', 'x'), output('gemini-id-2', 'y')] }, (id) => memory.get(id));
    expect(built.contents.slice(1)).toEqual([
      { role: 'model', parts: [{ functionCall: { name: 'a', args: {} }, thoughtSignature: 'CiQBsig==' }, { functionCall: { name: 'b', args: {}, id: 'gemini-id-2' } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'a', response: { result: 'x' } } }, { functionResponse: { name: 'b', response: { result: 'y' }, id: 'gemini-id-2' } }] },
    ]);
  });

  it('signs every unsigned model step of a multi-step history', () => {
    const built = body({ input: [user('Go'), call('c1', 'a', '{}'), output('c1', '1'), call('c2', 'a', '{}'), output('c2', '2')] });
    const signatures = built.contents.flatMap((content) => content.parts.flatMap((part) => ('thoughtSignature' in part ? [part.thoughtSignature] : [])));
    expect(signatures).toEqual([SKIP_SIGNATURE_CHECK, SKIP_SIGNATURE_CHECK]);
  });

  it('guards the arguments: empty is {}, anything but an object is kept as text', () => {
    const built = body({ input: [user('Go'), call('c1', 'a', ''), call('c2', 'b', '[1,2]'), call('c3', 'c', '{"broken"'), output('c1', ''), output('c2', ''), output('c3', '')] });
    const args = built.contents[1]?.parts.map((part) => ('functionCall' in part ? part.functionCall.args : undefined));
    expect(args).toEqual([{}, { arguments: '[1,2]' }, { arguments: '{"broken"' }]);
  });

  it('refuses an output whose call is not in the input', () => {
    expect(() => body({ input: [user('Go'), output('call_missing', 'x')] })).toThrow(UnmatchedCallOutputError);
  });
});

describe('toGeminiBody: tools and generation settings', () => {
  const tools = [
    { name: 'weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, additionalProperties: false } },
    { name: 'now', parameters: { type: 'object', properties: {} } },
  ];

  it('declares the functions, cleaning their schemas', () => {
    expect(body({ tools }).tools).toEqual([
      { functionDeclarations: [{ name: 'weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }, { name: 'now' }] },
    ]);
  });

  it.each([
    ['auto', { mode: 'AUTO' }],
    ['none', { mode: 'NONE' }],
    ['required', { mode: 'ANY' }],
    [{ name: 'weather' }, { mode: 'ANY', allowedFunctionNames: ['weather'] }],
  ] as const)('maps tool choice %j', (toolChoice, expected) => {
    expect(body({ tools, toolChoice }).toolConfig).toEqual({ functionCallingConfig: expected });
  });

  it('sends neither tools nor a tool config without tools', () => {
    const built = body({ toolChoice: 'required' });
    expect(built.tools).toBeUndefined();
    expect(built.toolConfig).toBeUndefined();
  });

  it('always caps output, and passes temperature and topP', () => {
    expect(body({ temperature: 0.4, topP: 0.95 }, nothingRemembered, 777).generationConfig).toEqual({ maxOutputTokens: 777, temperature: 0.4, topP: 0.95 });
    expect(body({}).generationConfig).toEqual({ maxOutputTokens: 2_048 });
  });

  it('maps response formats to JSON mode, with the schema as JSON Schema', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    expect(body({ responseFormat: { type: 'json_object' } }).generationConfig).toEqual({ maxOutputTokens: 2_048, responseMimeType: 'application/json' });
    expect(body({ responseFormat: { type: 'json_schema', name: 'answer', schema, strict: true } }).generationConfig).toEqual({
      maxOutputTokens: 2_048,
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    });
    expect(body({ responseFormat: { type: 'text' } }).generationConfig).toEqual({ maxOutputTokens: 2_048 });
  });

  it('maps reasoning effort to a thinking budget with thoughts included', () => {
    expect(body({ reasoningEffort: 'high' }, nothingRemembered, 64_000).generationConfig.thinkingConfig).toEqual({ thinkingBudget: 16_384, includeThoughts: true });
    expect(body({}).generationConfig.thinkingConfig).toBeUndefined();
  });
});

describe('thinkingBudgetFor', () => {
  it('follows the table when the output cap leaves room, and rises with effort', () => {
    const budgets = (['low', 'medium', 'high', 'xhigh', 'max'] as const).map((effort) => thinkingBudgetFor(effort, 100_000));
    expect(budgets).toEqual([1_024, 8_192, 16_384, 20_480, 24_576]);
    expect(budgets).toEqual(Object.values(THINKING_BUDGETS));
  });

  it('keeps a quarter of the output cap for the answer, but never goes below 512', () => {
    expect(thinkingBudgetFor('max', 8_192)).toBe(6_144);
    expect(thinkingBudgetFor('low', 8_192)).toBe(1_024);
    expect(thinkingBudgetFor('medium', 400)).toBe(512);
  });
});
