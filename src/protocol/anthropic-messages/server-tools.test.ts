import { describe, expect, it } from 'vitest';
import { decodeMessagesRequest } from './decode-request.js';
import { unsupportedServerTool } from './server-tools.js';

const body = (extra: Record<string, unknown>) => ({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'Weather?' }], ...extra });
const webSearch = { type: 'web_search_20250305', name: 'web_search', max_uses: 8 };
const weather = { name: 'weather', input_schema: { type: 'object' } };

describe("Anthropic's server tools in a Messages request", () => {
  it('keeps them as hosted tools in the wire they came in, apart from the client tools', () => {
    const { request } = decodeMessagesRequest(body({ tools: [weather, webSearch, { type: 'code_execution_20250522', name: 'code_execution' }, { type: 'custom', ...weather, name: 'w2' }] }));
    expect(request.tools.map((tool) => tool.name)).toEqual(['weather', 'w2']);
    expect(request.hostedTools).toEqual([
      { type: 'web_search_20250305', raw: webSearch, param: 'tools[1].type', wire: 'anthropic' },
      { type: 'code_execution_20250522', raw: { type: 'code_execution_20250522', name: 'code_execution' }, param: 'tools[2].type', wire: 'anthropic' },
    ]);
    expect('hostedTools' in decodeMessagesRequest(body({ tools: [weather] })).request).toBe(false);
  });

  it('lets the model choose when the client forces a server tool by name; a client tool stays forced', () => {
    expect(decodeMessagesRequest(body({ tools: [webSearch], tool_choice: { type: 'tool', name: 'web_search' } })).request.toolChoice).toBe('auto');
    expect(decodeMessagesRequest(body({ tools: [weather, webSearch], tool_choice: { type: 'tool', name: 'weather' } })).request.toolChoice).toEqual({ name: 'weather' });
  });

  it('still refuses a server tool whose type is not a string', () => {
    expect(() => decodeMessagesRequest(body({ tools: [{ type: 7, name: 'x' }] }))).toThrow(/tools\[0\]\.type/);
  });

  it('refuses one, when the model says so, naming it and where it is', () => {
    const { request } = decodeMessagesRequest(body({ tools: [weather, webSearch] }));
    const refusal = unsupportedServerTool(request.hostedTools![0]!);
    expect(refusal.message).toBe(
      "The server tool 'web_search_20250305' is not supported with this model, whose route does not run Anthropic's server tools. Remove it from `tools`, or use a model served by Anthropic.",
    );
    expect(refusal.param).toBe('tools[1].type');
    expect(refusal.code).toBe('unsupported_tool');
  });
});
