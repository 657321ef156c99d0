/**
 * Provider conformance, the tools coding agents declare (Codex's defaults): hosted tools
 * (`web_search`, `tool_search`, types newer than the gateway), `namespace` tools, and tool lists in
 * an `additional_tools` input item, through the real gateway.
 * - Pass-through (a Responses upstream): those fields reach the upstream byte for byte, and the
 *   answer names the catalog model the client asked for.
 * - Translated routes (Chat, Anthropic, Gemini): namespaces become flat functions and a call comes
 *   back under the declared namespace and name (also when replayed in the next turn); hosted tools
 *   are dropped and named in `x-tollgate-dropped-tools`, refused with a 400 when the model says so,
 *   or mapped to the upstream's own web search when the model says so.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readCapture } from '../support/captures.js';
import { startHarness, type Harness } from '../support/harness.js';
import { isRecord } from '../../src/lib/json-value.js';
import { baseUrlOf, doubleReplaying, KEY_ENV, openai, PROVIDER_NAME, PROVIDERS, rawEntry, SECRET, type ProviderEntry } from './provider-table.js';
import { kit } from './provider-table.js';

const WEATHER = { type: 'function', name: 'get_weather', description: 'Current weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false };
const NAMESPACE = { type: 'namespace', name: 'weather', description: 'Weather tools.', tools: [WEATHER] };
const FLAT_NAME = 'weather__get_weather';
const DROPPED_HEADER = 'x-tollgate-dropped-tools';

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close();
});

async function gatewayFor(entry: ProviderEntry, baseUrl: string): Promise<{ harness: Harness; secret: string }> {
  const model = (id: string, hostedTools: string) => ({
    id,
    prices: { input: '1', output: '4' },
    max_output_tokens: 512,
    hosted_tools: hostedTools,
    targets: [{ provider: PROVIDER_NAME, model: entry.upstreamModel }],
  });
  const harness = await startHarness({
    catalog: {
      providers: [rawEntry(entry, baseUrl)],
      models: [model('agent-model', 'drop'), model('agent-model-refuse', 'refuse'), model('agent-model-map', 'map')],
    },
    env: { [KEY_ENV]: SECRET },
  });
  harnesses.push(harness);
  const { secret } = await harness.newAccount('5');
  return { harness, secret };
}

describe('coding-agent tools, pass-through to a Responses upstream', () => {
  const entry = PROVIDERS.find((candidate) => candidate.label === 'openai (responses)')!;

  it('forwards hosted tools, a namespace and an additional_tools item byte for byte, and names the catalog model', async () => {
    const double = await doubleReplaying(entry, () => openai.json('conformance/responses-text.json'));
    const { harness, secret } = await gatewayFor(entry, baseUrlOf(entry, double));
    const tools = [
      { type: 'web_search', external_web_access: false, filters: { allowed_domains: ['example.org'] } },
      { type: 'tool_search' },
      NAMESPACE,
      { type: 'tool_type_from_the_future', settings: { depth: 3, tags: ['a', null] } },
    ];
    const input = [
      { type: 'additional_tools', id: 'at_1', role: 'developer', tools: [{ type: 'namespace', name: 'functions', description: '', tools: [{ type: 'custom', name: 'exec', description: 'Run JavaScript.', format: { type: 'grammar', syntax: 'lark', definition: 'start: /[\\s\\S]+/' } }] }, { type: 'image_generation' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Say hello.' }] },
      { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'héllo ✓' } },
    ];
    // The refusing model: served only by pass-through, nothing is refused.
    const body = JSON.stringify({ model: 'agent-model-refuse', input, tools, tool_choice: 'auto', store: false });
    const response = await harness.post('/v1/responses', body, secret);
    expect(response.status).toBe(200);
    expect(response.headers.get(DROPPED_HEADER)).toBeNull();
    const answer = (await response.json()) as Record<string, unknown>;
    expect(answer.model).toBe('agent-model-refuse');

    expect(double.requests).toHaveLength(1);
    const sent = double.requests[0]!.rawBody;
    expect(sent).toContain(`"tools":${JSON.stringify(tools)}`);
    expect(sent).toContain(`"input":${JSON.stringify(input)}`);
    expect(double.requests[0]!.body.model).toBe(entry.upstreamModel);
  });

  it('names the catalog model in every streamed event that carries the response', async () => {
    const double = await doubleReplaying(entry, () => entry.captures.text);
    const { harness, secret } = await gatewayFor(entry, baseUrlOf(entry, double));
    const response = await harness.post('/v1/responses', { model: 'agent-model', input: 'Say hello.', stream: true, tools: [NAMESPACE, { type: 'web_search' }] }, secret);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('"model":"agent-model"');
    expect(text).not.toContain(entry.upstreamModel);
  });
});

/** How each translated upstream shows its tools. */
interface TranslatedEntry {
  entry: ProviderEntry;
  functionNames: (body: Record<string, unknown>) => string[];
  /** Whether the upstream's own web search was sent; undefined where there is none. */
  webSearch?: (body: Record<string, unknown>) => boolean;
}

const tools = (body: Record<string, unknown>): Array<Record<string, unknown>> => (Array.isArray(body.tools) ? body.tools.filter(isRecord) : []);
const byLabel = (label: string): ProviderEntry => PROVIDERS.find((candidate) => candidate.label === label)!;

