import { describe, expect, it } from 'vitest';
import { InvalidRequestError, type CanonicalEvent, type CanonicalRequest } from '../canonical.js';
import { customInputFromArguments } from './custom-tools.js';
import { decodeResponsesBody } from './decode-request.js';
import { ResponsesEncoder } from './encoder.js';

const PATCH_GRAMMAR = 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF';
const applyPatch = { type: 'custom', name: 'apply_patch', description: 'Edit files.', format: { type: 'grammar', syntax: 'lark', definition: PATCH_GRAMMAR } };

function errorOf(body: unknown): [string, string | null, string | null] {
  try {
    decodeResponsesBody(body);
  } catch (error) {
    if (error instanceof InvalidRequestError) return [error.message, error.param, error.code];
    throw error;
  }
  throw new Error('expected a 400');
}

describe('custom tools: decoding', () => {
  it('turns a custom tool into a function taking one string `input`, grammar in its description', () => {
    const { request } = decodeResponsesBody({ model: 'm', input: 'x', tools: [applyPatch] });
    expect(request.tools).toHaveLength(1);
    const [tool] = request.tools;
    expect(tool).toMatchObject({ name: 'apply_patch', description: 'Edit files.', custom: { format: applyPatch.format } });
    expect(tool?.parameters).toMatchObject({ type: 'object', required: ['input'], additionalProperties: false });
    const input = (tool?.parameters?.properties as Record<string, { type: string; description: string }>).input;
    expect(input?.type).toBe('string');
    expect(input?.description).toContain(PATCH_GRAMMAR);
  });

  it('accepts a custom tool without format, and a named custom tool choice', () => {
    const { request } = decodeResponsesBody({ model: 'm', input: 'x', tools: [{ type: 'custom', name: 'note' }], tool_choice: { type: 'custom', name: 'note' } });
    expect(request.tools[0]?.custom).toEqual({});
    expect(request.toolChoice).toEqual({ name: 'note' });
  });

  it('refuses a malformed format and a choice of the wrong kind', () => {
    expect(errorOf({ model: 'm', input: 'x', tools: [{ ...applyPatch, format: { type: 'grammar', syntax: 'ebnf', definition: 'x' } }] })[1]).toBe('tools[0].format.syntax');
    expect(errorOf({ model: 'm', input: 'x', tools: [{ ...applyPatch, format: { type: 'grammar', syntax: 'lark' } }] })[1]).toBe('tools[0].format.definition');
    expect(errorOf({ model: 'm', input: 'x', tools: [{ type: 'custom', name: 'bad name' }] })[1]).toBe('tools[0].name');
    expect(errorOf({ model: 'm', input: 'x', tools: [applyPatch], tool_choice: { type: 'function', name: 'apply_patch' } })[1]).toBe('tool_choice.name');
  });

  it('replays custom calls and their outputs as the function call and output the upstream made', () => {
    const { request } = decodeResponsesBody({
      model: 'm',
      tools: [applyPatch],
      input: [
        { type: 'message', role: 'user', content: 'patch it' },
        { type: 'custom_tool_call', id: 'ctc_1', status: 'completed', call_id: 'call_9', name: 'apply_patch', input: '*** Begin Patch\n"quoted"\n' },
        { type: 'custom_tool_call_output', id: 'ctco_1', call_id: 'call_9', output: 'Success.' },
      ],
    });
    expect(request.input.slice(1)).toEqual([
      { type: 'function_call', callId: 'call_9', name: 'apply_patch', arguments: JSON.stringify({ input: '*** Begin Patch\n"quoted"\n' }) },
      { type: 'function_call_output', callId: 'call_9', output: 'Success.' },
    ]);
    expect(errorOf({ model: 'm', input: [{ type: 'custom_tool_call', call_id: 'c', name: 'apply_patch' }] })[1]).toBe('input[0].input');
  });

  it('reads the input back out of the arguments, keeping arguments that ignore the schema', () => {
    expect(customInputFromArguments('{"input":"a\\nb"}')).toBe('a\nb');
    expect(customInputFromArguments('{"patch":"x"}')).toBe('{"patch":"x"}');
    expect(customInputFromArguments('not json')).toBe('not json');
  });
});

describe('custom tools: encoding the call', () => {
  const request: CanonicalRequest = decodeResponsesBody({ model: 'm', input: 'x', tools: [applyPatch], stream: true }).request;

  it('answers a call to a custom tool with a custom_tool_call item whose input is the raw text', () => {
    const encoder = new ResponsesEncoder({ responseId: 'resp_1', createdAt: 1, model: 'm', request, stream: true, idGenerator: (prefix) => `${prefix}_1`, now: () => 2 });
    const events: CanonicalEvent[] = [
      { type: 'response-start', upstreamModel: 'up' },
      { type: 'tool-call-start', index: 0, callId: 'call_1', name: 'apply_patch' },
      { type: 'tool-call-delta', index: 0, delta: '{"input":"*** Begin' },
      { type: 'tool-call-delta', index: 0, delta: ' Patch\\n"}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'finish', reason: 'tool_calls' },
    ];
    const frames = [...encoder.start(), ...events.flatMap((event) => encoder.push(event)), ...encoder.finish({ inputTokens: 1, cachedInputTokens: 0, outputTokens: 1, reasoningTokens: 0 })];
    const payloads = frames.map((frame) => JSON.parse(frame.split('\ndata: ')[1] ?? '') as Record<string, unknown>);
    expect(payloads.map((payload) => payload.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const item = { id: 'ctc_1', type: 'custom_tool_call', status: 'completed', call_id: 'call_1', name: 'apply_patch', input: '*** Begin Patch\n' };
    expect(payloads[5]?.item).toEqual(item);
    const response = encoder.response();
    expect(response.output).toEqual([item]);
    expect(response.tools).toEqual([{ type: 'custom', name: 'apply_patch', description: 'Edit files.', format: applyPatch.format }]);
  });
});
