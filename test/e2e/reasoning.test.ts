/**
 * Reasoning, reported right, through the real gateway:
 * - a chat upstream that returns reasoning text (`reasoning_content` or `reasoning`, in stream
 *   deltas or in a whole message) gives a Responses client a reasoning item, streamed or not;
 * - an effort whose thinking budget the model's `max_output_tokens` cuts is named at start.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';
import { startUpstreamDouble, type UpstreamDouble } from '../support/upstream-double.js';

const KEY = 'sk-reasoning-upstream';
const THOUGHT = 'First, recall that Oslo is cold.';
const ANSWER = 'It is cold in Oslo.';

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'up', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** A chat upstream streaming its reasoning in `field`, split in two deltas, then the answer. */
function streamWith(field: 'reasoning_content' | 'reasoning'): string {
  return [
    chunk({ role: 'assistant', content: null, [field]: THOUGHT.slice(0, 10) }),
    chunk({ [field]: THOUGHT.slice(10) }),
    chunk({ content: ANSWER }),
    chunk({}, 'stop'),
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'up', choices: [], usage: { prompt_tokens: 10, completion_tokens: 20, completion_tokens_details: { reasoning_tokens: 8 } } })}\n\n`,
    'data: [DONE]\n\n',
  ].join('');
}

/** The same, as one JSON completion (an upstream that ignores `stream: true`). */
const WHOLE = JSON.stringify({
  id: 'c1',
  object: 'chat.completion',
  created: 1,
  model: 'up',
  choices: [{ index: 0, message: { role: 'assistant', content: ANSWER, reasoning_content: THOUGHT }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 10, completion_tokens: 20, completion_tokens_details: { reasoning_tokens: 8 } },
});

const harnesses: Harness[] = [];
const doubles: UpstreamDouble[] = [];
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close();
  for (const double of doubles.splice(0)) await double.close();
});

async function gatewayAnswering(contentType: string, body: string) {
  const double = await startUpstreamDouble((_request, response) => {
    response.writeHead(200, { 'content-type': contentType });
    response.end(body);
  });
  doubles.push(double);
  const harness = await startHarness({
    catalog: {
      providers: [{ name: 'chat', type: 'openai', base_url: double.baseUrl, api_key_env: 'CHAT_KEY', api: 'chat' }],
      models: [{ id: 'thinker', prices: { input: '1', output: '4' }, reasoning_efforts: ['high'], max_output_tokens: 2048, targets: [{ provider: 'chat', model: 'up' }] }],
    },
    env: { CHAT_KEY: KEY },
  });
  harnesses.push(harness);
  const { secret } = await harness.newAccount('5');
  return { harness, secret, double };
}

describe('reasoning text from a chat upstream', () => {
  for (const field of ['reasoning_content', 'reasoning'] as const) {
    it(`becomes a reasoning item on a Responses stream (${field})`, async () => {
      const { harness, secret, double } = await gatewayAnswering('text/event-stream', streamWith(field));
      const stream = await harness.client(secret).responses.create({ model: 'thinker', input: 'Weather?', reasoning: { effort: 'high' }, stream: true });
      const deltas: string[] = [];
      let final: unknown;
      for await (const event of stream) {
        if (event.type === 'response.reasoning_summary_text.delta') deltas.push(event.delta);
        if (event.type === 'response.completed') final = event.response;
      }
      expect(double.requests[0]?.body.reasoning_effort).toBe('high');
      expect(deltas.join('')).toBe(THOUGHT);
      expect(final).toMatchObject({
        output: [{ type: 'reasoning', summary: [{ type: 'summary_text', text: THOUGHT }] }, { type: 'message', content: [{ type: 'output_text', text: ANSWER }] }],
        usage: { output_tokens_details: { reasoning_tokens: 8 } },
      });
    });
  }

  it('becomes a reasoning item off the stream, from deltas or from a whole message', async () => {
    for (const [contentType, body] of [['text/event-stream', streamWith('reasoning_content')], ['application/json', WHOLE]] as const) {
      const { harness, secret } = await gatewayAnswering(contentType, body);
      const response = await harness.client(secret).responses.create({ model: 'thinker', input: 'Weather?', reasoning: { effort: 'high' } });
      expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
      expect(response.output[0]).toMatchObject({ type: 'reasoning', summary: [{ type: 'summary_text', text: THOUGHT }] });
      expect(response.output_text).toBe(ANSWER);
    }
  });
});

describe('efforts a model cannot think through in full', () => {
  it('are named at start, with the model, the effort and the budget it gets instead', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const harness = await startHarness({
      catalog: {
        providers: [{ name: 'claude', type: 'anthropic', base_url: 'http://127.0.0.1:9/v1' }],
        models: [{ id: 'small-thinker', prices: { input: '1', output: '4' }, reasoning_efforts: ['low', 'max'], max_output_tokens: 4096, targets: [{ provider: 'claude', model: 'c' }] }],
      },
      logger: pino({ level: 'warn' }, sink),
    });
    harnesses.push(harness);
    const warnings = lines.filter((line) => line.level === 40 && line.model === 'small-thinker');
    expect(warnings.map((line) => line.effort)).toEqual(['max']);
    expect(String(warnings[0]?.msg)).toContain("reasoning effort 'max' asks for 65536 thinking tokens on anthropic provider \"claude\", but max_output_tokens 4096 allows a budget of 3072");
  });
});
