/**
 * Structured outputs routed to Anthropic: a JSON schema (Chat `response_format`, Responses
 * `text.format`) becomes Anthropic's own structured output (`output_config.format`), which holds the
 * answer to the schema, rather than a system-prompt instruction a real Claude need not follow. The
 * Anthropic double answers JSON only when `output_config` carries the schema (as the real one is
 * held to it), and prose otherwise, so the clients' parsers fail without it: the openai SDK's
 * `chat.completions.parse` and `responses.parse`, and the AI SDK's `generateObject` and
 * `streamObject`.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { generateObject, streamObject } from 'ai';
import { zodResponseFormat, zodTextFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startHarness, type Harness } from '../support/harness.js';
import { startUpstreamDouble, type ReceivedRequest, type UpstreamDouble } from '../support/upstream-double.js';

const KEY = 'sk-ant-structured-upstream';
const Weather = z.object({ city: z.string(), temperature_c: z.number(), conditions: z.enum(['snow', 'rain', 'sun']) });
const OSLO = { city: 'Oslo', temperature_c: -3, conditions: 'snow' } as const;

/** Anthropic's stream of one text block holding `text`, with usage. */
function messagesStream(text: string): string {
  const events: Array<[string, Record<string, unknown>]> = [
    ['message_start', { message: { id: 'msg_structured', type: 'message', role: 'assistant', model: 'claude-up', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 40, output_tokens: 1 } } }],
    ['content_block_start', { index: 0, content_block: { type: 'text', text: '' } }],
    ['content_block_delta', { index: 0, delta: { type: 'text_delta', text: text.slice(0, 10) } }],
    ['content_block_delta', { index: 0, delta: { type: 'text_delta', text: text.slice(10) } }],
    ['content_block_stop', { index: 0 }],
    ['message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 18 } }],
    ['message_stop', {}],
  ];
  return events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`).join('');
}

/** What the schema in `output_config` asks for, or undefined when the request has none. */
function schemaOf(request: ReceivedRequest): Record<string, unknown> | undefined {
  const config = request.body.output_config as { format?: { type?: string; schema?: Record<string, unknown> } } | undefined;
  return config?.format?.type === 'json_schema' ? config.format.schema : undefined;
}

describe('structured outputs through an Anthropic upstream', () => {
  let upstream: UpstreamDouble;
  let harness: Harness;
  let secret: string;

  beforeAll(async () => {
    upstream = await startUpstreamDouble((request, response) => {
      const schema = schemaOf(request);
      // Held to the schema: the object. Asked in prose only: what a model may well answer.
      const text = schema !== undefined && JSON.stringify(schema).includes('temperature_c') ? JSON.stringify(OSLO) : 'It is snowing in Oslo, about minus three.';
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(messagesStream(text));
    });
    harness = await startHarness({
      catalog: {
        providers: [{ name: 'claude', type: 'anthropic', base_url: upstream.baseUrl, api_key_env: 'ANTHROPIC_KEY' }],
        models: [{ id: 'claude-structured', prices: { input: '3', output: '15' }, max_output_tokens: 4_096, targets: [{ provider: 'claude', model: 'claude-up' }] }],
      },
      env: { ANTHROPIC_KEY: KEY },
    });
    ({ secret } = await harness.newAccount('10'));
  });

  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });

  const lastSchema = () => schemaOf(upstream.requests.at(-1)!);
  const prompt = 'What is the weather in Oslo?';

  it('chat.completions.parse returns the schema object, the schema sent as output_config', async () => {
    const completion = await harness.client(secret).chat.completions.parse({
      model: 'claude-structured',
      messages: [{ role: 'user', content: prompt }],
      response_format: zodResponseFormat(Weather, 'weather'),
    });
    expect(completion.choices[0]!.message.parsed).toEqual(OSLO);
    expect(lastSchema()).toMatchObject({ type: 'object', required: ['city', 'temperature_c', 'conditions'] });
    // No instruction standing in for it.
    expect(JSON.stringify(upstream.requests.at(-1)!.body.system ?? '')).not.toContain('JSON');
  });

  it('responses.parse returns the schema object', async () => {
    const response = await harness.client(secret).responses.parse({ model: 'claude-structured', input: prompt, text: { format: zodTextFormat(Weather, 'weather') } });
    expect(response.output_parsed).toEqual(OSLO);
    expect(lastSchema()).toMatchObject({ properties: { conditions: { enum: ['snow', 'rain', 'sun'] } } });
  });

  it("the AI SDK's generateObject and streamObject return the schema object", async () => {
    const provider = createOpenAI({ baseURL: `${harness.baseUrl}/v1`, apiKey: secret });
    const generated = await generateObject({ model: provider('claude-structured'), schema: Weather, prompt });
    expect(generated.object).toEqual(OSLO);
    const streamed = streamObject({ model: provider('claude-structured'), schema: Weather, prompt });
    const partials: unknown[] = [];
    for await (const partial of streamed.partialObjectStream) partials.push(partial);
    expect(partials.at(-1)).toEqual(OSLO);
    expect(await streamed.object).toEqual(OSLO);
    expect(lastSchema()).toMatchObject({ type: 'object' });
  });

  it('without a schema the prose stays prose (the double is not answering JSON regardless)', async () => {
    const completion = await harness.client(secret).chat.completions.create({ model: 'claude-structured', messages: [{ role: 'user', content: prompt }] });
    expect(completion.choices[0]!.message.content).toContain('snowing');
    expect(lastSchema()).toBeUndefined();
  });
});
