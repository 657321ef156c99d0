import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { OPENAI_VENDORS, providerSchema } from '../../config/schema.js';
import type { CanonicalRequest } from '../../protocol/canonical.js';
import { toChatBody } from './chat-wire.js';
import { createOpenAIProvider } from './openai-provider.js';
import { readVendorErrorBody } from './vendor-error-body.js';
import { NineCharIds, toVendorBody, VENDOR_PROFILES } from './vendors.js';

const REQUEST: CanonicalRequest = {
  model: 'm',
  instructions: 'Be brief.',
  input: [
    { type: 'message', role: 'developer', content: [{ type: 'text', text: 'Answer in English.' }] },
    { type: 'message', role: 'user', content: [{ type: 'text', text: 'Weather in Oslo?' }] },
    { type: 'function_call', callId: 'call_R2d2C3poBb8Xy', name: 'get_weather', arguments: '{"city":"Oslo"}' },
    { type: 'function_call_output', callId: 'call_R2d2C3poBb8Xy', output: '{"temp":3}' },
  ],
  tools: [{ name: 'get_weather', parameters: { type: 'object' } }],
  toolChoice: 'auto',
  parallelToolCalls: true,
  reasoningEffort: 'high',
  stream: true,
};

const bodyFor = (vendor: keyof typeof VENDOR_PROFILES) => toVendorBody(VENDOR_PROFILES[vendor], { ...toChatBody(REQUEST, { upstreamModel: 'up', maxOutputTokens: 500 }) });

