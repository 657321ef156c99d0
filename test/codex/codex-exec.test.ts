/**
 * The Codex CLI (`@openai/codex`, pinned in test/support/codex.ts) with its stock configuration
 * (a provider block and nothing else, as the README shows) driving the real gateway through every
 * provider type: a Responses upstream (pass-through), a chat-only OpenAI-compatible upstream,
 * Anthropic, Gemini, Azure OpenAI (its `/openai/v1/` address, Responses passed through, the
 * resource's key in `api-key`), Vertex AI's Gemini (`publisher: google`: Gemini's body at the
 * project's publisher-model address, with a bearer token the service account's token endpoint
 * issued for the account's JWT) and Claude on AWS Bedrock (ConverseStream: every request
 * SigV4-signed, the answer in AWS's event stream). Two catalog ids per route, one of each family
 * Codex treats differently:
 * - `model-5.6-…`: Codex has no metadata for it and sends its default tools: `exec_command` and
 *   other functions, a `namespace` (multi-agent) and the hosted `web_search`;
 * - `gpt-5.6-sol-…`: Codex's bundled metadata applies ("code mode"): no `tools` field, but an
 *   `additional_tools` input item holding two namespaces, one with the free-form `exec` tool.
 * Each pair runs a plain turn, a shell command and a file edit with Codex's patch format; the first
 * family also a turn at each reasoning effort (the upstream gets the effort in its own terms, and
 * Codex gets the upstream's reasoning back as a reasoning item). Each route also runs Codex in its
 * simplest configuration (one `openai_base_url` line: the built-in OpenAI provider, over the
 * Responses WebSocket): a shell command, and a session that compacts (remote compaction). Every run is its own `codex exec`; they run
 * concurrently against one gateway, and a tag in each prompt tells their requests apart.
 *
 * The CLI is installed into .tollgate-cache/ when the suite runs, not as a dependency. Outside CI
 * the suite is skipped when it cannot be installed (no registry); in CI that is a failure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THINKING_BUDGETS as ANTHROPIC_BUDGETS } from '../../src/providers/anthropic/messages-request.js';
import { THINKING_BUDGETS as GEMINI_BUDGETS } from '../../src/providers/gemini/thinking-budget.js';
import { ensureCodex } from '../support/codex.js';
import { startHarness, type Harness } from '../support/harness.js';
import { ANTHROPIC_TOOL_USE_ID, readAnthropicConversation, startAnthropicModelDouble } from './anthropic-model-double.js';
import { CHAT_CALL_ID, readChatConversation, startChatModelDouble } from './chat-model-double.js';
import { GEMINI_CALL_ID, readGeminiConversation, startGeminiModelDouble } from './gemini-model-double.js';
import type { ModelDouble, RecordedRequest } from './model-double-server.js';
import { AFTER_COMPACTION_ANSWER, asksToCompact, PLAIN_ANSWER, SHELL_TASK, THINKING, type Conversation } from './model-script.js';
import { settledCharges } from '../support/charges.js';
import { PATCH_ANSWER, PATCH_FILE, PATCH_FILE_TEXT } from './patch-call.js';
import { azureAddress } from './model-double-server.js';
import { startVertexAccount, vertexAddress, vertexProvider, type VertexAccount } from './vertex-address.js';
import { bedrockAddress } from './bedrock-address.js';
import { CONVERSE_TOOL_USE_ID, readConverseConversation, startConverseModelDouble } from './converse-model-double.js';
import { readResponsesConversation, RESPONSES_CALL_ID, startResponsesModelDouble } from './responses-model-double.js';
import { runCodexExec, type CodexConfigForm, type CodexExecResult } from './run-codex.js';
import { COMMAND_OUTPUT, FINAL_ANSWER, isRecord } from './shell-call.js';

const installation = await ensureCodex().then(
  (launcher) => ({ launcher, error: undefined }),
  (error: unknown) => ({ launcher: '', error }),
);
const inCi = process.env.CI === 'true';
if (installation.error !== undefined && !inCi) {
  console.info(`Codex end-to-end runs skipped: the Codex CLI could not be installed (${String(installation.error)}).`);
}

const KEYS = { responses: 'sk-responses-upstream', chat: 'sk-chat-upstream', anthropic: 'sk-ant-upstream', gemini: 'gemini-upstream-key', azure: 'azure-upstream-key' };
const BEDROCK = { region: 'eu-west-1', accessKeyId: 'AKIACODEXEXEC0000001', secretAccessKey: 'codex/bedrock/secret/3e4f' };
const RUN_TIMEOUT_MS = 90_000;
/** Large enough that no effort's thinking budget is cut (the largest is Anthropic's 65536). */
const MAX_OUTPUT_TOKENS = 100_000;
const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;
type Effort = (typeof EFFORTS)[number];

