/**
 * The OpenAI Agents SDK (`@openai/agents`) with its defaults, through the real gateway, on every
 * route: a Responses upstream (pass-through), a chat-only upstream, Anthropic and Gemini (the
 * scripted upstream models of test/codex/). For its own gpt-5.x names the SDK sends
 * `reasoning: {effort: "none"}` by default, which OpenAI accepts and the contract's five efforts do
 * not include: the gateway takes it (and OpenAI's `minimal`) on every route and hands the upstream
 * its own terms for it (docs/wire-protocols.md §2.1, README "Reasoning effort"). `run()` with a
 * tool, streamed and not, completes; `minimal` reaches each upstream as its least thinking.
 */
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startHarness, type Harness } from '../support/harness.js';
import { startAnthropicModelDouble, readAnthropicConversation } from '../codex/anthropic-model-double.js';
import { readChatConversation, startChatModelDouble } from '../codex/chat-model-double.js';
import { readGeminiConversation, startGeminiModelDouble } from '../codex/gemini-model-double.js';
import type { ModelDouble } from '../codex/model-double-server.js';
import { SHELL_TASK, type Conversation } from '../codex/model-script.js';
import { readResponsesConversation, startResponsesModelDouble } from '../codex/responses-model-double.js';
import { COMMAND_OUTPUT, FINAL_ANSWER, SHELL_COMMAND } from '../codex/shell-call.js';

setTracingDisabled(true);

const KEY = 'sk-agents-upstream';
const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'];

interface Route {
  key: 'passthrough' | 'chat' | 'anthropic' | 'gemini';
  /** A name the SDK gives its gpt-5.6-luna defaults to (a dated snapshot of it). */
  model: string;
  read: (body: Record<string, unknown>) => Conversation;
  /** What the upstream must have been asked for, in its own terms, for `none` and `minimal`. */
  asked: { none: unknown; minimal: unknown };
}

const ROUTES: Route[] = [
  { key: 'passthrough', model: 'gpt-5.6-luna-2026-01-01', read: readResponsesConversation, asked: { none: 'none', minimal: 'minimal' } },
  { key: 'chat', model: 'gpt-5.6-luna-2026-01-02', read: readChatConversation, asked: { none: 'none', minimal: 'minimal' } },
  { key: 'anthropic', model: 'gpt-5.6-luna-2026-01-03', read: readAnthropicConversation, asked: { none: undefined, minimal: { type: 'enabled', budget_tokens: 1_024 } } },
  { key: 'gemini', model: 'gpt-5.6-luna-2026-01-04', read: readGeminiConversation, asked: { none: { thinkingBudget: 0 }, minimal: { thinkingBudget: 512, includeThoughts: true } } },
];

