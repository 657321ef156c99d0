/**
 * The canonical request as a Converse body (converse-request.ts): the conversation laid out in
 * alternating turns with tool results first, what Converse cannot say (no tool choice `none`, no
 * image address, no empty text), the response format as a system instruction, and which model ids
 * are Claude's (and so get thinking).
 */
import { describe, expect, it } from 'vitest';
import type { CanonicalRequest } from '../../protocol/canonical.js';
import { readBedrockErrorBody } from './bedrock-error-body.js';
import { isClaudeModel, toConverseBody } from './converse-request.js';

const tool = { name: 'get_weather', parameters: { type: 'object', properties: {} } };
const base: CanonicalRequest = { model: 'm', input: [{ type: 'message', role: 'user', content: [{ type: 'text', text: 'Hi' }] }], tools: [], toolChoice: 'auto', stream: true };
const call = { upstreamModel: 'amazon.nova-pro-v1:0', maxOutputTokens: 500 };
/** The cache point the gateway places after the system prompt and after the conversation's last block. */
const CACHE_POINT = { cachePoint: { type: 'default' } };

describe('the Converse body', () => {
  it('leaves tools out for tool choice none, but keeps them (with auto) once the conversation holds tool calls', () => {
    expect(toConverseBody({ ...base, tools: [tool], toolChoice: 'none' }, call)).not.toHaveProperty('toolConfig');
    const looping: CanonicalRequest = {
      ...base,
      tools: [tool],
      toolChoice: 'none',
      input: [...base.input, { type: 'function_call', callId: 'c1', name: 'get_weather', arguments: 'not json' }, { type: 'function_call_output', callId: 'c1', output: '' }],
    };
    const body = toConverseBody(looping, call);
    expect(body.toolConfig?.toolChoice).toEqual({ auto: {} });
    // Arguments that are not a JSON object are sent as {}; an empty tool output is said as such.
    expect(body.messages.slice(1)).toEqual([
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'c1', name: 'get_weather', input: {} } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'c1', content: [{ text: '(empty)' }] } }, CACHE_POINT] },
    ]);
    expect(toConverseBody({ ...base, tools: [tool], toolChoice: { name: 'get_weather' } }, call).toolConfig?.toolChoice).toEqual({ tool: { name: 'get_weather' } });
  });

  it('merges consecutive turns of one role, puts system and developer text in system, and the response format last', () => {
    const body = toConverseBody(
      {
        ...base,
        instructions: 'Be brief.',
        input: [
          { type: 'message', role: 'developer', content: [{ type: 'text', text: 'Use metric.' }] },
          { type: 'message', role: 'user', content: [{ type: 'text', text: 'One' }] },
          { type: 'message', role: 'user', content: [{ type: 'text', text: '' }, { type: 'text', text: 'Two' }] },
        ],
        responseFormat: { type: 'json_object' },
        topP: 0.5,
      },
      call,
    );
    expect(body.system).toEqual([{ text: 'Be brief.' }, { text: 'Use metric.' }, { text: 'Respond with a single JSON object only: no other text, no code fences.' }, CACHE_POINT]);
    expect(body.messages).toEqual([{ role: 'user', content: [{ text: 'One' }, { text: 'Two' }, CACHE_POINT] }]);
    expect(body.inferenceConfig).toEqual({ maxTokens: 500, topP: 0.5 });
  });

  it('sends base64 images as bytes with their format, and refuses other data URLs', () => {
    const image = (url: string): CanonicalRequest => ({ ...base, input: [{ type: 'message', role: 'user', content: [{ type: 'image', url }] }] });
    expect(toConverseBody(image('data:image/webp;base64,UklGRg=='), call).messages[0]?.content).toEqual([{ image: { format: 'webp', source: { bytes: 'UklGRg==' } } }, CACHE_POINT]);
    expect(() => toConverseBody(image('data:image/bmp;base64,Qk0='), call)).toThrow('not supported');
  });

  it('knows Claude model ids and inference profiles from other families', () => {
    const claude = ['anthropic.claude-3-5-haiku-20241022-v1:0', 'us.anthropic.claude-sonnet-4-20250514-v1:0', 'arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-v2'];
    expect(claude.filter(isClaudeModel)).toEqual(claude);
    expect(['amazon.nova-pro-v1:0', 'meta.llama3-70b-instruct-v1:0', 'mistral.claude-lookalike'].filter(isClaudeModel)).toEqual([]);
  });

  it('gives no thinking when the tool choice forces a tool, even on Claude', () => {
    const body = toConverseBody({ ...base, tools: [tool], toolChoice: 'required', reasoningEffort: 'high' }, { upstreamModel: 'anthropic.claude-sonnet-4-20250514-v1:0', maxOutputTokens: 30_000 });
    expect(body).not.toHaveProperty('additionalModelRequestFields');
  });
});