/** One way to an upstream. */
interface Route {
  key: 'passthrough' | 'chat' | 'anthropic' | 'gemini' | 'azure' | 'vertex' | 'bedrock';
  label: string;
  /** The upstream speaks Responses: Codex's request goes through as sent. */
  passthrough: boolean;
  upstream: () => ModelDouble;
  read: (body: Record<string, unknown>) => Conversation;
  /** The id the double gives its tool call. */
  callId: string;
  /** What the upstream must have been asked for, for an effort (in its own terms). */
  reasoningFor: (effort: Effort) => unknown;
  /** The model the catalog's targets name upstream (`<key>-upstream-model` when not said). */
  upstreamModel?: string;
}

interface Family {
  label: string;
  model: (route: Route) => string;
  codeMode: boolean;
}

const FAMILIES: Family[] = [
  { label: 'model-5.6 (no Codex metadata)', model: (route) => `model-5.6-${route.key}`, codeMode: false },
  { label: 'gpt-5.6 (code mode, additional_tools)', model: (route) => `gpt-5.6-sol-${route.key}`, codeMode: true },
];

let tagCount = 0;
/** A prompt with a tag only its run's requests carry. */
const tagged = (text: string): { prompt: string; tag: string } => {
  tagCount += 1;
  const tag = `[run ${tagCount}]`;
  return { prompt: `${text} ${tag}`, tag };
};

