/**
 * Responses compaction through the real server (docs/wire-protocols.md §23): a
 * `compaction_trigger` on translated routes (Chat, Anthropic) answered with one sealed compaction
 * item made by one billed model call, the item opened into a summary message when it comes back
 * (on a pass-through too), a pass-through forwarding the trigger and OpenAI's own items, and
 * `/v1/responses/compact` on both kinds of route; the bad inputs each get their 400.
 */
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sealer } from '../../src/lib/seal.js';
import { COMPACTION_SEAL_PURPOSE } from '../../src/protocol/responses/compaction.js';
import { settledCharges } from '../support/charges.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startOpenAIUpstream, type UpstreamDouble as ChatDouble } from '../support/openai-upstream.js';
import { startUpstreamDouble, type ReceivedRequest, type UpstreamDouble } from '../support/upstream-double.js';

const SUMMARY = 'GOALS: port the parser to Rust. FILES: src/parser.rs. NEXT: run cargo test.';
// USD per 1M tokens: 1,000 nano-USD per input token, 500 per cached one, 2,000 per output token.
const PRICES = { input: '1', cached_input: '0.5', output: '2' };
const CHAT_USAGE = { prompt_tokens: 200, completion_tokens: 30, total_tokens: 230 };
const CHAT_CHARGE = 200n * 1_000n + 30n * 2_000n;
const CLAUDE_CHARGE = 120n * 1_000n + 25n * 2_000n;
const OPENAI_ITEM = { type: 'compaction' as const, id: 'cmp_openai', encrypted_content: 'gAAAAABopenai-sealed' };

const tool = { type: 'function' as const, name: 'read_file', description: 'Reads a file', parameters: { type: 'object', properties: { path: { type: 'string' } } }, strict: false };
const conversation = [
  { type: 'message' as const, role: 'user' as const, content: 'Port the parser to Rust.' },
  { type: 'function_call' as const, call_id: 'call_1', name: 'read_file', arguments: '{"path":"src/parser.ts"}' },
  { type: 'function_call_output' as const, call_id: 'call_1', output: 'export function parse() {}' },
  { type: 'message' as const, role: 'assistant' as const, content: 'I read the parser.' },
];

/** Anthropic's stream for one text answer: 120 tokens in, 25 out. */
function claudeStream(text: string): string {
  const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  return [
    event('message_start', { message: { id: 'msg_c', type: 'message', role: 'assistant', model: 'claude-up', content: [], stop_reason: null, usage: { input_tokens: 120, output_tokens: 1 } } }),
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    event('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }),
    event('content_block_stop', { index: 0 }),
    event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 25 } }),
    event('message_stop', {}),
  ].join('');
}

/** A Responses upstream that compacts: an event stream or a compact object holding OpenAI's item. */
function responsesUpstream(request: ReceivedRequest, response: import('node:http').ServerResponse): void {
  const usage = { input_tokens: 50, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 60 };
  if (request.path.endsWith('/responses/compact')) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ id: 'resp_cmp_up', object: 'response.compaction', created_at: 1767225600, output: [OPENAI_ITEM], usage }));
    return;
  }
  const input = request.body.input as Array<Record<string, unknown>>;
  const item = input.at(-1)?.type === 'compaction_trigger' ? OPENAI_ITEM : { id: 'msg_up', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'ok', annotations: [] }] };
  const base = { id: 'resp_up', object: 'response', created_at: 1767225600, model: String(request.body.model) };
  const frames = [
    { type: 'response.created', sequence_number: 0, response: { ...base, status: 'in_progress', output: [], usage: null } },
    { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item },
    { type: 'response.output_item.done', sequence_number: 2, output_index: 0, item },
    { type: 'response.completed', sequence_number: 3, response: { ...base, status: 'completed', output: [item], usage } },
  ];
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.end(frames.map((frame) => `event: ${frame.type}\ndata: ${JSON.stringify(frame)}\n\n`).join(''));
}