describe('vendor request bodies', () => {
  it('puts the output cap in max_tokens for the vendors that read only it, and keeps max_completion_tokens for the others', () => {
    for (const vendor of OPENAI_VENDORS) {
      const body = bodyFor(vendor);
      if (VENDOR_PROFILES[vendor].maxTokens === 'max_tokens') {
        expect(body, vendor).toMatchObject({ max_tokens: 500 });
        expect(body, vendor).not.toHaveProperty('max_completion_tokens');
      } else {
        expect(body, vendor).toMatchObject({ max_completion_tokens: 500 });
        expect(body, vendor).not.toHaveProperty('max_tokens');
      }
    }
    expect(VENDOR_PROFILES.deepseek.maxTokens).toBe('max_tokens');
    expect(VENDOR_PROFILES.mistral.maxTokens).toBe('max_tokens');
  });

  it('keeps the smaller cap when a pass-through body names both fields', () => {
    expect(toVendorBody(VENDOR_PROFILES.deepseek, { max_tokens: 900, max_completion_tokens: 300 })).toEqual({ max_tokens: 300 });
    expect(toVendorBody(VENDOR_PROFILES.deepseek, { max_tokens: 200, max_completion_tokens: 300 })).toEqual({ max_tokens: 200 });
    expect(toVendorBody(VENDOR_PROFILES.groq, { max_tokens: 200, max_completion_tokens: 300 })).toEqual({ max_tokens: 200, max_completion_tokens: 300 });
  });

  it('sends no stream_options to Mistral, and asks the others for usage', () => {
    expect(bodyFor('mistral')).not.toHaveProperty('stream_options');
    for (const vendor of OPENAI_VENDORS.filter((name) => name !== 'mistral')) expect(bodyFor(vendor), vendor).toMatchObject({ stream_options: { include_usage: true } });
  });

  it("sends the reasoning effort as each vendor takes it: OpenAI's field, OpenRouter's object, or not at all", () => {
    expect(bodyFor('groq')).toMatchObject({ reasoning_effort: 'high' });
    expect(bodyFor('xai')).toMatchObject({ reasoning_effort: 'high' });
    expect(bodyFor('openrouter')).toMatchObject({ reasoning: { effort: 'high' } });
    expect(bodyFor('openrouter')).not.toHaveProperty('reasoning_effort');
    for (const vendor of ['mistral', 'deepseek'] as const) {
      expect(bodyFor(vendor), vendor).not.toHaveProperty('reasoning_effort');
      expect(bodyFor(vendor), vendor).not.toHaveProperty('reasoning');
    }
    // A client's own reasoning object wins over its effort.
    expect(toVendorBody(VENDOR_PROFILES.openrouter, { reasoning_effort: 'low', reasoning: { max_tokens: 100 } })).toEqual({ reasoning: { max_tokens: 100 } });
  });

  it("drops OpenAI's own fields for every vendor, and the fields Mistral forbids", () => {
    const body = { model: 'm', store: true, metadata: { a: '1' }, service_tier: 'flex', prompt_cache_key: 'k', safety_identifier: 's', user: 'u', seed: 1, temperature: 0.5 };
    for (const vendor of OPENAI_VENDORS) {
      const sent = toVendorBody(VENDOR_PROFILES[vendor], body);
      for (const field of ['store', 'metadata', 'service_tier', 'prompt_cache_key', 'safety_identifier']) expect(sent, `${vendor} ${field}`).not.toHaveProperty(field);
      expect(sent.temperature).toBe(0.5);
    }
    expect(toVendorBody(VENDOR_PROFILES.mistral, body)).toEqual({ model: 'm', temperature: 0.5 });
    expect(toVendorBody(VENDOR_PROFILES.groq, body)).toEqual({ model: 'm', user: 'u', seed: 1, temperature: 0.5 });
    // The body given is left as it was.
    expect(body.store).toBe(true);
  });

  it('sends a developer message as system', () => {
    const body = toVendorBody(VENDOR_PROFILES.vllm, { messages: [{ role: 'developer', content: 'x' }, { role: 'user', content: 'y' }, 'odd'] });
    expect(body.messages).toEqual([{ role: 'system', content: 'x' }, { role: 'user', content: 'y' }, 'odd']);
  });

  it("gives Mistral nine-character tool-call ids, the same for a call and its result, and keeps Mistral's own", () => {
    const messages = bodyFor('mistral').messages as Array<Record<string, unknown>>;
    const assistant = messages.find((message) => message.role === 'assistant') as { tool_calls: Array<{ id: string }> };
    const tool = messages.find((message) => message.role === 'tool') as { tool_call_id: string };
    expect(assistant.tool_calls[0]?.id).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(tool.tool_call_id).toBe(assistant.tool_calls[0]?.id);
    // The same in the next request, so a conversation resent turn by turn keeps its ids.
    expect((bodyFor('mistral').messages as Array<Record<string, unknown>>).find((message) => message.role === 'tool')).toEqual(tool);
    // Other vendors get the ids as they were.
    expect((bodyFor('groq').messages as Array<Record<string, unknown>>).find((message) => message.role === 'tool')).toMatchObject({ tool_call_id: 'call_R2d2C3poBb8Xy' });

    const ids = new NineCharIds();
    expect(ids.of('D681PevKs')).toBe('D681PevKs');
    expect(ids.of('call_1')).not.toBe(ids.of('call_2'));
    expect(ids.of('call_1')).toBe(ids.of('call_1'));
    expect(ids.of('toolu_01A')).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(ids.of('')).toMatch(/^[A-Za-z0-9]{9}$/);
  });

  it('never gives two ids one form in a request', () => {
    const ids = new NineCharIds();
    const forms = new Set(Array.from({ length: 2_000 }, (_, index) => ids.of(`call_${index}`)));
    expect(forms.size).toBe(2_000);
    // An id of Mistral's form that another already took is moved aside, consistently.
    const taken = ids.of('call_7');
    const other = ids.of(taken === 'call_7' ? 'x' : taken);
    expect(other).not.toBe(taken);
  });
});