describe.skipIf(installation.error !== undefined && !inCi)('codex exec with its stock config through Tollgate', () => {
  let harness: Harness;
  const doubles: Partial<Record<Route['key'], ModelDouble>> = {};
  let vertexAccount: VertexAccount | undefined;
  let secret: string;
  /** WebSocket upgrades the gateway's server has seen (Codex's simplest configuration opens one per run). */
  let upgrades = 0;

  const double = (key: Route['key']) => (): ModelDouble => {
    const found = doubles[key];
    if (found === undefined) throw new Error(`no ${key} double`);
    return found;
  };
  const routes: Route[] = [
    {
      key: 'passthrough',
      label: 'a Responses upstream (pass-through)',
      passthrough: true,
      upstream: double('passthrough'),
      read: readResponsesConversation,
      callId: RESPONSES_CALL_ID,
      reasoningFor: (effort) => effort,
    },
    { key: 'chat', label: 'a chat-only upstream', passthrough: false, upstream: double('chat'), read: readChatConversation, callId: CHAT_CALL_ID, reasoningFor: (effort) => effort },
    {
      key: 'anthropic',
      label: 'an Anthropic upstream',
      passthrough: false,
      upstream: double('anthropic'),
      read: readAnthropicConversation,
      callId: ANTHROPIC_TOOL_USE_ID,
      reasoningFor: (effort) => ({ type: 'enabled', budget_tokens: ANTHROPIC_BUDGETS[effort] }),
    },
    {
      key: 'gemini',
      label: 'a Gemini upstream',
      passthrough: false,
      upstream: double('gemini'),
      read: readGeminiConversation,
      callId: GEMINI_CALL_ID,
      reasoningFor: (effort) => ({ thinkingBudget: GEMINI_BUDGETS[effort], includeThoughts: true }),
    },
    {
      key: 'azure',
      label: 'Azure OpenAI (v1 address, Responses passed through)',
      passthrough: true,
      upstream: double('azure'),
      read: readResponsesConversation,
      callId: RESPONSES_CALL_ID,
      reasoningFor: (effort) => effort,
    },
    {
      key: 'vertex',
      label: "Vertex AI's Gemini (publisher google, a service account's token)",
      passthrough: false,
      upstream: double('vertex'),
      read: readGeminiConversation,
      callId: GEMINI_CALL_ID,
      reasoningFor: (effort) => ({ thinkingBudget: GEMINI_BUDGETS[effort], includeThoughts: true }),
    },
    {
      key: 'bedrock',
      label: 'Claude on AWS Bedrock (ConverseStream)',
      passthrough: false,
      upstream: double('bedrock'),
      read: readConverseConversation,
      callId: CONVERSE_TOOL_USE_ID,
      // Converse gets Claude's thinking, with Anthropic's budgets, for a Claude model id only.
      reasoningFor: (effort) => ({ type: 'enabled', budget_tokens: ANTHROPIC_BUDGETS[effort] }),
      upstreamModel: 'anthropic.claude-sonnet-4-5-20250929-v1:0',
    },
  ];

  beforeAll(async () => {
    if (installation.error !== undefined) throw installation.error;
    doubles.passthrough = await startResponsesModelDouble(KEYS.responses);
    doubles.chat = await startChatModelDouble(KEYS.chat);
    doubles.anthropic = await startAnthropicModelDouble(KEYS.anthropic);
    doubles.gemini = await startGeminiModelDouble(KEYS.gemini);
    doubles.azure = await startResponsesModelDouble(KEYS.azure, azureAddress(KEYS.azure, 'responses'));
    vertexAccount = await startVertexAccount();
    doubles.vertex = await startGeminiModelDouble('', vertexAddress(vertexAccount.tokens, 'google', 'vertex-upstream-model', 'streamGenerateContent?alt=sse'));
    doubles.bedrock = await startConverseModelDouble(bedrockAddress(BEDROCK, 'converse'));
    const providerOf: Record<Route['key'], string> = { passthrough: 'responses', chat: 'chat-only', anthropic: 'claude', gemini: 'google', azure: 'azure', vertex: 'vertex-gemini', bedrock: 'bedrock' };
    const models = routes.flatMap((route) =>
      FAMILIES.map((family) => ({
        id: family.model(route),
        prices: { input: '1', output: '4' },
        reasoning_efforts: [...EFFORTS],
        max_output_tokens: MAX_OUTPUT_TOKENS,
        targets: [{ provider: providerOf[route.key], model: route.upstreamModel ?? `${route.key}-upstream-model` }],
      })),
    );
    harness = await startHarness({
      catalog: {
        providers: [
          { name: 'responses', type: 'openai', base_url: doubles.passthrough.baseUrl, api_key_env: 'RESPONSES_UPSTREAM_KEY', api: 'responses' },
          { name: 'chat-only', type: 'openai', base_url: doubles.chat.baseUrl, api_key_env: 'CHAT_UPSTREAM_KEY', api: 'chat' },
          { name: 'claude', type: 'anthropic', base_url: doubles.anthropic.baseUrl, api_key_env: 'ANTHROPIC_UPSTREAM_KEY' },
          { name: 'google', type: 'gemini', base_url: doubles.gemini.baseUrl, api_key_env: 'GEMINI_UPSTREAM_KEY' },
          { name: 'azure', type: 'azure', endpoint: doubles.azure.origin, url_form: 'v1', api: 'responses', api_key_env: 'AZURE_UPSTREAM_KEY' },
          vertexProvider('vertex-gemini', doubles.vertex.origin, vertexAccount.account, 'google'),
          { name: 'bedrock', type: 'bedrock', region: BEDROCK.region, endpoint: doubles.bedrock.origin, api: 'converse', credentials: { access_key_id_env: 'BEDROCK_KEY_ID', secret_access_key_env: 'BEDROCK_SECRET' } },
        ],
        models,
      },
      env: { RESPONSES_UPSTREAM_KEY: KEYS.responses, CHAT_UPSTREAM_KEY: KEYS.chat, ANTHROPIC_UPSTREAM_KEY: KEYS.anthropic, GEMINI_UPSTREAM_KEY: KEYS.gemini, AZURE_UPSTREAM_KEY: KEYS.azure, BEDROCK_KEY_ID: BEDROCK.accessKeyId, BEDROCK_SECRET: BEDROCK.secretAccessKey },
    });
    ({ secret } = await harness.newAccount('1000'));
    harness.gateway.app.server.on('upgrade', () => (upgrades += 1));
  }, 60_000);

  afterAll(async () => {
    await harness?.close();
    for (const upstream of Object.values(doubles)) await upstream.close();
    await vertexAccount?.close();
  });

  const exec = (model: string, prompt: string, options: { effort?: Effort; readBack?: string[]; config?: CodexConfigForm; apiKey?: string; extraConfig?: string[] } = {}): Promise<CodexExecResult> =>
    runCodexExec({ launcher: installation.launcher, baseUrl: `${harness.baseUrl}/v1`, apiKey: secret, model, prompt, timeoutMs: RUN_TIMEOUT_MS, ...options });

  /** The requests of one run, in order, read as the model saw them. */
  const requestsOf = (route: Route, tag: string): Array<{ request: RecordedRequest; conversation: Conversation }> =>
    route
      .upstream()
      .requests.map((request) => ({ request, conversation: route.read(request.body) }))
      .filter(({ conversation }) => conversation.userText.includes(tag));

  /** Everything needed to see why a run failed, in the assertion message. */
  const explain = (run: CodexExecResult) =>
    `exit ${run.exitCode}${run.timedOut ? ' (timed out)' : ''}\n--- stderr (tail) ---\n${run.stderr.slice(-3000)}\n--- stdout (tail) ---\n${run.stdout.slice(-3000)}`;

  const warnings = (run: CodexExecResult): string[] => run.items.filter((item) => item.type === 'error').map((item) => String(item.message));

  for (const route of routes) {
    for (const family of FAMILIES) {
      const model = family.model(route);

      describe.concurrent(`${family.label} through ${route.label}`, () => {
        it('answers a plain turn, with Codex default tools reaching the upstream as it can take them', async () => {
          const { prompt, tag } = tagged('Say hello.');
          const run = await exec(model, prompt);
          expect(run.exitCode, explain(run)).toBe(0);
          expect(run.lastMessage).toContain(PLAIN_ANSWER);
          const requests = requestsOf(route, tag);
          expect(requests).toHaveLength(1);
          const body = requests[0]!.request.body;
          const names = requests[0]!.conversation.tools.map((tool) => (tool.namespace === undefined ? tool.name : `${tool.namespace}.${tool.name}`));
          expect(requests[0]!.conversation.instructions).toContain('Codex');

          if (route.passthrough) {
            // Forwarded as Codex sent them: hosted tools, namespaces, the additional_tools item.
            if (family.codeMode) {
              expect(Array.isArray(body.input) && body.input.some((item) => isRecord(item) && item.type === 'additional_tools')).toBe(true);
              expect(names).toContain('functions.exec');
            } else {
              expect(Array.isArray(body.tools) && body.tools.some((tool) => isRecord(tool) && tool.type === 'web_search')).toBe(true);
              expect(Array.isArray(body.tools) && body.tools.some((tool) => isRecord(tool) && tool.type === 'namespace')).toBe(true);
            }
          } else {
            // Namespaces flattened into functions; hosted tools dropped.
            if (family.codeMode) expect(names).toEqual(expect.arrayContaining(['functions__exec', 'collaboration__spawn_agent']));
            else expect(names.some((name) => name.startsWith('multi_agent_v1__'))).toBe(true);
            expect(JSON.stringify(body)).not.toContain('"web_search"');
          }
          // Codex reads model metadata from its own catalog only; for its own model names it has some.
          const missingMetadata = warnings(run).some((warning) => warning.includes('Model metadata'));
          expect(missingMetadata).toBe(!family.codeMode);
        }, 120_000);

        // The efforts reach the upstream the same way for both families: one family shows them.
        for (const effort of family.codeMode ? [] : EFFORTS) {
          it(`runs a turn at reasoning effort ${effort}, and Codex gets the reasoning back`, async () => {
            const { prompt, tag } = tagged('Say hello after some thought.');
            const run = await exec(model, prompt, { effort });
            expect(run.exitCode, explain(run)).toBe(0);
            expect(run.lastMessage).toContain(PLAIN_ANSWER);
            const requests = requestsOf(route, tag);
            expect(requests).toHaveLength(1);
            expect(requests[0]!.conversation.reasoning).toEqual(route.reasoningFor(effort));
            expect(run.items.filter((item) => item.type === 'reasoning').map((item) => item.text)).toEqual([THINKING]);
          }, 120_000);
        }

        it('runs a shell command and answers with its output', async () => {
          const { prompt, tag } = tagged(`${SHELL_TASK} and tell me what it printed.`);
          const run = await exec(model, prompt);
          expect(run.exitCode, explain(run)).toBe(0);
          expect(run.lastMessage).toContain(FINAL_ANSWER);
          const requests = requestsOf(route, tag);
          expect(requests).toHaveLength(2);
          const [first, second] = requests.map(({ conversation }) => conversation);
          expect(first!.calls).toEqual([]);
          // The history comes back with the call as the model made it (name, and namespace on
          // pass-through) and the command's real output joined to it by the call id.
          expect(second!.calls).toHaveLength(1);
          const call = second!.calls[0]!;
          if ((route.key !== 'gemini' && route.key !== 'vertex') || call.id !== undefined) expect(call.id).toBe(route.callId);
          if (family.codeMode) expect(route.passthrough ? [call.namespace, call.name] : [call.name]).toEqual(route.passthrough ? ['functions', 'exec'] : ['functions__exec']);
          else expect(call.name).toBe('exec_command');
          expect(second!.outputs).toHaveLength(1);
          expect(second!.outputs[0]!.text).toContain(COMMAND_OUTPUT);
        }, 120_000);

        it('edits a file with the patch format', async () => {
          const { prompt, tag } = tagged(`Create ${PATCH_FILE} saying "${PATCH_FILE_TEXT}".`);
          const run = await exec(model, prompt, { readBack: [PATCH_FILE] });
          expect(run.exitCode, explain(run)).toBe(0);
          expect(run.files[PATCH_FILE], explain(run)).toBe(`${PATCH_FILE_TEXT}\n`);
          expect(run.lastMessage).toContain(PATCH_ANSWER);
          const requests = requestsOf(route, tag);
          expect(requests).toHaveLength(2);
          expect(requests[1]!.conversation.outputs).toHaveLength(1);
        }, 120_000);
      });
    }

    // The simplest configuration: one `openai_base_url` line. Codex's built-in OpenAI provider
    // opens the Responses WebSocket first and continues each turn with `previous_response_id` and
    // only the new items; the upstream must still get the whole conversation.
    describe.concurrent(`the one-line openai_base_url config through ${route.label} (the Responses WebSocket)`, () => {
      const model = FAMILIES[1]!.model(route);

      it('runs a shell command over the socket, with no WebSocket error and no fallback', async () => {
        const { prompt, tag } = tagged(`${SHELL_TASK} and tell me what it printed.`);
        const upgradesBefore = upgrades;
        const run = await exec(model, prompt, { config: 'base-url' });
        expect(run.exitCode, explain(run)).toBe(0);
        expect(run.lastMessage).toContain(FINAL_ANSWER);
        expect(upgrades).toBeGreaterThan(upgradesBefore);
        expect(`${run.stderr}\n${warnings(run).join('\n')}`).not.toMatch(/WebSocket|Falling back|Reconnecting/i);
        const requests = requestsOf(route, tag);
        expect(requests).toHaveLength(2);
        // The second turn came as the call's output alone; the upstream read it after the call.
        const second = requests[1]!.conversation;
        expect(second.calls).toHaveLength(1);
        expect(second.outputs[0]!.text).toContain(COMMAND_OUTPUT);
        expect(second.userText).toContain(tag);
      }, 120_000);

      it('compacts when the context fills (remote compaction, on the socket), and the turn after answers from the summary', async () => {
        const { prompt, tag } = tagged(`${SHELL_TASK} and tell me what it printed.`);
        const account = await harness.newAccount('10');
        // Every upstream answer reports 920 tokens, over this limit: Codex compacts before the follow-up.
        const run = await exec(model, prompt, { config: 'base-url', apiKey: account.secret, extraConfig: ['model_auto_compact_token_limit = 500'] });
        expect(run.exitCode, explain(run)).toBe(0);
        expect(run.lastMessage, explain(run)).toContain(AFTER_COMPACTION_ANSWER);
        const requests = requestsOf(route, tag);
        // The shell call, the compaction, and the answer from the compacted history.
        expect(requests.map(({ conversation }) => (asksToCompact(conversation) ? 'compact' : conversation.userText.includes('[compacted-history]') ? 'after' : 'turn'))).toEqual(['turn', 'compact', 'after']);
        const [, compaction, after] = requests.map(({ request }) => request.body);
        if (route.passthrough) {
          // OpenAI compacts itself: the trigger went up as Codex sent it.
          expect((compaction!.input as Array<{ type?: string }>).at(-1)?.type).toBe('compaction_trigger');
        } else {
          // The gateway compacted with the routed model: no tools, and the history written out.
          expect(requests[1]!.conversation.tools).toEqual([]);
          expect(JSON.stringify(after)).not.toContain('tg1.');
        }
        // The history the summary replaced is gone from the request after it.
        expect(requests[2]!.conversation.outputs).toEqual([]);
        // One charge per model call, each the upstream's usage at the catalog's prices ($1 and $4 per
        // million): 900 tokens in, 20 out, and Gemini's 6 thinking tokens on top when it thought.
        const thoughts = (conversation: Conversation) => ((route.key === 'gemini' || route.key === 'vertex') && conversation.reasoning !== undefined && !asksToCompact(conversation) ? 6n : 0n);
        const charges = await settledCharges(harness, account.accountId, '10');
        expect(charges.map((charge) => charge.amountNanos)).toEqual(requests.map(({ conversation }) => 900n * 1_000n + (20n + thoughts(conversation)) * 4_000n));
      }, 120_000);
    });
  }
});