describe('cache points in the Converse body', () => {
  const CLAUDE = { upstreamModel: 'us.anthropic.claude-sonnet-4-20250514-v1:0', maxOutputTokens: 500 };
  const conversation: CanonicalRequest['input'] = [
    { type: 'message', role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
    { type: 'function_call', callId: 'c1', name: 'get_weather', arguments: '{}' },
    { type: 'function_call_output', callId: 'c1', output: 'Rain' },
  ];

  it('places two for a client that cannot say, on Claude: after the system prompt and after the last block', () => {
    const body = toConverseBody({ ...base, instructions: 'Be brief.', tools: [tool], input: conversation }, CLAUDE);
    expect(body.system).toEqual([{ text: 'Be brief.' }, CACHE_POINT]);
    expect(body.toolConfig?.tools).toEqual([{ toolSpec: { name: 'get_weather', inputSchema: { json: tool.parameters } } }]);
    expect(body.messages.at(-1)?.content).toEqual([{ toolResult: { toolUseId: 'c1', content: [{ text: 'Rain' }] } }, CACHE_POINT]);
    // Without a system prompt, the first goes after the tools (Claude caches them).
    expect(toConverseBody({ ...base, tools: [tool], input: conversation }, CLAUDE).toolConfig?.tools).toEqual([{ toolSpec: { name: 'get_weather', inputSchema: { json: tool.parameters } } }, CACHE_POINT]);
  });

  it("sends a client's own markers as cache points (the last four of more), and adds none", () => {
    const marked: CanonicalRequest = {
      ...base,
      cacheMarked: true,
      instructions: 'Be brief.',
      instructionsCache: { ttl: '1h' },
      tools: [{ ...tool, cache: {} }],
      input: [
        { type: 'message', role: 'user', content: [{ type: 'text', text: 'One', cache: {} }, { type: 'text', text: 'Two', cache: {} }] },
        { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Three', cache: {} }] },
        { type: 'message', role: 'user', content: [{ type: 'text', text: 'Four' }] },
      ],
    };
    const body = toConverseBody(marked, CLAUDE);
    // Five markers: the tool's, the earliest, is dropped.
    expect(body.toolConfig?.tools).toEqual([{ toolSpec: { name: 'get_weather', inputSchema: { json: tool.parameters } } }]);
    expect(body.system).toEqual([{ text: 'Be brief.' }, CACHE_POINT]);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ text: 'One' }, CACHE_POINT, { text: 'Two' }, CACHE_POINT] },
      { role: 'assistant', content: [{ text: 'Three' }, CACHE_POINT] },
      { role: 'user', content: [{ text: 'Four' }] },
    ]);
    const none = toConverseBody({ ...base, cacheMarked: true, instructions: 'Be brief.' }, CLAUDE);
    expect(JSON.stringify(none)).not.toContain('cachePoint');
  });

  it('gives Nova none after the tools, and families without a prompt cache none at all', () => {
    const nova = toConverseBody({ ...base, cacheMarked: true, tools: [{ ...tool, cache: {} }], input: [{ type: 'message', role: 'user', content: [{ type: 'text', text: 'Hi', cache: {} }] }] }, call);
    expect(nova.toolConfig?.tools).toEqual([{ toolSpec: { name: 'get_weather', inputSchema: { json: tool.parameters } } }]);
    expect(nova.messages[0]?.content).toEqual([{ text: 'Hi' }, CACHE_POINT]);
    const llama = toConverseBody({ ...base, instructions: 'Be brief.', tools: [{ ...tool, cache: {} }], input: conversation }, { upstreamModel: 'meta.llama3-70b-instruct-v1:0', maxOutputTokens: 500 });
    expect(JSON.stringify(llama)).not.toContain('cachePoint');
  });
});

describe('Bedrock error bodies', () => {
  it('read message or Message, and the name from __type when given; anything else has no message', () => {
    expect(readBedrockErrorBody('{"message":"Too many requests."}')).toEqual({ message: 'Too many requests.' });
    expect(readBedrockErrorBody('{"Message":"Denied.","__type":"com.amazon.coral.service#AccessDeniedException"}')).toEqual({ message: 'Denied.', statusName: 'AccessDeniedException' });
    expect(readBedrockErrorBody('<html>Bad gateway</html>')).toEqual({ message: undefined });
    expect(readBedrockErrorBody('')).toEqual({ message: undefined });
  });
});
