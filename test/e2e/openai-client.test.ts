/**
 * The official `openai` npm client against the real server: both endpoints, streaming and not,
 * a tool round trip, item input, the Responses stream helper, and reasoning effort.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  },
};

describe.each(engines)('official openai client on %s', (engine) => {
  let harness: Harness;
  let secret: string;
  let client: OpenAI;

  beforeAll(async () => {
    harness = await startHarness({ engine });
    ({ secret } = await harness.newAccount('20'));
    client = harness.client(secret);
  });
  afterAll(async () => harness?.close());

  it('chat completion, not streamed', async () => {
    const completion = await client.chat.completions.create({
      model: 'model-5.6',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Say hello to Oslo' },
      ],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('model-5.6');
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.choices[0]?.message.content).toMatch(/Say hello to Oslo/);
    const usage = completion.usage!;
    expect(usage.prompt_tokens).toBeGreaterThan(0);
    expect(usage.completion_tokens).toBeGreaterThan(0);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
  });

  it('chat completion streamed with usage; and without usage the usage chunk is absent', async () => {
    const stream = await client.chat.completions.create({
      model: 'model-5.6',
      messages: [{ role: 'user', content: 'Tell me about streams' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toMatch(/Tell me about streams/);
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBeGreaterThan(0);

    const bare = await client.chat.completions.create({ model: 'model-5.6', messages: [{ role: 'user', content: 'x' }], stream: true });
    const chunks = [];
    for await (const chunk of bare) chunks.push(chunk);
    expect(chunks.every((chunk) => chunk.usage === undefined || chunk.usage === null)).toBe(true);
    expect(chunks.every((chunk) => chunk.choices.length === 1)).toBe(true);
  });

  it('a tool-call round trip on chat completions, streamed and not', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Bergen?' }];
    const first = await client.chat.completions.create({ model: 'model-5.6', messages, tools: [weatherTool] });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call?.type).toBe('function');
    if (call?.type !== 'function') throw new Error('expected a function call');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toHaveProperty('city');

    messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '6C and rain' });
    const second = await client.chat.completions.create({ model: 'model-5.6', messages, tools: [weatherTool] });
    expect(second.choices[0]?.finish_reason).toBe('stop');
    expect(second.choices[0]?.message.content).toContain('6C and rain');

    const runner = client.chat.completions.stream({ model: 'model-5.6', messages: [messages[0]!], tools: [weatherTool] });
    const streamed = await runner.finalChatCompletion();
    expect(streamed.choices[0]?.message.tool_calls?.[0]).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
  });

  it('a tool message that answers no call is refused', async () => {
    await expect(
      client.chat.completions.create({
        model: 'model-5.6',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'tool', tool_call_id: 'call_nobody', content: 'orphan' },
        ],
      }),
    ).rejects.toMatchObject({ status: 400, type: 'invalid_request_error' });
  });

  it('responses with string input', async () => {
    const response = await client.responses.create({ model: 'model-5.6', input: 'Describe the harbour' });
    expect(response.object).toBe('response');
    expect(response.status).toBe('completed');
    expect(response.model).toBe('model-5.6');
    expect(response.output_text).toMatch(/Describe the harbour/);
    const message = response.output.find((item) => item.type === 'message');
    expect(message).toMatchObject({ type: 'message', status: 'completed', role: 'assistant' });
    expect(response.usage?.input_tokens_details.cached_tokens).toBe(0);
    expect(response.usage?.total_tokens).toBe(response.usage!.input_tokens + response.usage!.output_tokens);
  });

  it('responses with item input and a function-call round trip', async () => {
    const tools: OpenAI.Responses.Tool[] = [
      { type: 'function', name: 'get_weather', parameters: weatherTool.function.parameters, strict: true, description: null },
    ];
    const first = await client.responses.create({
      model: 'model-5.6',
      instructions: 'Use tools when useful.',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'Weather in Rome?' }] }],
      tools,
    });
    const call = first.output.find((item) => item.type === 'function_call');
    if (call?.type !== 'function_call') throw new Error('expected a function call');
    expect(call.name).toBe('get_weather');
    const second = await client.responses.create({
      model: 'model-5.6',
      input: [
        { role: 'user', content: 'Weather in Rome?' },
        { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: 'function_call_output', call_id: call.call_id, output: '17C and sun' },
      ],
      tools,
    });
    expect(second.output_text).toContain('17C and sun');
  });

  it('responses streamed through the SDK stream helper', async () => {
    const stream = client.responses.stream({ model: 'model-5.6', input: 'Stream me a story', reasoning: { effort: 'medium' } });
    const types = new Set<string>();
    let deltas = '';
    stream.on('response.output_text.delta', (event) => {
      deltas += event.delta;
    });
    for await (const event of stream) types.add(event.type);
    const final = await stream.finalResponse();
    expect(final.status).toBe('completed');
    expect(final.output_text).toBe(deltas);
    for (const type of ['response.created', 'response.in_progress', 'response.output_item.added', 'response.output_text.delta', 'response.completed']) {
      expect(types.has(type), type).toBe(true);
    }
    expect(final.usage?.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
  });

  it('reasoning effort: accepted on the spec models, refused elsewhere and on chat', async () => {
    const efforts = ['low', 'medium', 'high', 'xhigh', 'max'] as const;
    const reasoning: number[] = [];
    for (const effort of efforts) {
      const response = await client.responses.create({ model: 'model-5.6-sol', input: 'Think', reasoning: { effort: effort as 'high' } });
      expect(response.status).toBe('completed');
      reasoning.push(response.usage!.output_tokens_details.reasoning_tokens);
    }
    expect([...reasoning].sort((a, b) => a - b)).toEqual(reasoning);
    for (const model of ['model-5.6', 'model-5.6-terra', 'model-5.6-luna']) {
      const response = await client.responses.create({ model, input: 'Think', reasoning: { effort: 'low' } });
      expect(response.status).toBe('completed');
    }
    await expect(client.responses.create({ model: 'model-5.6-mini', input: 'x', reasoning: { effort: 'low' } })).rejects.toMatchObject({
      status: 400,
      param: 'reasoning.effort',
    });
    await expect(
      client.chat.completions.create({ model: 'model-5.6', messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'low' }),
    ).rejects.toMatchObject({ status: 400, param: 'reasoning_effort' });
  });

  it('lists the models the key may use', async () => {
    const models = [];
    for await (const model of client.models.list()) models.push(model.id);
    expect(models).toEqual(expect.arrayContaining(['model-5.6', 'model-5.6-sol', 'model-5.6-terra', 'model-5.6-luna', 'model-5.6-mini']));
    expect(models).not.toContain('disabled-model');
  });

  it('retrieves one model, and answers 404 model_not_found for one the key may not use, as OpenAI does', async () => {
    const model = await client.models.retrieve('model-5.6');
    expect(model).toMatchObject({ id: 'model-5.6', object: 'model', owned_by: 'tollgate', endpoints: ['/v1/responses', '/v1/chat/completions', '/v1/messages'] });
    expect(typeof model.created).toBe('number');
    for (const id of ['disabled-model', 'no-such-model']) {
      await expect(client.models.retrieve(id)).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
    }
    const answer = await fetch(`${harness.baseUrl}/v1/models/no-such-model`, { headers: { authorization: `Bearer ${secret}` } });
    expect(answer.status).toBe(404);
    expect(answer.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await answer.text()).toBe(
      JSON.stringify({ error: { message: "The model 'no-such-model' does not exist or you do not have access to it.", type: 'invalid_request_error', code: 'model_not_found' } }),
    );
  });

  it("retrieves one model in Anthropic's shape for Anthropic's clients, and their 404", async () => {
    const headers = { 'x-api-key': secret, 'anthropic-version': '2023-06-01' };
    const found = await fetch(`${harness.baseUrl}/v1/models/model-5.6`, { headers });
    expect(found.status).toBe(200);
    expect(await found.json()).toEqual({ type: 'model', id: 'model-5.6', display_name: 'model-5.6', created_at: '2026-01-01T00:00:00.000Z' });
    const missing = await fetch(`${harness.baseUrl}/v1/models/no-such-model`, { headers });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });

  it('refuses a model lookup without a key, like every /v1 route', async () => {
    const answer = await fetch(`${harness.baseUrl}/v1/models/model-5.6`);
    expect(answer.status).toBe(401);
  });
});
