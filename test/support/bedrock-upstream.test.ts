/**
 * The Bedrock double (bedrock-upstream.ts) proven with AWS's own client: the SDK's
 * BedrockRuntimeClient, pointed at the double, signs its calls with SigV4 and reads its answers
 * (JSON, and the binary event streams) for Converse, ConverseStream, InvokeModel and
 * InvokeModelWithResponseStream; a wrong secret, an unknown key, expired temporary credentials and
 * a throttled call come back as the SDK's own exception classes. What the gateway's tests learn
 * from the double is only as good as this.
 */
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
  ThrottlingException,
  ValidationException,
  type ConverseStreamOutput,
} from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BEDROCK_USAGE, GREETING, startBedrockUpstream, THINKING, type BedrockDouble } from './bedrock-upstream.js';

const REGION = 'eu-central-1';
const ACCESS_KEY_ID = 'AKIAIOSFODNN7EXAMPLE';
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const CONVERSE_MODEL = 'amazon.nova-lite-v1:0';
const CLAUDE_MODEL = 'anthropic.claude-sonnet-4-20250514-v1:0';

let double: BedrockDouble;

beforeAll(async () => {
  double = await startBedrockUpstream({ region: REGION, accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET, models: [CONVERSE_MODEL, CLAUDE_MODEL] });
});
afterAll(() => double.close());

function client(credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } = { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET }): BedrockRuntimeClient {
  // HTTP/1.1, as the gateway speaks to Bedrock (the SDK's default handler is HTTP/2, for the bidirectional stream operation).
  return new BedrockRuntimeClient({ region: REGION, endpoint: double.endpoint, credentials, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
}

const weatherTool = { toolSpec: { name: 'get_weather', description: 'Current weather', inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } } } };

