/**
 * The Codex CLI (`@openai/codex`, pinned in test/support/codex.ts) driving the real gateway: one
 * `codex exec` turn that runs a shell command and then answers must complete through a chat-only
 * OpenAI-compatible upstream and through an Anthropic upstream. Codex sends what a real coding
 * agent sends (streamed Responses requests with `store: false`, developer messages, item ids,
 * `include`, `prompt_cache_key`, `client_metadata`, function tools and the free-form `apply_patch`
 * custom tool) and resends the whole history on the second request, which must reach the upstream
 * translated, tool output included. A second turn has the model edit a file with `apply_patch`:
 * upstreams see it as a function of one string, and Codex must get a `custom_tool_call` back.
 *
 * The CLI is installed into .tollgate-cache/ when the suite runs, not as a dependency. Outside CI
 * the suite is skipped when it cannot be installed (no registry); in CI that is a failure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCodex } from '../support/codex.js';
import { startHarness, type Harness } from '../support/harness.js';
import { ANTHROPIC_TOOL_USE_ID, readAnthropicConversation, startAnthropicModelDouble } from './anthropic-model-double.js';
import { CHAT_CALL_ID, readChatConversation, startChatModelDouble } from './chat-model-double.js';
import type { ModelDouble } from './model-double-server.js';
import type { Conversation } from './model-script.js';
import { runCodexExec, type CodexExecResult } from './run-codex.js';
import { PATCH, PATCH_ANSWER, PATCH_FILE, PATCH_FILE_TEXT, patchCall } from './patch-call.js';
import { COMMAND_OUTPUT, FINAL_ANSWER, shellCall } from './shell-call.js';

const installation = await ensureCodex().then(
  (launcher) => ({ launcher, error: undefined }),
  (error: unknown) => ({ launcher: '', error }),
);
const inCi = process.env.CI === 'true';
if (installation.error !== undefined && !inCi) {
  console.info(`Codex end-to-end runs skipped: the Codex CLI could not be installed (${String(installation.error)}).`);
}

const CHAT_KEY = 'sk-chat-upstream-secret';
const ANTHROPIC_KEY = 'sk-ant-upstream-secret';
const PROMPT = 'Run `echo tollgate-ok` in the shell and tell me what it printed.';
const RUN_TIMEOUT_MS = 90_000;

/** One way to an upstream: the catalog model Codex asks for, and how to read what the upstream got. */
interface Route {
  label: string;
  model: string;
  upstream: () => ModelDouble;
  read: (body: Record<string, unknown>) => Conversation;
  /** The id the double gives its tool call. */
  callId: string;
}