describe('compaction', () => {
  let chat: ChatDouble;
  let claude: UpstreamDouble;
  let passthrough: UpstreamDouble;
  let harness: Harness;
  let client: OpenAI;
  let secret: string;

  beforeAll(async () => {
    chat = await startOpenAIUpstream({ reply: () => ({ content: SUMMARY }), usage: () => CHAT_USAGE });
    claude = await startUpstreamDouble((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(claudeStream(SUMMARY));
    });
    passthrough = await startUpstreamDouble(responsesUpstream);
    harness = await startHarness({
      catalog: {
        providers: [
          { name: 'chat', type: 'openai', api: 'chat', base_url: chat.baseUrl, api_key_env: 'TEST_KEY' },
          { name: 'claude', type: 'anthropic', base_url: claude.baseUrl, api_key_env: 'TEST_KEY' },
          { name: 'resp', type: 'openai', api: 'responses', base_url: passthrough.baseUrl, api_key_env: 'TEST_KEY' },
        ],
        models: [
          { id: 'chat-model', prices: PRICES, max_output_tokens: 4_096, targets: [{ provider: 'chat', model: 'chat-up' }] },
          { id: 'claude-model', prices: PRICES, max_output_tokens: 4_096, targets: [{ provider: 'claude', model: 'claude-up' }] },
          { id: 'pass-model', prices: PRICES, max_output_tokens: 4_096, targets: [{ provider: 'resp', model: 'gpt-up' }] },
        ],
      },
      env: { TEST_KEY: 'sk-upstream' },
    });
    const account = await harness.newAccount('10');
    secret = account.secret;
    client = harness.client(secret);
  });
  afterAll(async () => {
    await harness?.close();
    await chat?.close();
    await claude?.close();
    await passthrough?.close();
  });

  /** A compaction made on the Chat route, for the tests that send one back. */
  async function compactOnChat(): Promise<Record<string, unknown>> {
    const response = await client.responses.create({ model: 'chat-model', input: [...conversation, { type: 'compaction_trigger' }], tools: [tool], store: false });
    return response.output[0] as unknown as Record<string, unknown>;
  }

  function expectSealed(item: Record<string, unknown> | undefined): string {
    expect(item).toMatchObject({ type: 'compaction', id: expect.stringMatching(/^cmp_/) });
    const sealed = String(item?.encrypted_content);
    expect(sealed.startsWith('tg1.')).toBe(true);
    expect(sealed).not.toContain('parser');
    expect(sealed).not.toContain('GOALS');
    return sealed;
  }

  it('Chat route, streamed: one compaction item and no text; the upstream got the conversation and our instruction, no tools; billed once at its usage', async () => {
    const chatBefore = chat.requests.length;
    const stream = await client.responses.create({ model: 'chat-model', input: [...conversation, { type: 'compaction_trigger' }], tools: [tool], stream: true, store: false });
    const types: string[] = [];
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(types.filter((type) => type.includes('output_text') || type.includes('content_part'))).toEqual([]);
    expect(types).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.output_item.done', 'response.completed']);
    expect(completed?.output).toHaveLength(1);
    expectSealed(completed?.output[0] as unknown as Record<string, unknown>);
    expect(completed?.usage).toMatchObject({ input_tokens: 200, output_tokens: 30 });

    expect(chat.requests.length).toBe(chatBefore + 1);
    const sent = chat.requests.at(-1)!.body;
    expect(sent.tools).toBeUndefined();
    const messages = sent.messages as Array<{ role: string; content: unknown }>;
    expect(JSON.stringify(messages)).toContain('Port the parser to Rust.');
    expect(JSON.stringify(messages)).toContain('export function parse() {}');
    expect(messages.some((message) => 'tool_calls' in message || message.role === 'tool')).toBe(false);
    expect(String(messages.at(-1)?.content)).toContain('handoff note');
    expect(messages.at(-1)?.role).toBe('user');
  });

  it('Anthropic route, not streamed: one compaction item; the upstream got our instruction last and no tools', async () => {
    const response = await client.responses.create({ model: 'claude-model', input: [...conversation, { type: 'compaction_trigger' }], tools: [tool], store: false });
    expect(response.output).toHaveLength(1);
    expectSealed(response.output[0] as unknown as Record<string, unknown>);
    expect(response.usage).toMatchObject({ input_tokens: 120, output_tokens: 25 });
    const sent = claude.requests.at(-1)!.body;
    expect(sent.tools).toBeUndefined();
    const messages = sent.messages as Array<{ role: string; content: Array<{ type: string; text?: string }> }>;
    expect(messages.flatMap((message) => message.content).every((block) => block.type === 'text')).toBe(true);
    expect(messages.at(-1)?.content.at(-1)?.text).toContain('handoff note');
  });

  it('stored (store: true), the conversation keeps the item sealed: its input items show no summary, and a continuation opens it again', async () => {
    const item = (await compactOnChat()) as unknown as OpenAI.Responses.ResponseCompactionItemParam;
    const stored = await client.responses.create({ model: 'chat-model', input: [{ role: 'user', content: 'Port the parser to Rust.' }, item, { role: 'user', content: 'Go on.' }], store: true });
    const listed = await client.responses.inputItems.list(stored.id);
    const text = JSON.stringify(listed.data);
    expect(text).not.toContain(SUMMARY);
    expect(text).not.toContain('Summary of the conversation so far');
    expect(listed.data.map((entry) => entry.type)).toContain('compaction');
    expect(text).toContain(String((item as { encrypted_content: string }).encrypted_content));
    // Continued, the stored item is opened for the upstream like one sent in the body.
    await client.responses.create({ model: 'chat-model', previous_response_id: stored.id, input: 'And then?', store: false });
    expect(JSON.stringify(chat.requests.at(-1)!.body.messages)).toContain(SUMMARY);
  });

  it('the item sent back reaches the upstream as the summary in a user message; every model call is charged once at its usage', async () => {
    const fresh = await harness.newAccount('10');
    const own = harness.client(fresh.secret);
    const compacted = await own.responses.create({ model: 'chat-model', input: [...conversation, { type: 'compaction_trigger' }], tools: [tool], store: false });
    const item = compacted.output[0] as unknown as OpenAI.Responses.ResponseCompactionItemParam;
    await own.responses.create({ model: 'chat-model', input: [{ role: 'user', content: 'Port the parser to Rust.' }, item, { role: 'user', content: 'Go on.' }], store: false });
    const messages = chat.requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>;
    expect(messages.map((message) => message.role)).toEqual(['user', 'user', 'user']);
    expect(String(messages[1]?.content)).toContain('Summary of the conversation so far');
    expect(String(messages[1]?.content)).toContain(SUMMARY);

    // Anthropic too reads it.
    await own.responses.create({ model: 'claude-model', input: [item, { role: 'user', content: 'Go on.' }], stream: false, store: false });
    expect(JSON.stringify(claude.requests.at(-1)!.body.messages)).toContain(SUMMARY);

    const charges = await settledCharges(harness, fresh.accountId, '10');
    expect(charges.map((charge) => charge.amountNanos)).toEqual([CHAT_CHARGE, CHAT_CHARGE, CLAUDE_CHARGE]);
  });

  it('pass-through: the trigger goes upstream as sent and OpenAI\'s item comes back as is; our sealed item is replaced by its summary, the rest kept', async () => {
    const stream = await client.responses.create({ model: 'pass-model', input: [...conversation, { type: 'compaction_trigger' }], tools: [tool], stream: true, store: false });
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === 'response.completed') completed = event.response;
    expect(completed?.output).toEqual([OPENAI_ITEM]);
    const forwarded = passthrough.requests.at(-1)!.body;
    expect((forwarded.input as unknown[]).at(-1)).toEqual({ type: 'compaction_trigger' });
    expect(forwarded.tools).toEqual([tool]);

    const ours = await compactOnChat();
    const events = await client.responses.create({ model: 'pass-model', input: [OPENAI_ITEM, ours as never, { role: 'user', content: 'Go on.' }], stream: true, store: false });
    for await (const _event of events) void _event;
    const input = passthrough.requests.at(-1)!.body.input as Array<Record<string, unknown>>;
    expect(input[0]).toEqual(OPENAI_ITEM);
    expect(input[1]).toMatchObject({ type: 'message', role: 'user' });
    expect(JSON.stringify(input[1])).toContain(SUMMARY);
    expect(input[2]).toEqual({ role: 'user', content: 'Go on.' });
  });

  it('/v1/responses/compact on a translated route: the user messages, then one sealed item; on a pass-through: forwarded to the upstream\'s own', async () => {
    const compacted = await client.responses.compact({ model: 'chat-model', input: conversation, instructions: 'You are a coding agent.' });
    expect(compacted.object).toBe('response.compaction');
    expect(compacted.output).toHaveLength(2);
    expect(compacted.output[0]).toEqual(conversation[0]);
    expectSealed(compacted.output[1] as unknown as Record<string, unknown>);
    expect(compacted.usage).toMatchObject({ input_tokens: 200, output_tokens: 30 });
    const sent = chat.requests.at(-1)!.body;
    expect(sent.tools).toBeUndefined();
    expect(JSON.stringify(sent.messages)).toContain('handoff note');
    expect((sent.messages as Array<{ role: string; content: unknown }>)[0]).toEqual({ role: 'system', content: 'You are a coding agent.' });

    const before = passthrough.requests.length;
    const passed = await client.responses.compact({ model: 'pass-model', input: conversation, prompt_cache_key: 'k' });
    expect(passed).toMatchObject({ id: 'resp_cmp_up', object: 'response.compaction', output: [OPENAI_ITEM] });
    expect(passthrough.requests.length).toBe(before + 1);
    const forwarded = passthrough.requests.at(-1)!;
    expect(forwarded.path).toBe('/v1/responses/compact');
    expect(forwarded.body).toEqual({ model: 'gpt-up', input: conversation, prompt_cache_key: 'k' });
  });

  it('refuses a trigger that is not last, an altered or foreign-keyed sealed item, and OpenAI\'s item on a translated route', async () => {
    const refusal = async (body: Record<string, unknown>, path = '/v1/responses') => {
      const response = await harness.post(path, body, secret);
      expect(response.status).toBe(400);
      return ((await response.json()) as { error: Record<string, unknown> }).error;
    };
    expect(await refusal({ model: 'chat-model', input: [{ type: 'compaction_trigger' }, { role: 'user', content: 'hi' }] })).toMatchObject({
      type: 'invalid_request_error',
      param: 'input[0]',
    });
    const ours = await compactOnChat();
    const sealed = String(ours.encrypted_content);
    // The next-to-last character, always changed (the seal is random, so it may already be an 'A').
    const altered = `${sealed.slice(0, -2)}${sealed.at(-2) === 'A' ? 'B' : 'A'}${sealed.slice(-1)}`;
    expect(altered).not.toBe(sealed);
    expect(await refusal({ model: 'pass-model', input: [{ role: 'user', content: 'hi' }, { ...ours, encrypted_content: altered }] })).toMatchObject({
      param: 'input[1]',
      code: 'invalid_encrypted_content',
    });
    const elsewhere = Sealer.withRandomKey().seal('an injected summary', COMPACTION_SEAL_PURPOSE);
    expect(await refusal({ model: 'chat-model', input: [{ type: 'compaction', encrypted_content: elsewhere }] })).toMatchObject({ param: 'input[0]', code: 'invalid_encrypted_content' });
    const foreign = await refusal({ model: 'chat-model', input: [OPENAI_ITEM, { role: 'user', content: 'hi' }] });
    expect(foreign).toMatchObject({ type: 'invalid_request_error', param: 'input[0]', code: 'unsupported_value' });
    expect(String(foreign.message)).toContain('another service');
    expect(await refusal({ model: 'chat-model', input: [{ type: 'compaction' }] })).toMatchObject({ param: 'input[0].encrypted_content' });
    expect(await refusal({ model: 'chat-model', input: [OPENAI_ITEM] }, '/v1/responses/compact')).toMatchObject({ param: 'input[0]' });
    expect(await refusal({ model: 'chat-model', input: 'hi', stream: true }, '/v1/responses/compact')).toMatchObject({ param: 'stream' });
  });
});
