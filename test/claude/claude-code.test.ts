/**
 * The Claude Code CLI (`@anthropic-ai/claude-code`, pinned in test/support/claude-code.ts) driving
 * the real gateway through `POST /v1/messages`: a plain answer, a thinking turn, a Bash tool turn
 * and a file edit (Read, then Edit), through an Anthropic upstream (pass-through: the client's body
 * and betas reach the upstream as sent), through a chat-only OpenAI upstream (translated), through
 * an Azure OpenAI chat deployment (translated, the resource's key in `api-key`), through Vertex
 * AI's Claude (`publisher: anthropic`, passed through at the model's `:streamRawPredict` with no
 * `model` in the body, `anthropic_version: vertex-2023-10-16`, the betas still in `anthropic-beta`,
 * and a bearer token the service account's token endpoint issued for the account's JWT) and
 * through Claude on AWS Bedrock's InvokeModelWithResponseStream (pass-through: the Messages body
 * without `model`, betas in `anthropic_beta`, every request SigV4-signed, the answer in AWS's
 * event stream).
 * Claude Code sends what it sends to Anthropic: `?beta=true`, `anthropic-beta` with its betas,
 * adaptive thinking with `output_config.effort`, `cache_control`, `context_management`, a
 * mid-conversation `system` message, a deferred tool, and a `HEAD /api/hello` probe first.
 * Refusals (401, 403, 429, 503) reach Claude Code's user with the spec's message. Afterwards each
 * account's ledger must equal what the upstream reported, priced, to the nano-USD.
 *
 * The CLI is installed into .tollgate-cache/ when the suite runs, not as a dependency. Outside CI
 * the suite is skipped when it cannot be installed (no registry); in CI that is a failure.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureClaudeCode } from '../support/claude-code.js';
import { startHarness, type Harness } from '../support/harness.js';
import { readAnthropicConversation } from '../codex/anthropic-model-double.js';
import { readChatConversation } from '../codex/chat-model-double.js';
import type { Conversation } from '../codex/model-script.js';
import * as script from './claude-script.js';
import { azureAddress } from '../codex/model-double-server.js';
import { startVertexAccount, vertexAddress, vertexProvider, type VertexAccount } from '../codex/vertex-address.js';
import { bedrockAddress } from '../codex/bedrock-address.js';
import { startAnthropicClaudeDouble, startChatClaudeDouble, type ReportedUsage, type ScriptedDouble } from './claude-doubles.js';
import { makeWorkspace, readWorkspaceFile, runClaude, type ClaudeRunResult } from './run-claude.js';

const installation = await ensureClaudeCode().then(
  (binary) => ({ binary, error: undefined }),
  (error: unknown) => ({ binary: '', error }),
);
const inCi = process.env.CI === 'true';
if (installation.error !== undefined && !inCi) {
  console.info(`Claude Code end-to-end runs skipped: the CLI could not be installed (${String(installation.error)}).`);
}

const CHAT_KEY = 'sk-chat-upstream-secret';
const ANTHROPIC_KEY = 'sk-ant-upstream-secret';
const AZURE_KEY = 'azure-upstream-secret';
const AZURE_DEPLOYMENT = 'claude-code-chat';
/** Vertex names Claude's versions with an `@`, which stays as it is in the address. */
const VERTEX_CLAUDE = 'claude-sonnet-4-5@20250929';
const BEDROCK = { region: 'eu-west-1', accessKeyId: 'AKIACLAUDECODE000001', secretAccessKey: 'claude-code/bedrock/secret/7c6d' };
const BEDROCK_MODEL = 'anthropic.claude-sonnet-4-20250514-v1:0';
const RUN_TIMEOUT_MS = 90_000;
/** USD per 1M tokens; whole nano-USD per token, so the expected bill needs no rounding. */
const PRICES = { input: '3', cached_input: '0.3', cache_write: '3.75', output: '15' };
const NANOS_PER_TOKEN = { input: 3_000n, cachedInput: 300n, cacheWrite: 3_750n, output: 15_000n };

