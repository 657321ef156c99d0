import { describe, expect, it } from 'vitest';
import type { CanonicalRequest } from '../canonical.js';
import { COMPACTION_INSTRUCTION, compactionRequest, retainedUserMessages, summaryInputItem } from './compaction.js';
import { decodeResponsesBody } from './decode-request.js';

describe('decoding compaction items', () => {
  it('takes a trailing compaction_trigger as the request to compact, and keeps compaction items as they came', () => {
    const item = { type: 'compaction', id: 'cmp_1', encrypted_content: 'gAAAA' };
    const decoded = decodeResponsesBody({ model: 'm', input: [{ role: 'user', content: 'hi' }, item, { type: 'compaction_trigger' }] });
    expect(decoded.compact).toBe(true);
    expect(decoded.request.input).toHaveLength(1);
    expect(decoded.request.opaqueInput).toEqual([{ index: 1, raw: item }]);
    expect(decodeResponsesBody({ model: 'm', input: 'hi' }).compact).toBe(false);
  });

  it.each([
    [[{ type: 'compaction_trigger' }, { role: 'user', content: 'hi' }], 'input[0]'],
    [[{ type: 'compaction' }], 'input[0].encrypted_content'],
    [[{ type: 'compaction', encrypted_content: 7 }], 'input[0].encrypted_content'],
  ])('refuses %j at %s', (input, param) => {
    expect(() => decodeResponsesBody({ model: 'm', input })).toThrow(expect.objectContaining({ param }));
  });
});

describe('compactionRequest', () => {
  const request: CanonicalRequest = {
    model: 'm',
    instructions: 'Be an agent.',
    input: [
      { type: 'message', role: 'user', content: [{ type: 'text', text: 'Fix it.' }] },
      { type: 'function_call', callId: 'c1', name: 'read', arguments: '{"p":"a.ts"}' },
      { type: 'function_call_output', callId: 'c1', output: 'contents' },
    ],
    tools: [{ name: 'read' }],
    hostedTools: [{ type: 'web_search', raw: { type: 'web_search' }, param: 'tools[1]' }],
    toolChoice: 'required',
    parallelToolCalls: true,
    responseFormat: { type: 'json_object' },
    reasoningEffort: 'high',
    stream: true,
  };

  it('writes tool calls out as text, ends with the instruction, and has no tools; instructions and effort stay', () => {
    const compacting = compactionRequest(request);
    expect(compacting).toEqual({
      model: 'm',
      instructions: 'Be an agent.',
      input: [
        request.input[0],
        { type: 'message', role: 'assistant', content: [{ type: 'text', text: '[called the tool read (call c1) with {"p":"a.ts"}]' }] },
        { type: 'message', role: 'user', content: [{ type: 'text', text: '[result of call c1]\ncontents' }] },
        { type: 'message', role: 'user', content: [{ type: 'text', text: COMPACTION_INSTRUCTION }] },
      ],
      tools: [],
      toolChoice: 'auto',
      reasoningEffort: 'high',
      stream: true,
    });
  });

  it('reads a summary back as a user message, and keeps only user messages for /compact', () => {
    expect(summaryInputItem('S')).toEqual({ type: 'message', role: 'user', content: [{ type: 'input_text', text: expect.stringMatching(/^Summary of the conversation so far.*\n\nS$/s) }] });
    const user = { role: 'user', content: 'a' };
    expect(retainedUserMessages([user, { role: 'assistant', content: 'b' }, { type: 'compaction', encrypted_content: 'x' }, { type: 'message', role: 'user', content: 'c' }])).toEqual([user, { type: 'message', role: 'user', content: 'c' }]);
    expect(retainedUserMessages('hi')).toEqual([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }]);
  });
});