describe('the OpenAI Agents SDK with its defaults, on every route', () => {
  let harness: Harness;
  let secret: string;
  const doubles = new Map<Route['key'], ModelDouble>();

  beforeAll(async () => {
    doubles.set('passthrough', await startResponsesModelDouble(KEY));
    doubles.set('chat', await startChatModelDouble(KEY));
    doubles.set('anthropic', await startAnthropicModelDouble(KEY));
    doubles.set('gemini', await startGeminiModelDouble(KEY));
    const baseUrl = (key: Route['key']) => doubles.get(key)!.baseUrl;
    harness = await startHarness({
      catalog: {
        providers: [
          { name: 'passthrough', type: 'openai', base_url: baseUrl('passthrough'), api_key_env: 'UPSTREAM_KEY', api: 'responses' },
          { name: 'chat', type: 'openai', base_url: baseUrl('chat'), api_key_env: 'UPSTREAM_KEY', api: 'chat' },
          { name: 'anthropic', type: 'anthropic', base_url: baseUrl('anthropic'), api_key_env: 'UPSTREAM_KEY' },
          { name: 'gemini', type: 'gemini', base_url: baseUrl('gemini'), api_key_env: 'UPSTREAM_KEY' },
        ],
        models: [
          ...ROUTES.map((route) => ({ id: route.model, prices: { input: '1', output: '4' }, reasoning_efforts: EFFORTS, max_output_tokens: 8_192, targets: [{ provider: route.key, model: `${route.key}-upstream` }] })),
          { id: 'plain-model', prices: { input: '1', output: '4' }, max_output_tokens: 8_192, targets: [{ provider: 'chat', model: 'chat-upstream' }] },
        ],
      },
      env: { UPSTREAM_KEY: KEY },
    });
    ({ secret } = await harness.newAccount('100'));
  }, 60_000);

  afterAll(async () => {
    await harness?.close();
    for (const double of doubles.values()) await double.close();
  });

  // The SDK's own client (it bundles its own openai package), pointed at the gateway.
  const runner = () => new Runner({ modelProvider: new OpenAIProvider({ baseURL: `${harness.baseUrl}/v1`, apiKey: secret }) });
  const ran: string[] = [];
  const agentFor = (model: string) =>
    new Agent({
      name: 'Operator',
      instructions: 'You run shell commands for the user.',
      model,
      tools: [
        tool({
          name: 'exec_command',
          description: 'Runs a shell command and returns what it printed.',
          parameters: z.object({ cmd: z.string() }),
          execute: ({ cmd }) => {
            ran.push(cmd);
            return cmd === SHELL_COMMAND ? COMMAND_OUTPUT : 'command not found';
          },
        }),
      ],
    });

  let tagCount = 0;
  const tagged = () => `${SHELL_TASK} and tell me what it printed. [agents ${(tagCount += 1)}]`;
  const requestsOf = (route: Route, prompt: string) =>
    doubles
      .get(route.key)!
      .requests.map((request) => route.read(request.body))
      .filter((conversation) => conversation.userText.includes(prompt.slice(prompt.indexOf('[agents'))));

  for (const route of ROUTES) {
    for (const streamed of [false, true]) {
      it(`run() with a tool through ${route.key}, ${streamed ? 'streamed' : 'not streamed'}: effort none reaches the upstream in its terms`, async () => {
        const prompt = tagged();
        const before = ran.length;
        let finalOutput: unknown;
        if (streamed) {
          const result = await runner().run(agentFor(route.model), prompt, { stream: true });
          for await (const _event of result) {
            // Drained as an application reading the events would.
          }
          await result.completed;
          finalOutput = result.finalOutput;
        } else {
          finalOutput = (await runner().run(agentFor(route.model), prompt)).finalOutput;
        }
        expect(finalOutput).toBe(FINAL_ANSWER);
        expect(ran.slice(before)).toEqual([SHELL_COMMAND]);
        const turns = requestsOf(route, prompt);
        // The tool call, then the answer to its output.
        expect(turns).toHaveLength(2);
        expect(turns[1]!.outputs.map((output) => output.text)).toEqual([COMMAND_OUTPUT]);
        for (const turn of turns) expect(turn.reasoning).toEqual(route.asked.none);
      }, 60_000);
    }

    it(`takes OpenAI's minimal effort through ${route.key}, as the upstream's least thinking`, async () => {
      const prompt = `Say hello. [agents ${(tagCount += 1)}]`;
      const client = harness.client(secret);
      const stream = await client.responses.create({ model: route.model, input: [{ role: 'user', content: prompt }], reasoning: { effort: 'minimal' }, stream: true });
      let completed = false;
      for await (const event of stream) if (event.type === 'response.completed') completed = true;
      expect(completed).toBe(true);
      const turns = requestsOf(route, prompt);
      expect(turns).toHaveLength(1);
      expect(turns[0]!.reasoning).toEqual(route.asked.minimal);
    });
  }

  it("answers `none` on a model that does not reason without it, and refuses `minimal` there with the contract's message", async () => {
    const client = harness.client(secret);
    const prompt = `Say hello. [agents ${(tagCount += 1)}]`;
    const answered = await client.responses.create({ model: 'plain-model', input: [{ role: 'user', content: prompt }], reasoning: { effort: 'none' } });
    expect(answered.status).toBe('completed');
    const turns = requestsOf(ROUTES[1]!, prompt);
    expect(turns).toHaveLength(1);
    expect(turns[0]!.reasoning).toBeUndefined();
    const refused = await harness.post('/v1/responses', { model: 'plain-model', input: 'hi', reasoning: { effort: 'minimal' } }, secret);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      error: { message: "Reasoning effort is not supported with the model 'plain-model'.", type: 'invalid_request_error', param: 'reasoning.effort', code: 'unsupported_value' },
    });
    // A value OpenAI does not know is still the decoder's 400.
    const unknown = await harness.post('/v1/responses', { model: ROUTES[0]!.model, input: 'hi', reasoning: { effort: 'huge' } }, secret);
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { param: string } }).error.param).toBe('reasoning.effort');
  });
});