const TRANSLATED: TranslatedEntry[] = [
  { entry: byLabel('openai (chat)'), functionNames: (body) => tools(body).flatMap((tool) => (isRecord(tool.function) ? [String(tool.function.name)] : [])) },
  {
    entry: byLabel('anthropic'),
    functionNames: (body) => tools(body).flatMap((tool) => (tool.type === undefined ? [String(tool.name)] : [])),
    webSearch: (body) => tools(body).some((tool) => tool.type === 'web_search_20250305' && tool.name === 'web_search'),
  },
  {
    entry: byLabel('gemini'),
    functionNames: (body) => tools(body).flatMap((tool) => (Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations.filter(isRecord).map((declaration) => String(declaration.name)) : [])),
    webSearch: (body) => tools(body).some((tool) => isRecord(tool.googleSearch)),
  },
];

describe.each(TRANSLATED.map((translated) => [translated.entry.label, translated] as const))('coding-agent tools, translated for %s', (_label, translated) => {
  const { entry } = translated;

  /** A double answering with the entry's tool-call capture, calling the flat name of the namespaced tool. */
  async function gateway() {
    let baseUrl = '';
    const capture = entry.captures.toolCall;
    const double = await kit.upstream((_request, response) => {
      response.writeHead(capture.status, { 'content-type': capture.contentType });
      response.end(readCapture(capture.folder, capture.file, { baseUrl, apiKey: SECRET }).replaceAll('"get_weather"', `"${FLAT_NAME}"`));
    });
    baseUrl = baseUrlOf(entry, double);
    return { double, ...(await gatewayFor(entry, baseUrl)) };
  }

  const request = (model: string, extra: Record<string, unknown> = {}) => ({
    model,
    input: 'Check the weather in Oslo.',
    tools: [NAMESPACE, { type: 'web_search' }, { type: 'tool_search' }],
    ...extra,
  });

  it('flattens the namespace, drops the hosted tools and names them, and gives the call back under its declared name', async () => {
    const { double, harness, secret } = await gateway();
    const response = await harness.post('/v1/responses', request('agent-model'), secret);
    expect(response.status).toBe(200);
    expect(response.headers.get(DROPPED_HEADER)).toBe('web_search,tool_search');
    const answer = (await response.json()) as { model: string; output: Array<Record<string, unknown>>; tools: unknown };
    expect(answer.model).toBe('agent-model');
    // The response echoes the tools as the client declared them.
    expect(answer.tools).toEqual(request('agent-model').tools);
    const call = answer.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ name: 'get_weather', namespace: 'weather' });
    expect(JSON.parse(String(call?.arguments))).toEqual({ city: 'Oslo' });

    const sent = double.requests[0]!.body;
    expect(translated.functionNames(sent)).toEqual([FLAT_NAME]);
    expect(JSON.stringify(sent)).not.toContain('web_search');
    expect(JSON.stringify(sent)).not.toContain('tool_search');

    // The next turn replays the call as the client got it; the upstream sees the name it used.
    const replay = request('agent-model', {
      input: [
        { role: 'user', content: 'Check the weather in Oslo.' },
        { type: 'function_call', call_id: call?.call_id, namespace: 'weather', name: 'get_weather', arguments: call?.arguments },
        { type: 'function_call_output', call_id: call?.call_id, output: '{"temp_c":-3}' },
      ],
    });
    expect((await harness.post('/v1/responses', replay, secret)).status).toBe(200);
    const replayed = JSON.stringify(double.requests[1]!.body);
    expect(replayed.split(`"${FLAT_NAME}"`).length - 1).toBeGreaterThanOrEqual(2);
    expect(replayed).not.toContain('"namespace"');
  });

  it('streams the call back under its declared namespace and name', async () => {
    const { harness, secret } = await gateway();
    const response = await harness.post('/v1/responses', request('agent-model', { stream: true }), secret);
    expect(response.status).toBe(200);
    expect(response.headers.get(DROPPED_HEADER)).toBe('web_search,tool_search');
    const done = (await response.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice('data: '.length)) as Record<string, unknown>)
      .filter((event) => event.type === 'response.output_item.done')
      .map((event) => event.item);
    expect(done).toEqual([expect.objectContaining({ type: 'function_call', name: 'get_weather', namespace: 'weather' })]);
  });

  it('refuses hosted tools with a 400 naming the first one when the model is set to refuse', async () => {
    const { double, harness, secret } = await gateway();
    const response = await harness.post('/v1/responses', request('agent-model-refuse'), secret);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_tool', param: 'tools[1].type' });
    expect(String(body.error.message)).toContain("'web_search'");
    expect(double.requests).toHaveLength(0);
  });

  it('maps web search to the upstream equivalent when the model allows it, and drops the rest', async () => {
    const { double, harness, secret } = await gateway();
    const response = await harness.post('/v1/responses', request('agent-model-map'), secret);
    expect(response.status).toBe(200);
    const sent = double.requests[0]!.body;
    if (translated.webSearch === undefined) {
      expect(response.headers.get(DROPPED_HEADER)).toBe('web_search,tool_search');
      expect(JSON.stringify(sent)).not.toContain('web_search');
    } else {
      expect(response.headers.get(DROPPED_HEADER)).toBe('tool_search');
      expect(translated.webSearch(sent)).toBe(true);
    }
    expect(translated.functionNames(sent)).toEqual([FLAT_NAME]);
  });
});