describe('vendor catalog entries', () => {
  it('takes a vendor without base_url, and refuses an entry with neither, or an unknown vendor', () => {
    expect(providerSchema.parse({ name: 'g', type: 'openai', vendor: 'groq', api_key_env: 'GROQ_API_KEY' })).toMatchObject({ vendor: 'groq' });
    expect(() => providerSchema.parse({ name: 'o', type: 'openai' })).toThrow(/base_url/);
    expect(() => providerSchema.parse({ name: 'o', type: 'openai', vendor: 'acme', base_url: 'https://acme.test/v1' })).toThrow(/vendor/);
  });

  it('builds a vendor provider that speaks Chat only and has no moderations, unless told otherwise', async () => {
    const built = createOpenAIProvider(providerSchema.parse({ name: 'm', type: 'openai', vendor: 'mistral' }) as Parameters<typeof createOpenAIProvider>[0], {});
    expect(built.speaksNatively?.('chat-completions')).toBe(true);
    expect(built.speaksNatively?.('responses')).toBe(false);
    expect(built.moderate).toBeUndefined();
    const both = createOpenAIProvider(providerSchema.parse({ name: 'x', type: 'openai', vendor: 'xai', api: 'both' }) as Parameters<typeof createOpenAIProvider>[0], {});
    expect(both.speaksNatively?.('responses')).toBe(true);
    const openai = createOpenAIProvider(providerSchema.parse({ name: 'o', type: 'openai', base_url: 'https://api.openai.com/v1' }) as Parameters<typeof createOpenAIProvider>[0], {});
    expect(openai.speaksNatively?.('responses')).toBe(true);
    expect(openai.moderate).toBeDefined();
    await Promise.all([built.close?.(), both.close?.(), openai.close?.()]);
  });

  it('takes the README catalog line of every vendor', () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const block = /```yaml\n(providers:[\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const entries = (parse(block) as { providers: Array<Record<string, unknown>> }).providers.filter((entry) => entry.vendor !== undefined);
    const parsed = entries.map((entry) => providerSchema.parse(entry) as { vendor?: string });
    expect(parsed.map((entry) => entry.vendor)).toEqual([...OPENAI_VENDORS]);
  });

  it('has a default address for every vendor', () => {
    for (const vendor of OPENAI_VENDORS) expect(() => new URL(VENDOR_PROFILES[vendor].baseUrl), vendor).not.toThrow();
  });
});

describe('vendor error bodies', () => {
  it.each([
    ['OpenAI envelope', '{"error":{"message":"Invalid model","type":"invalid_request_error","code":"model_not_found"}}', 'Invalid model'],
    ['bare string', '{"error":"model \\"llama9\\" not found, try pulling it first"}', 'model "llama9" not found, try pulling it first'],
    [
      "Mistral's 422 for a forbidden field",
      '{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","stream_options"],"msg":"Extra inputs are not permitted","input":{"include_usage":true}}]},"type":"invalid_request_error","param":null,"code":null}',
      'body.stream_options: Extra inputs are not permitted',
    ],
    ["Mistral's 422 written as text", '{"object":"error","message":"{\\"detail\\":[{\\"loc\\":[\\"body\\",\\"user\\"],\\"msg\\":\\"Extra inputs are not permitted\\"}]}","type":"internal_error_proxy","code":"1000"}', 'body.user: Extra inputs are not permitted'],
    ["vLLM's error", '{"object":"error","message":"The model `x` does not exist.","type":"NotFoundError","param":null,"code":404}', 'The model `x` does not exist.'],
    ['FastAPI detail text', '{"detail":"Not Found"}', 'Not Found'],
    ['FastAPI detail list', '{"detail":[{"loc":["body","messages",0,"role"],"msg":"Input should be user"}]}', 'body.messages.0.role: Input should be user'],
    [
      "OpenRouter's metadata",
      '{"error":{"message":"Provider returned error","code":429,"metadata":{"raw":"llama is rate-limited upstream","provider_name":"Together"}}}',
      'Provider returned error (Together: llama is rate-limited upstream)',
    ],
    ['HTML', '<html>502 Bad Gateway</html>', undefined],
    ['empty', '', undefined],
    ['an array', '[1]', undefined],
    ['a detail of nothing', '{"detail":[1,{"loc":"x"}]}', undefined],
  ])('reads %s', (_label, text, message) => {
    expect(readVendorErrorBody(text).message).toBe(message);
  });

  it('cuts a routed provider’s words short', () => {
    const raw = 'x'.repeat(5_000);
    expect(readVendorErrorBody(JSON.stringify({ error: { message: 'm', metadata: { raw } } })).message).toBe(`m (${'x'.repeat(300)})`);
  });
});