describe.skipIf(installation.error !== undefined && !inCi)('codex exec through Tollgate', () => {
  let harness: Harness;
  let chatUpstream: ModelDouble;
  let anthropicUpstream: ModelDouble;
  let secret: string;

  const routes: Route[] = [
    { label: 'a chat-only OpenAI upstream', model: 'codex-via-chat', upstream: () => chatUpstream, read: readChatConversation, callId: CHAT_CALL_ID },
    { label: 'an Anthropic upstream', model: 'codex-via-anthropic', upstream: () => anthropicUpstream, read: readAnthropicConversation, callId: ANTHROPIC_TOOL_USE_ID },
  ];

  beforeAll(async () => {
    if (installation.error !== undefined) throw installation.error;
    chatUpstream = await startChatModelDouble(CHAT_KEY);
    anthropicUpstream = await startAnthropicModelDouble(ANTHROPIC_KEY);
    const prices = { input: '1', output: '4' };
    harness = await startHarness({
      catalog: {
        providers: [
          { name: 'chat-only', type: 'openai', base_url: chatUpstream.baseUrl, api_key_env: 'CHAT_UPSTREAM_KEY', api: 'chat' },
          { name: 'claude', type: 'anthropic', base_url: anthropicUpstream.baseUrl, api_key_env: 'ANTHROPIC_UPSTREAM_KEY' },
        ],
        models: [
          { id: 'codex-via-chat', prices, targets: [{ provider: 'chat-only', model: 'chat-upstream-model' }] },
          { id: 'codex-via-anthropic', prices, targets: [{ provider: 'claude', model: 'claude-upstream-model' }] },
        ],
      },
      env: { CHAT_UPSTREAM_KEY: CHAT_KEY, ANTHROPIC_UPSTREAM_KEY: ANTHROPIC_KEY },
    });
    ({ secret } = await harness.newAccount('10'));
  }, 30_000);

  afterAll(async () => {
    await harness?.close();
    await chatUpstream?.close();
    await anthropicUpstream?.close();
  });

  const exec = (model: string, prompt: string, readBack: string[] = []): Promise<CodexExecResult> =>
    runCodexExec({ launcher: installation.launcher, baseUrl: `${harness.baseUrl}/v1`, apiKey: secret, model, prompt, timeoutMs: RUN_TIMEOUT_MS, readBack });

  /** Everything needed to see why a run failed, in the assertion message. */
  const explain = (run: CodexExecResult, upstream: ModelDouble) =>
    `exit ${run.exitCode}${run.timedOut ? ' (timed out)' : ''}\n--- stderr (tail) ---\n${run.stderr.slice(-4000)}\n--- stdout ---\n${run.stdout.slice(-2000)}\n--- upstream requests: ${upstream.requests.length}`;

  for (const route of routes) {
    it(`completes a shell-command turn through ${route.label}`, async () => {
      const upstream = route.upstream();
      const before = upstream.requests.length;
      const run = await exec(route.model, PROMPT);
      expect(run.exitCode, explain(run, upstream)).toBe(0);
      const requests = upstream.requests.slice(before);
      expect(requests).toHaveLength(2);
      expect(requests.every((request) => request.body.stream === true)).toBe(true);
      const [first, second] = requests.map((request) => route.read(request.body));

      // Codex's developer messages (its instructions) reached the upstream as system text.
      expect(first!.instructions).toContain('Codex');
      expect(first!.userText).toContain(PROMPT);
      expect(first!.calls).toEqual([]);
      // The free-form apply_patch tool went up as a function taking one string (patchCall checks).
      expect(() => patchCall(first!.tools)).not.toThrow();

      // The second request resends the history: the call as the model made it, and the command's
      // real output joined to it by the call id.
      expect(second!.userText).toContain(PROMPT);
      const call = shellCall(first!.tools);
      expect(second!.calls).toEqual([{ id: route.callId, name: call.name, arguments: call.arguments }]);
      expect(second!.outputs).toHaveLength(1);
      expect(second!.outputs[0]!.callId).toBe(route.callId);
      expect(second!.outputs[0]!.text).toContain(COMMAND_OUTPUT);

      expect(run.lastMessage).toContain(FINAL_ANSWER);
      expect(run.stdout).toContain(FINAL_ANSWER);
    }, 120_000);

    it(`edits a file with the free-form apply_patch tool through ${route.label}`, async () => {
      const upstream = route.upstream();
      const before = upstream.requests.length;
      const run = await exec(route.model, `Create ${PATCH_FILE} saying "${PATCH_FILE_TEXT}".`, [PATCH_FILE]);
      expect(run.exitCode, explain(run, upstream)).toBe(0);
      // Codex applied the patch, so it got the call back as a custom_tool_call with the raw text.
      expect(run.files[PATCH_FILE]).toBe(`${PATCH_FILE_TEXT}\n`);
      const requests = upstream.requests.slice(before);
      expect(requests).toHaveLength(2);
      const second = route.read(requests[1]!.body);
      // Replayed as the function call the upstream made, with Codex's result joined to it.
      expect(second.calls).toEqual([{ id: route.callId, name: 'apply_patch', arguments: { input: PATCH } }]);
      expect(second.outputs).toHaveLength(1);
      expect(second.outputs[0]!.callId).toBe(route.callId);
      expect(second.outputs[0]!.text).toContain(PATCH_FILE);
      expect(run.lastMessage).toContain(PATCH_ANSWER);
    }, 120_000);
  }
});