describe('the Bedrock double, driven by BedrockRuntimeClient', () => {
  it('answers Converse signed by the SDK, with its usage', async () => {
    const answer = await client().send(new ConverseCommand({ modelId: CONVERSE_MODEL, messages: [{ role: 'user', content: [{ text: 'Hi' }] }], inferenceConfig: { maxTokens: 100 } }));
    expect(answer.output?.message?.content?.[0]?.text).toBe(GREETING);
    expect(answer.stopReason).toBe('end_turn');
    expect(answer.usage).toMatchObject(BEDROCK_USAGE);
    // The model id's colon is escaped in the path, as the SDK sends it.
    expect(double.requests.at(-1)!.path).toBe('/model/amazon.nova-lite-v1%3A0/converse');
  });

  it('streams ConverseStream as event-stream messages the SDK decodes: text, then usage', async () => {
    const answer = await client().send(new ConverseStreamCommand({ modelId: CONVERSE_MODEL, messages: [{ role: 'user', content: [{ text: 'Hi' }] }] }));
    const events: ConverseStreamOutput[] = [];
    for await (const event of answer.stream!) events.push(event);
    expect(events.map((event) => event.contentBlockDelta?.delta?.text ?? '').join('')).toBe(GREETING);
    expect(events.find((event) => event.messageStop)?.messageStop?.stopReason).toBe('end_turn');
    expect(events.at(-1)?.metadata?.usage).toMatchObject(BEDROCK_USAGE);
  });

  it('streams tool use and Claude reasoning on ConverseStream', async () => {
    const answer = await client().send(
      new ConverseStreamCommand({
        modelId: CLAUDE_MODEL,
        messages: [{ role: 'user', content: [{ text: 'Weather in Bergen? PARALLEL' }] }],
        toolConfig: { tools: [weatherTool] },
        additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 1024 } },
      }),
    );
    const events: ConverseStreamOutput[] = [];
    for await (const event of answer.stream!) events.push(event);
    expect(events.map((event) => event.contentBlockDelta?.delta?.reasoningContent?.text ?? '').join('')).toBe(THINKING);
    const starts = events.flatMap((event) => (event.contentBlockStart?.start?.toolUse === undefined ? [] : [event.contentBlockStart.start.toolUse.name]));
    expect(starts).toEqual(['get_weather', 'get_time']);
    expect(events.find((event) => event.messageStop)?.messageStop?.stopReason).toBe('tool_use');
  });

  it('answers InvokeModel with Claude’s Message, and InvokeModelWithResponseStream with its events in chunks', async () => {
    const body = { anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] };
    const whole = await client().send(new InvokeModelCommand({ modelId: CLAUDE_MODEL, contentType: 'application/json', accept: 'application/json', body: JSON.stringify(body) }));
    const message = JSON.parse(Buffer.from(whole.body).toString('utf8')) as { content: Array<{ text: string }>; usage: Record<string, number> };
    expect(message.content[0]?.text).toBe(GREETING);
    expect(message.usage).toEqual({ input_tokens: 11, cache_creation_input_tokens: 2, cache_read_input_tokens: 3, output_tokens: 5 });

    const streamed = await client().send(new InvokeModelWithResponseStreamCommand({ modelId: CLAUDE_MODEL, contentType: 'application/json', body: JSON.stringify(body) }));
    const types: string[] = [];
    let text = '';
    for await (const event of streamed.body!) {
      const inner = JSON.parse(Buffer.from(event.chunk!.bytes!).toString('utf8')) as { type: string; delta?: { text?: string } };
      types.push(inner.type);
      text += inner.delta?.text ?? '';
    }
    expect(text).toBe(GREETING);
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
  });

  it('refuses a Messages body Bedrock would refuse (a model field) with a ValidationException', async () => {
    const body = { anthropic_version: 'bedrock-2023-05-31', model: 'claude', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] };
    const refused = await client()
      .send(new InvokeModelCommand({ modelId: CLAUDE_MODEL, contentType: 'application/json', body: JSON.stringify(body) }))
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ValidationException);
    expect((refused as Error).message).toContain('extraneous key [model]');
  });

  it('refuses a signature made with the wrong secret: InvalidSignatureException', async () => {
    const refused = await client({ accessKeyId: ACCESS_KEY_ID, secretAccessKey: 'not-the-secret' })
      .send(new ConverseCommand({ modelId: CONVERSE_MODEL, messages: [{ role: 'user', content: [{ text: 'Hi' }] }] }))
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ name: 'InvalidSignatureException', $metadata: { httpStatusCode: 403 } });
  });

  it('refuses an unknown access key, and an invented session token: UnrecognizedClientException', async () => {
    for (const credentials of [
      { accessKeyId: 'AKIAUNKNOWNKEY000000', secretAccessKey: SECRET },
      { accessKeyId: 'ASIAINVENTED00000000', secretAccessKey: SECRET, sessionToken: 'made-up' },
    ]) {
      const refused = await client(credentials)
        .send(new ConverseCommand({ modelId: CONVERSE_MODEL, messages: [{ role: 'user', content: [{ text: 'Hi' }] }] }))
        .catch((error: unknown) => error);
      expect(refused).toMatchObject({ name: 'UnrecognizedClientException', $metadata: { httpStatusCode: 403 } });
    }
  });

  it('accepts the temporary credentials it issues until they expire: ExpiredTokenException', async () => {
    const answer = await fetch(double.credentialsUri);
    const issued = (await answer.json()) as { AccessKeyId: string; SecretAccessKey: string; Token: string; Expiration: string };
    expect(Date.parse(issued.Expiration)).toBeGreaterThan(Date.now());
    const temporary = client({ accessKeyId: issued.AccessKeyId, secretAccessKey: issued.SecretAccessKey, sessionToken: issued.Token });
    const command = () => new ConverseCommand({ modelId: CONVERSE_MODEL, messages: [{ role: 'user', content: [{ text: 'Hi' }] }] });
    expect((await temporary.send(command())).output?.message?.content?.[0]?.text).toBe(GREETING);
    expect(double.requests.at(-1)!.accessKeyId).toBe(issued.AccessKeyId);
    double.expireCredentials();
    const refused = await temporary.send(command()).catch((error: unknown) => error);
    expect(refused).toMatchObject({ name: 'ExpiredTokenException', $metadata: { httpStatusCode: 403 } });
  });

  it('throttles with a ThrottlingException (429)', async () => {
    const refused = await client()
      .send(new ConverseCommand({ modelId: CONVERSE_MODEL, messages: [{ role: 'user', content: [{ text: 'THROTTLE_ME' }] }] }))
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ThrottlingException);
    expect(refused).toMatchObject({ $metadata: { httpStatusCode: 429 } });
  });

  it('breaks a stream with a modelStreamErrorException message, which the SDK throws as that exception', async () => {
    const answer = await client().send(new ConverseStreamCommand({ modelId: CONVERSE_MODEL, messages: [{ role: 'user', content: [{ text: 'BREAK_ME' }] }] }));
    let text = '';
    const failure = await (async () => {
      for await (const event of answer.stream!) text += event.contentBlockDelta?.delta?.text ?? '';
    })().catch((error: unknown) => error);
    expect(text).toBe('Hello from');
    expect(failure).toMatchObject({ name: 'ModelStreamErrorException' });
  });
});