interface Route {
  label: string;
  model: string;
  upstream: () => ScriptedDouble;
  read: (body: Record<string, unknown>) => Conversation;
  keyAs: 'api-key' | 'bearer';
  /** The model the upstream's body names (none on Vertex, whose address names it). */
  upstreamModel: string | undefined;
  /** The upstream speaks Messages: the client's body and betas go through as sent. */
  passthrough: boolean;
  /** Pass-through: the body fields the gateway sets for this upstream, and the headers it is called with. */
  dressing?: () => { fields: Record<string, unknown>; headers: Record<string, string | undefined> };
  /** Messages on Bedrock's InvokeModel: the model in the path, betas in the body, SigV4. */
  bedrock?: true;
}

describe.skipIf(installation.error !== undefined && !inCi)('claude -p through Tollgate', () => {
  let harness: Harness;
  let anthropicUpstream: ScriptedDouble;
  let chatUpstream: ScriptedDouble;
  let azureUpstream: ScriptedDouble;
  let vertexUpstream: ScriptedDouble;
  let vertexAccount: VertexAccount | undefined;
  let bedrockUpstream: ScriptedDouble;
  let workspace = '';
  const accounts = new Map<string, { accountId: string; secret: string }>();

  const routes: Route[] = [
    {
      label: 'an Anthropic upstream (pass-through)',
      model: 'claude-via-anthropic',
      upstream: () => anthropicUpstream,
      read: readAnthropicConversation,
      keyAs: 'api-key',
      upstreamModel: 'claude-upstream-model',
      passthrough: true,
      dressing: () => ({ fields: { service_tier: 'standard_only', anthropic_version: undefined }, headers: { 'x-api-key': ANTHROPIC_KEY, authorization: undefined } }),
    },
    { label: 'a chat-only OpenAI upstream', model: 'claude-via-chat', upstream: () => chatUpstream, read: readChatConversation, keyAs: 'bearer', upstreamModel: 'chat-upstream-model', passthrough: false },
    { label: 'an Azure OpenAI chat deployment', model: 'claude-via-azure', upstream: () => azureUpstream, read: readChatConversation, keyAs: 'api-key', upstreamModel: AZURE_DEPLOYMENT, passthrough: false },
    {
      label: "Vertex AI's Claude (publisher anthropic, pass-through)",
      model: 'claude-via-vertex',
      upstream: () => vertexUpstream,
      read: readAnthropicConversation,
      keyAs: 'api-key',
      upstreamModel: undefined,
      passthrough: true,
      // Vertex sells no Anthropic service tier; the one token fetched for the key file is reused.
      dressing: () => ({
        fields: { service_tier: undefined, anthropic_version: 'vertex-2023-10-16' },
        headers: { authorization: `Bearer ${[...vertexAccount!.tokens.issued.keys()].join(' ')}`, 'x-api-key': undefined },
      }),
    },
    { label: 'Claude on AWS Bedrock (InvokeModel, pass-through)', model: 'claude-via-bedrock', upstream: () => bedrockUpstream, read: readAnthropicConversation, keyAs: 'api-key', upstreamModel: BEDROCK_MODEL, passthrough: true, bedrock: true },
  ];

  beforeAll(async () => {
    if (installation.error !== undefined) throw installation.error;
    anthropicUpstream = await startAnthropicClaudeDouble(ANTHROPIC_KEY, () => workspace);
    chatUpstream = await startChatClaudeDouble(CHAT_KEY, () => workspace);
    azureUpstream = await startChatClaudeDouble(AZURE_KEY, () => workspace, azureAddress(AZURE_KEY, 'chat/completions', AZURE_DEPLOYMENT));
    vertexAccount = await startVertexAccount();
    vertexUpstream = await startAnthropicClaudeDouble('', () => workspace, vertexAddress(vertexAccount.tokens, 'anthropic', VERTEX_CLAUDE, 'streamRawPredict'));
    // No API key: the Bedrock address checks each request's SigV4 signature instead.
    bedrockUpstream = await startAnthropicClaudeDouble('', () => workspace, bedrockAddress(BEDROCK, 'invoke'));
    const efforts = { reasoning_efforts: ['low', 'medium', 'high', 'xhigh', 'max'], max_output_tokens: 16_384 };
    harness = await startHarness({
      catalog: {
        providers: [
          { name: 'chat-only', type: 'openai', base_url: chatUpstream.baseUrl, api_key_env: 'CHAT_UPSTREAM_KEY', api: 'chat' },
          { name: 'claude', type: 'anthropic', base_url: anthropicUpstream.baseUrl, api_key_env: 'ANTHROPIC_UPSTREAM_KEY' },
          { name: 'azure', type: 'azure', endpoint: azureUpstream.origin, url_form: 'deployments', api_version: '2024-10-21', api: 'chat', api_key_env: 'AZURE_UPSTREAM_KEY' },
          vertexProvider('vertex-claude', vertexUpstream.origin, vertexAccount.account, 'anthropic'),
          { name: 'bedrock', type: 'bedrock', region: BEDROCK.region, endpoint: bedrockUpstream.origin, api: 'invoke', credentials: { access_key_id_env: 'BEDROCK_KEY_ID', secret_access_key_env: 'BEDROCK_SECRET' } },
        ],
        models: [
          { id: 'claude-via-chat', prices: PRICES, ...efforts, targets: [{ provider: 'chat-only', model: 'chat-upstream-model' }] },
          { id: 'claude-via-anthropic', prices: PRICES, ...efforts, targets: [{ provider: 'claude', model: 'claude-upstream-model' }] },
          { id: 'claude-via-azure', prices: PRICES, ...efforts, targets: [{ provider: 'azure', model: AZURE_DEPLOYMENT }] },
          { id: 'claude-via-vertex', prices: PRICES, ...efforts, targets: [{ provider: 'vertex-claude', model: VERTEX_CLAUDE }] },
          { id: 'claude-via-bedrock', prices: PRICES, ...efforts, targets: [{ provider: 'bedrock', model: BEDROCK_MODEL }] },
        ],
      },
      env: { CHAT_UPSTREAM_KEY: CHAT_KEY, ANTHROPIC_UPSTREAM_KEY: ANTHROPIC_KEY, AZURE_UPSTREAM_KEY: AZURE_KEY, BEDROCK_KEY_ID: BEDROCK.accessKeyId, BEDROCK_SECRET: BEDROCK.secretAccessKey },
    });
    for (const route of routes) accounts.set(route.model, await harness.newAccount('10'));
  }, 30_000);

  afterAll(async () => {
    await harness?.close();
    await anthropicUpstream?.close();
    await chatUpstream?.close();
    await azureUpstream?.close();
    await vertexUpstream?.close();
    await vertexAccount?.close();
    await bedrockUpstream?.close();
  });

  const run = async (route: Route, prompt: string, files: Record<string, string> = {}): Promise<{ run: ClaudeRunResult; requests: Array<Record<string, unknown>>; workspace: string }> => {
    const upstream = route.upstream();
    const before = upstream.requests.length;
    workspace = makeWorkspace(files);
    const account = accounts.get(route.model)!;
    const result = await runClaude({ binary: installation.binary, baseUrl: harness.baseUrl, apiKey: account.secret, keyAs: route.keyAs, model: route.model, prompt, timeoutMs: RUN_TIMEOUT_MS, workspace });
    return { run: result, requests: upstream.requests.slice(before).map((request) => request.body), workspace };
  };

  const explain = (result: ClaudeRunResult, upstream: ScriptedDouble) =>
    `exit ${result.exitCode}${result.timedOut ? ' (timed out)' : ''}\n--- stderr ---\n${result.stderr.slice(-3000)}\n--- stdout ---\n${result.stdout.slice(-3000)}\n--- upstream requests: ${upstream.requests.length}`;

  /** The requests that carry the user's task (not side requests). */
  const taskRequests = (route: Route, bodies: Array<Record<string, unknown>>, marker: string) => bodies.map(route.read).filter((conversation) => conversation.userText.includes(marker));

  for (const route of routes) {
    it(`answers a plain prompt through ${route.label}`, async () => {
      const { run: result, requests } = await run(route, script.PLAIN_PROMPT);
      expect(result.exitCode, explain(result, route.upstream())).toBe(0);
      expect(result.result?.result).toBe(script.PLAIN_ANSWER);
      expect(requests).toHaveLength(1);
      const [first] = taskRequests(route, requests, 'PLAIN:');
      expect(first?.instructions).toContain('Claude');
      expect(first?.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['Bash', 'Read', 'Edit']));
      const body = requests[0]!;
      if (route.bedrock) {
        // Forwarded as sent, in InvokeModel's terms: the model in the path, no `stream`, betas in the body.
        const { path, headers } = route.upstream().requests.at(-1)!;
        expect(path).toBe(`/model/${encodeURIComponent(BEDROCK_MODEL)}/invoke-with-response-stream`);
        expect(headers['x-api-key']).toBeUndefined();
        expect(headers.authorization).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${BEDROCK.accessKeyId}/\\d{8}/${BEDROCK.region}/bedrock/aws4_request`));
        expect(body).not.toHaveProperty('model');
        expect(body).not.toHaveProperty('stream');
        expect(body).not.toHaveProperty('service_tier');
        expect(body.anthropic_version).toBe('bedrock-2023-05-31');
        expect(body.anthropic_beta).toContain('context-management-2025-06-27');
        expect(body.max_tokens).toBe(16_384);
        expect(body.context_management).toEqual(expect.any(Object));
        expect(body.metadata).toEqual(expect.any(Object));
      } else if (route.passthrough) {
        // Forwarded as sent, except what the gateway controls: model, output cap, service tier (and Vertex's version).
        expect(body.model).toBe(route.upstreamModel);
        expect(body.max_tokens).toBe(16_384);
        const dressing = route.dressing!();
        for (const [field, value] of Object.entries(dressing.fields)) expect(body[field], field).toBe(value);
        expect(body.context_management).toEqual(expect.any(Object));
        expect(body.metadata).toEqual(expect.any(Object));
        const headers = route.upstream().requests.at(-1)!.headers;
        expect(headers['anthropic-beta']).toContain('context-management-2025-06-27');
        for (const [name, value] of Object.entries(dressing.headers)) expect(headers[name], name).toBe(value);
      } else {
        expect(body.model).toBe(route.upstreamModel);
        expect(body.max_completion_tokens).toBe(16_384);
        // Claude Code's mid-conversation system turn stays a system message, after the user's.
        const roles = (body.messages as Array<{ role: string }>).map((message) => message.role);
        expect(roles[0]).toBe('system');
        expect(roles.slice(1)).toContain('system');
      }
    }, 120_000);

    it(`thinks and answers through ${route.label}`, async () => {
      const { run: result, requests } = await run(route, script.THINK_PROMPT);
      expect(result.exitCode, explain(result, route.upstream())).toBe(0);
      expect(result.result?.result).toBe(script.THINK_ANSWER);
      const bodies = requests.filter((body) => route.read(body).userText.includes('THINK:'));
      expect(bodies).toHaveLength(1);
      // Claude Code asks for adaptive thinking at an effort; it reached the upstream in its own terms.
      const effort = (bodies[0]!.output_config as { effort?: unknown } | undefined)?.effort;
      if (route.passthrough) expect(bodies[0]!.thinking).toMatchObject({ type: 'adaptive' });
      else expect(bodies[0]!.reasoning_effort).toBe('high');
      if (route.passthrough) expect(effort).toBe('high');
      // The thinking count Claude Code shows is the upstream's, not a count of the thinking text.
      const usage = result.result?.usage as { output_tokens_details?: { thinking_tokens?: unknown } } | undefined;
      expect(usage?.output_tokens_details?.thinking_tokens).toBe(route.upstream().reported.at(-1)?.reasoningTokens);
      expect(route.upstream().reported.at(-1)?.reasoningTokens).toBeGreaterThan(0);
    }, 120_000);

    it(`runs a Bash tool turn through ${route.label}`, async () => {
      const { run: result, requests } = await run(route, script.BASH_PROMPT);
      expect(result.exitCode, explain(result, route.upstream())).toBe(0);
      expect(result.result?.result).toBe(script.BASH_ANSWER);
      const task = taskRequests(route, requests, 'BASH:');
      expect(task).toHaveLength(2);
      expect(task[1]!.calls).toEqual([{ id: expect.any(String), name: 'Bash', arguments: expect.objectContaining({ command: script.BASH_COMMAND }) }]);
      expect(task[1]!.outputs).toHaveLength(1);
      expect(task[1]!.outputs[0]!.callId).toBe(task[1]!.calls[0]!.id);
      expect(task[1]!.outputs[0]!.text).toContain(script.BASH_OUTPUT);
    }, 120_000);

    it(`edits a file through ${route.label}`, async () => {
      const { run: result, requests, workspace: folder } = await run(route, script.EDIT_PROMPT, { [script.EDIT_FILE]: script.EDIT_BEFORE });
      try {
        expect(result.exitCode, explain(result, route.upstream())).toBe(0);
        expect(readWorkspaceFile(folder, script.EDIT_FILE)).toBe(script.EDIT_AFTER);
        expect(result.result?.result).toBe(script.EDIT_ANSWER);
        const task = taskRequests(route, requests, 'EDIT:');
        expect(task).toHaveLength(3);
        expect(task[2]!.calls.map((call) => call.name)).toEqual(['Read', 'Edit']);
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    }, 120_000);

    it(`shows the spec's error messages to its user through ${route.label}`, async () => {
      const before = route.upstream().requests.length;
      const shown = async (apiKey: string, model = route.model) => {
        const folder = makeWorkspace();
        try {
          const result = await runClaude({ binary: installation.binary, baseUrl: harness.baseUrl, apiKey, keyAs: route.keyAs, model, prompt: script.PLAIN_PROMPT, timeoutMs: RUN_TIMEOUT_MS, workspace: folder });
          expect(result.exitCode).not.toBe(0);
          expect(result.result?.is_error).toBe(true);
          return { status: result.result?.api_error_status, text: String(result.result?.result) };
        } finally {
          rmSync(folder, { recursive: true, force: true });
        }
      };
      expect(await shown('sk-tg-not-a-key')).toEqual({ status: 401, text: expect.stringContaining('Invalid token.') });
      const broke = await harness.newAccount('0');
      expect(await shown(broke.secret)).toEqual({ status: 403, text: expect.stringContaining('Insufficient balance.') });
      expect(await shown(accounts.get(route.model)!.secret, 'no-such-model')).toEqual({ status: 503, text: expect.stringContaining('The requested model is currently unavailable.') });
      const limited = await harness.newAccount('10', { requestsPerWindow: 1 });
      await shown(limited.secret, 'no-such-model');
      expect(await shown(limited.secret)).toEqual({ status: 429, text: expect.stringContaining('Rate limit exceeded.') });
      // None of them reached the upstream, and none was billed.
      expect(route.upstream().requests.length).toBe(before);
      expect((await harness.store.listLedger(broke.accountId)).filter((entry) => entry.kind === 'charge')).toEqual([]);
    }, 240_000);

    it(`bills ${route.label} exactly what the upstream reported`, async () => {
      const account = accounts.get(route.model)!;
      const charges = (await harness.store.listLedger(account.accountId)).filter((entry) => entry.kind === 'charge');
      const reported = route.upstream().reported;
      expect(charges).toHaveLength(reported.length);
      expect(charges.reduce((sum, entry) => sum + entry.amountNanos, 0n)).toBe(reported.reduce((sum, usage) => sum + priced(usage), 0n));
      const total = (pick: (usage: ReportedUsage) => number | undefined) => ({
        ledger: charges.reduce((sum, entry) => sum + (pick(entry as ReportedUsage) ?? 0), 0),
        upstream: reported.reduce((sum, usage) => sum + (pick(usage) ?? 0), 0),
      });
      for (const pick of [(usage: ReportedUsage) => usage.inputTokens, (usage: ReportedUsage) => usage.cachedInputTokens, (usage: ReportedUsage) => usage.cacheWriteInputTokens, (usage: ReportedUsage) => usage.outputTokens, (usage: ReportedUsage) => usage.reasoningTokens]) {
        const { ledger, upstream } = total(pick);
        expect(ledger).toBe(upstream);
      }
    });
  }
});

function priced(usage: ReportedUsage): bigint {
  const fresh = usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteInputTokens;
  return (
    BigInt(fresh) * NANOS_PER_TOKEN.input +
    BigInt(usage.cachedInputTokens) * NANOS_PER_TOKEN.cachedInput +
    BigInt(usage.cacheWriteInputTokens) * NANOS_PER_TOKEN.cacheWrite +
    BigInt(usage.outputTokens) * NANOS_PER_TOKEN.output
  );
}
