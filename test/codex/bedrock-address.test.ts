/**
 * The scripted doubles at a Bedrock address (bedrock-address.ts), proven with AWS's own client:
 * BedrockRuntimeClient signs its calls with SigV4 and decodes the answers, ConverseStream from the
 * Converse double (converse-model-double.ts) and InvokeModelWithResponseStream from the Claude
 * Code double (test/claude/claude-doubles.ts). A wrong secret, an unknown key, a Messages body
 * with `model`, a Converse body with a field Converse does not have, and a call to another
 * operation come back as AWS refuses them; no refused call reaches the scripted model.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BedrockRuntimeClient, ConverseStreamCommand, InvokeModelWithResponseStreamCommand, ValidationException, type ConverseStreamOutput } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicClaudeDouble, type ScriptedDouble } from '../claude/claude-doubles.js';
import { PLAIN_ANSWER, PLAIN_PROMPT } from '../claude/claude-script.js';
import { bedrockAddress } from './bedrock-address.js';
import { CONVERSE_TOOL_USE_ID, startConverseModelDouble } from './converse-model-double.js';
import type { ModelDouble } from './model-double-server.js';
import { PLAIN_ANSWER as CODEX_PLAIN_ANSWER, SHELL_TASK, THINKING } from './model-script.js';

const KEYS = { region: 'us-west-2', accessKeyId: 'AKIAADDRESSTEST00001', secretAccessKey: 'address/test/secret/5a6b' };
const CLAUDE = 'anthropic.claude-sonnet-4-5-20250929-v1:0';

let converse: ModelDouble;
let invoke: ScriptedDouble;

beforeAll(async () => {
  converse = await startConverseModelDouble(bedrockAddress(KEYS, 'converse'));
  const workspace = mkdtempSync(join(tmpdir(), 'bedrock-address-'));
  invoke = await startAnthropicClaudeDouble('', () => workspace, bedrockAddress(KEYS, 'invoke'));
});
afterAll(async () => {
  await converse?.close();
  await invoke?.close();
});

function client(endpoint: string, secretAccessKey = KEYS.secretAccessKey, accessKeyId = KEYS.accessKeyId): BedrockRuntimeClient {
  return new BedrockRuntimeClient({ region: KEYS.region, endpoint, credentials: { accessKeyId, secretAccessKey }, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
}

const shellTool = { toolSpec: { name: 'exec_command', inputSchema: { json: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } } } };

async function converseEvents(command: ConverseStreamCommand): Promise<ConverseStreamOutput[]> {
  const answer = await client(converse.origin).send(command);
  const events: ConverseStreamOutput[] = [];
  for await (const event of answer.stream!) events.push(event);
  return events;
}

describe('the scripted models at a Bedrock address, driven by BedrockRuntimeClient', () => {
  it('streams a Converse answer the SDK decodes: reasoning, text, stop and usage', async () => {
    const events = await converseEvents(
      new ConverseStreamCommand({ modelId: CLAUDE, messages: [{ role: 'user', content: [{ text: 'Say hello.' }] }], additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 1024 } } }),
    );
    expect(events.map((event) => event.contentBlockDelta?.delta?.reasoningContent?.text ?? '').join('')).toBe(THINKING);
    expect(events.map((event) => event.contentBlockDelta?.delta?.text ?? '').join('')).toBe(CODEX_PLAIN_ANSWER);
    expect(events.find((event) => event.messageStop)?.messageStop?.stopReason).toBe('end_turn');
    expect(events.at(-1)?.metadata?.usage).toMatchObject({ inputTokens: 900, outputTokens: 20 });
    expect(converse.requests.at(-1)!.path).toBe(`/model/${encodeURIComponent(CLAUDE)}/converse-stream`);
  });

  it('streams a Converse tool call: its start, then its input in pieces', async () => {
    const events = await converseEvents(new ConverseStreamCommand({ modelId: CLAUDE, messages: [{ role: 'user', content: [{ text: SHELL_TASK }] }], toolConfig: { tools: [shellTool] } }));
    const start = events.find((event) => event.contentBlockStart)?.contentBlockStart?.start?.toolUse;
    expect(start).toEqual({ toolUseId: CONVERSE_TOOL_USE_ID, name: 'exec_command' });
    const input = events.map((event) => event.contentBlockDelta?.delta?.toolUse?.input ?? '').join('');
    expect(JSON.parse(input)).toMatchObject({ cmd: expect.stringContaining('tollgate-ok') });
    expect(events.find((event) => event.messageStop)?.messageStop?.stopReason).toBe('tool_use');
  });

  it('streams Claude’s Messages events in chunks on InvokeModelWithResponseStream, with Anthropic’s usage', async () => {
    const body = { anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, system: 'You are Claude Code.', messages: [{ role: 'user', content: PLAIN_PROMPT }] };
    const answer = await client(invoke.origin).send(new InvokeModelWithResponseStreamCommand({ modelId: CLAUDE, contentType: 'application/json', body: JSON.stringify(body) }));
    const events: Array<{ type: string; delta?: { text?: string }; usage?: Record<string, unknown>; 'amazon-bedrock-invocationMetrics'?: unknown }> = [];
    for await (const event of answer.body!) events.push(JSON.parse(Buffer.from(event.chunk!.bytes!).toString('utf8')) as (typeof events)[number]);
    expect(events.map((event) => event.type)).toEqual(expect.arrayContaining(['message_start', 'content_block_delta', 'message_delta', 'message_stop']));
    expect(events.map((event) => event.delta?.text ?? '').join('')).toBe(PLAIN_ANSWER);
    expect(events.find((event) => event.type === 'message_delta')?.usage).toMatchObject({ input_tokens: 1_203, output_tokens: 61 });
    expect(events.at(-1)?.['amazon-bedrock-invocationMetrics']).toMatchObject({ inputTokenCount: 1_203, outputTokenCount: 61 });
    expect(invoke.reported.at(-1)).toMatchObject({ inputTokens: 1_203 + 2_411 + 5_077, outputTokens: 61 });
  });

  it('refuses a signature made with the wrong secret, and an unknown key, as AWS does', async () => {
    const before = { converse: converse.requests.length, invoke: invoke.requests.length };
    const converseCall = (to: BedrockRuntimeClient) => to.send(new ConverseStreamCommand({ modelId: CLAUDE, messages: [{ role: 'user', content: [{ text: 'Say hello.' }] }] }));
    const invokeCall = (to: BedrockRuntimeClient) => to.send(new InvokeModelWithResponseStreamCommand({ modelId: CLAUDE, contentType: 'application/json', body: JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, messages: [{ role: 'user', content: PLAIN_PROMPT }] }) }));
    for (const [endpoint, call] of [[converse.origin, converseCall], [invoke.origin, invokeCall]] as const) {
      const wrong = await call(client(endpoint, 'not-the-secret')).catch((error: unknown) => error);
      expect(wrong).toMatchObject({ name: 'InvalidSignatureException', $metadata: { httpStatusCode: 403 } });
      const unknown = await call(client(endpoint, KEYS.secretAccessKey, 'AKIAUNKNOWNKEY000000')).catch((error: unknown) => error);
      expect(unknown).toMatchObject({ name: 'UnrecognizedClientException', $metadata: { httpStatusCode: 403 } });
    }
    expect({ converse: converse.requests.length, invoke: invoke.requests.length }).toEqual(before);
  });

  it('refuses a body Bedrock would refuse with a ValidationException, before the script answers', async () => {
    const reported = invoke.reported.length;
    const withModel = { anthropic_version: 'bedrock-2023-05-31', model: 'claude', max_tokens: 100, messages: [{ role: 'user', content: PLAIN_PROMPT }] };
    const refused = await client(invoke.origin).send(new InvokeModelWithResponseStreamCommand({ modelId: CLAUDE, contentType: 'application/json', body: JSON.stringify(withModel) })).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ValidationException);
    expect((refused as Error).message).toContain('extraneous key [model]');
    const noVersion = { max_tokens: 100, messages: [{ role: 'user', content: PLAIN_PROMPT }] };
    const unversioned = await client(invoke.origin).send(new InvokeModelWithResponseStreamCommand({ modelId: CLAUDE, contentType: 'application/json', body: JSON.stringify(noVersion) })).catch((error: unknown) => error);
    expect((unversioned as Error).message).toContain('anthropic_version');
    expect(invoke.reported.length).toBe(reported);

    const response = await fetch(`${converse.origin}/model/${CLAUDE}/converse-stream`, { method: 'POST', body: JSON.stringify({ messages: [] }) });
    expect(response.status).toBe(403);
    expect(response.headers.get('x-amzn-errortype')).toMatch(/^MissingAuthenticationTokenException:/);
  });

  it('answers only its operations: another one is a 404', async () => {
    const converseAtInvoke = await client(invoke.origin).send(new ConverseStreamCommand({ modelId: CLAUDE, messages: [{ role: 'user', content: [{ text: 'Say hello.' }] }] })).catch((error: unknown) => error);
    expect(converseAtInvoke).toMatchObject({ $metadata: { httpStatusCode: 404 } });
  });
});
