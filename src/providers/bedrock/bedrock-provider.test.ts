/**
 * The `bedrock` provider against the Bedrock double (test/support/bedrock-upstream.ts, which checks
 * SigV4 signatures with AWS's signer): Converse and ConverseStream read to canonical events (text,
 * tool calls, Claude's reasoning, usage with the prompt cache's counts), Claude through InvokeModel
 * on the canonical path and as a Messages pass-through, Bedrock's refusals mapped as the router
 * needs them, a stream broken by an exception message, and credentials: from the catalog's
 * environment variables, from AWS's standard chain (the container endpoint), renewed once the
 * clock passes their expiry while a stream runs, and a failed fetch as a credentials failure
 * with its reason. No key, secret or token in any message.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { providerSchema, type BedrockProviderConfig } from '../../config/schema.js';
import type { CanonicalEvent, CanonicalRequest } from '../../protocol/canonical.js';
import { CLAUDE_ANSWER_MODEL, GREETING, startBedrockUpstream, THINKING, type BedrockDouble } from '../../../test/support/bedrock-upstream.js';
import { collect, expectNoSecrets, upstreamFailure } from '../../../test/support/provider-test-kit.js';
import type { FrameSink, PassthroughFrame, Provider, ProviderCall } from '../provider.js';
import type { AwsCredentialProvider } from './aws-credentials.js';
import { createBedrockProvider, type BedrockProviderOptions } from './bedrock-provider.js';

const REGION = 'us-west-2';
const ACCESS_KEY_ID = 'AKIAPROVIDERTEST0001';
const SECRET = 'provider/test/secret/9f8e7d6c5b4a';
const ENV = { BEDROCK_KEY_ID: ACCESS_KEY_ID, BEDROCK_SECRET: SECRET, BEDROCK_WRONG_SECRET: 'not/the/secret' };
const NOVA = 'amazon.nova-pro-v1:0';
const CLAUDE = 'us.anthropic.claude-sonnet-4-20250514-v1:0';
/** The double's usage as canonical usage: 11 + 3 read + 2 written input, 5 output. */
const USAGE = { inputTokens: 16, cachedInputTokens: 3, cacheWriteInputTokens: 2, outputTokens: 5 };

const opened: Array<{ close?(): Promise<void> }> = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close?.();
});

async function double(options: { chunkDelayMs?: number } = {}): Promise<BedrockDouble> {
  const started = await startBedrockUpstream({ region: REGION, accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET, models: [NOVA, CLAUDE], ...options });
  opened.push(started);
  return started;
}

function bedrock(upstream: BedrockDouble, entry: Record<string, unknown> = {}, options: BedrockProviderOptions = {}): Provider {
  const config = providerSchema.parse({
    name: 'bedrock-test',
    type: 'bedrock',
    region: REGION,
    endpoint: upstream.endpoint,
    credentials: { access_key_id_env: 'BEDROCK_KEY_ID', secret_access_key_env: 'BEDROCK_SECRET' },
    timeouts: { connect_ms: 1_000, first_byte_ms: 2_000, idle_ms: 2_000 },
    ...entry,
  }) as BedrockProviderConfig;
  const provider = createBedrockProvider(config, ENV, options);
  opened.push(provider);
  return provider;
}

function request(text = 'Hi', extra: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return { model: 'tollgate-bedrock', input: [{ type: 'message', role: 'user', content: [{ type: 'text', text }] }], tools: [], toolChoice: 'auto', stream: true, ...extra };
}

function call(upstreamModel = NOVA, signal = new AbortController().signal): ProviderCall {
  return { upstreamModel, maxOutputTokens: 4_096, signal, requestId: 'req_bedrock_0001' };
}

const weather = { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };

const textOf = (events: CanonicalEvent[]) => events.flatMap((event) => (event.type === 'text-delta' ? [event.delta] : [])).join('');
const usageOf = (events: CanonicalEvent[]) => events.find((event) => event.type === 'usage');

describe('the bedrock provider over Converse', () => {
  it('streams text and usage from ConverseStream, signed with the access key, the model id escaped in the path', async () => {
    const upstream = await double();
    const events = await collect(bedrock(upstream).stream(request(), call()));
    expect(events[0]).toEqual({ type: 'response-start', upstreamModel: NOVA });
    expect(textOf(events)).toBe(GREETING);
    expect(usageOf(events)).toEqual({ type: 'usage', usage: { ...USAGE, reasoningTokens: 0 } });
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/model/amazon.nova-pro-v1%3A0/converse-stream');
    expect(sent.accessKeyId).toBe(ACCESS_KEY_ID);
    // The gateway's cache point after the conversation's last block (Nova's Converse caches).
    expect(sent.body).toEqual({ messages: [{ role: 'user', content: [{ text: 'Hi' }, { cachePoint: { type: 'default' } }] }], inferenceConfig: { maxTokens: 4_096 } });
  });

  it('maps tools, parallel tool calls, a tool round trip and the system prompt', async () => {
    const upstream = await double();
    const provider = bedrock(upstream);
    const events = await collect(provider.stream(request('Weather? PARALLEL', { instructions: 'Be brief.', tools: [weather], toolChoice: 'required' }), call()));
    const starts = events.filter((event) => event.type === 'tool-call-start');
    expect(starts.map((event) => event.type === 'tool-call-start' && [event.index, event.name])).toEqual([
      [0, 'get_weather'],
      [1, 'get_time'],
    ]);
    const args = (index: number) => events.flatMap((event) => (event.type === 'tool-call-delta' && event.index === index ? [event.delta] : [])).join('');
    expect(JSON.parse(args(0))).toEqual({ city: 'Bergen' });
    expect(JSON.parse(args(1))).toEqual({ zone: 'CET' });
    expect(events.filter((event) => event.type === 'tool-call-end')).toHaveLength(2);
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'tool_calls' });
    const sent = upstream.requests.at(-1)!.body;
    expect(sent.system).toEqual([{ text: 'Be brief.' }, { cachePoint: { type: 'default' } }]);
    expect(sent.toolConfig).toEqual({ tools: [{ toolSpec: { name: 'get_weather', description: 'Current weather', inputSchema: { json: weather.parameters } } }], toolChoice: { any: {} } });

    const callId = starts[0]?.type === 'tool-call-start' ? starts[0].callId : '';
    const answered = await collect(
      provider.stream(
        request('Weather?', {
          tools: [weather],
          input: [
            { type: 'message', role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
            { type: 'function_call', callId, name: 'get_weather', arguments: '{"city":"Bergen"}' },
            { type: 'function_call_output', callId, output: 'Rain, 9 °C' },
          ],
        }),
        call(),
      ),
    );
    expect(textOf(answered)).toBe('The tool said: Rain, 9 °C');
    expect(upstream.requests.at(-1)!.body.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather?' }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: callId, name: 'get_weather', input: { city: 'Bergen' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: callId, content: [{ text: 'Rain, 9 °C' }] } }, { cachePoint: { type: 'default' } }] },
    ]);
  });

  it('asks Claude for thinking in additionalModelRequestFields and reads its reasoning; other families get none', async () => {
    const upstream = await double();
    const provider = bedrock(upstream);
    const events = await collect(provider.stream(request('Hi', { reasoningEffort: 'low', temperature: 0.3 }), call(CLAUDE)));
    expect(events.flatMap((event) => (event.type === 'reasoning-delta' ? [event.delta] : [])).join('')).toBe(THINKING);
    expect(textOf(events)).toBe(GREETING);
    const usage = usageOf(events);
    expect(usage?.type === 'usage' && usage.usage.reasoningTokens).toBeGreaterThan(0);
    expect(upstream.requests.at(-1)!.body).toMatchObject({ additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 2_048 } }, inferenceConfig: { maxTokens: 4_096 } });
    expect(upstream.requests.at(-1)!.body.inferenceConfig).not.toHaveProperty('temperature');

    await collect(provider.stream(request('Hi', { reasoningEffort: 'low', temperature: 1.7 }), call(NOVA)));
    expect(upstream.requests.at(-1)!.body).not.toHaveProperty('additionalModelRequestFields');
    expect(upstream.requests.at(-1)!.body.inferenceConfig).toEqual({ maxTokens: 4_096, temperature: 1 });
  });

  it('refuses an image given by web address before calling Bedrock (a 400 for the client)', async () => {
    const upstream = await double();
    const image = request('Hi', { input: [{ type: 'message', role: 'user', content: [{ type: 'image', url: 'https://example.com/cat.png' }] }] });
    const failure = await upstreamFailure(collect(bedrock(upstream).stream(image, call())));
    expect(failure).toMatchObject({ kind: 'status', status: 400 });
    expect(failure.clientMessage).toContain('not web addresses');
    expect(upstream.requests).toHaveLength(0);
  });

  it('maps a 429 ThrottlingException to a failoverable failure and a 400 ValidationException to the client’s', async () => {
    const upstream = await double();
    const provider = bedrock(upstream);
    const throttled = await upstreamFailure(collect(provider.stream(request('THROTTLE_ME'), call())));
    expect(throttled).toMatchObject({ kind: 'status', status: 429, failoverable: true });
    const invalid = await upstreamFailure(collect(provider.stream(request('INVALID_ME'), call())));
    expect(invalid).toMatchObject({ kind: 'status', status: 400, failoverable: false });
    expect(invalid.clientMessage).toContain('the prompt holds INVALID_ME');
  });

  it('ends a stream broken by a modelStreamErrorException message with an error event, after the text so far', async () => {
    const upstream = await double();
    const events = await collect(bedrock(upstream).stream(request('BREAK_ME'), call()));
    expect(textOf(events)).toBe('Hello from');
    expect(events.at(-1)).toEqual({ type: 'error', code: 'upstream_error', message: 'modelStreamErrorException: The model stream broke off (BREAK_ME).' });
  });

  it('stops the upstream call when the caller leaves the stream', async () => {
    const upstream = await double({ chunkDelayMs: 200 });
    const controller = new AbortController();
    const seen: CanonicalEvent[] = [];
    for await (const event of bedrock(upstream).stream(request(), call(NOVA, controller.signal))) {
      seen.push(event);
      if (event.type === 'text-delta') break;
    }
    expect(textOf(seen)).toBe('Hello');
  });
});

describe('the bedrock provider over InvokeModel (Claude)', () => {
  it('streams Claude through InvokeModelWithResponseStream with Anthropic’s Messages body', async () => {
    const upstream = await double();
    const events = await collect(bedrock(upstream, { api: 'invoke' }).stream(request('Hi', { tools: [weather] }), call(CLAUDE)));
    expect(events.filter((event) => event.type === 'tool-call-start')).toHaveLength(1);
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'tool_calls' });
    expect(usageOf(events)).toEqual({ type: 'usage', usage: { ...USAGE, reasoningTokens: 0 } });
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe(`/model/${encodeURIComponent(CLAUDE)}/invoke-with-response-stream`);
    expect(sent.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 4_096, tools: [{ name: 'get_weather', input_schema: weather.parameters }] });
  });

  it('passes a Messages client’s body through, streamed and whole, with its betas in anthropic_beta and the client’s model named', async () => {
    const upstream = await double();
    const provider = bedrock(upstream, { api: 'invoke' });
    expect(provider.speaksNatively?.('anthropic-messages')).toBe(true);
    expect(provider.speaksNatively?.('chat-completions')).toBe(false);
    const body = { model: 'claude-via-bedrock', max_tokens: 50_000, messages: [{ role: 'user', content: 'Hi' }], thinking: { type: 'enabled', budget_tokens: 60_000 } };
    const base = { ...call(CLAUDE), surface: 'anthropic-messages' as const, body, clientWantsUsage: true, headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14, context-1m-2025-08-07' } };

    const whole = await provider.passthrough!({ ...base, stream: false });
    expect(whole.kind).toBe('json');
    if (whole.kind !== 'json') return;
    expect(whole.body).toMatchObject({ model: 'claude-via-bedrock', content: [{ type: 'thinking' }, { type: 'text', text: GREETING }] });
    expect(whole.events.find((event) => event.type === 'usage')).toMatchObject({ usage: USAGE });
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe(`/model/${encodeURIComponent(CLAUDE)}/invoke`);
    expect(sent.body).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      anthropic_beta: ['interleaved-thinking-2025-05-14', 'context-1m-2025-08-07'],
      max_tokens: 4_096,
      messages: [{ role: 'user', content: 'Hi' }],
      thinking: { type: 'enabled', budget_tokens: 4_095 },
    });

    const streamed = await provider.passthrough!({ ...base, stream: true });
    expect(streamed.kind).toBe('stream');
    if (streamed.kind !== 'stream') return;
    const frames = await framesOf(streamed.frames);
    const sse = frames.map((frame) => frame.sse).join('');
    expect(sse).toContain('event: message_start\ndata: {"type":"message_start","message":{"id":"msg_bdrk_');
    expect(sse).toContain('"model":"claude-via-bedrock"');
    expect(sse).not.toContain(CLAUDE_ANSWER_MODEL);
    expect(sse).toContain('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta"');
    expect(frames.at(-1)).toMatchObject({ last: true });
    expect(frames.flatMap((frame) => frame.events).find((event) => event.type === 'usage')).toMatchObject({ usage: USAGE });
  });

  it('ends a pass-through broken by an exception message with an in-band failure', async () => {
    const upstream = await double();
    const body = { model: 'claude-via-bedrock', max_tokens: 100, messages: [{ role: 'user', content: 'BREAK_ME' }] };
    const streamed = await bedrock(upstream, { api: 'invoke' }).passthrough!({ ...call(CLAUDE), surface: 'anthropic-messages', body, clientWantsUsage: true, stream: true });
    if (streamed.kind !== 'stream') throw new Error('expected a stream');
    const frames = await framesOf(streamed.frames);
    expect(frames.at(-1)?.failure).toEqual({ message: 'modelStreamErrorException: The model stream broke off (BREAK_ME).', inBand: true });
    expect(frames.map((frame) => frame.sse).join('')).toContain('"text":"Hello"');
  });
});

describe('the bedrock provider’s credentials', () => {
  it('takes a refused signature (a wrong secret) as a credentials failure that names no secret', async () => {
    const upstream = await double();
    const provider = bedrock(upstream, { credentials: { access_key_id_env: 'BEDROCK_KEY_ID', secret_access_key_env: 'BEDROCK_WRONG_SECRET' } });
    const failure = await upstreamFailure(collect(provider.stream(request(), call())));
    expect(failure).toMatchObject({ kind: 'credentials', status: 403, failoverable: true });
    expect(failure.message).toContain('upstream answered HTTP 403: The request signature we calculated does not match');
    expectNoSecrets(failure.message, [ACCESS_KEY_ID, 'not/the/secret', upstream.endpoint]);
    expect(upstream.refusals).toEqual(['InvalidSignatureException']);
  });

  it('drops credentials AWS refused: the next call asks the source again, and is signed with what it gives', async () => {
    const upstream = await double();
    const given = [{ accessKeyId: ACCESS_KEY_ID, secretAccessKey: 'revoked/secret' }, { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET }];
    const asked: Array<boolean | undefined> = [];
    const source: AwsCredentialProvider = (options) => {
      asked.push(options?.forceRefresh);
      return Promise.resolve(given[asked.length - 1] ?? given[1]!);
    };
    const provider = bedrock(upstream, {}, { credentials: source });
    const failure = await upstreamFailure(collect(provider.stream(request(), call())));
    expect(failure.kind).toBe('credentials');
    expectNoSecrets(failure.message, ['revoked/secret']);
    expect(textOf(await collect(provider.stream(request(), call())))).toBe(GREETING);
    expect(asked).toEqual([undefined, true]);
  });

  it('refuses catalog entries that cannot be: a bad region, half an access key, a profile beside one, unknown fields', () => {
    const entry = { name: 'b', type: 'bedrock', region: REGION };
    expect(providerSchema.safeParse(entry).success).toBe(true);
    expect(providerSchema.parse(entry)).toMatchObject({ api: 'converse' });
    for (const bad of [
      { ...entry, region: 'US-EAST-1' },
      { ...entry, region: 'mars' },
      { ...entry, endpoint: 'not a url' },
      { ...entry, api: 'chat' },
      { ...entry, credentials: { access_key_id_env: 'K' } },
      { ...entry, credentials: { secret_access_key_env: 'S' } },
      { ...entry, credentials: { session_token_env: 'T' } },
      { ...entry, credentials: { profile: 'prod', access_key_id_env: 'K', secret_access_key_env: 'S' } },
      { ...entry, credentials: { access_key_id_env: 'not a name', secret_access_key_env: 'S' } },
      { ...entry, credentials: { profile: '' } },
      { ...entry, api_key_env: 'K' },
    ]) {
      expect(providerSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });

  it('refuses at start a named access key variable that is unset, naming the variable only', async () => {
    const upstream = await double();
    expect(() => bedrock(upstream, { credentials: { access_key_id_env: 'BEDROCK_KEY_ID', secret_access_key_env: 'BEDROCK_UNSET' } })).toThrow(
      'bedrock provider "bedrock-test": environment variable BEDROCK_UNSET (its AWS secret access key) is not set',
    );
  });

  it('renews temporary credentials once the clock passes their expiry: the stream in flight ends whole, the next call is signed anew', async () => {
    const upstream = await double({ chunkDelayMs: 100 });
    let now = Date.now();
    let fetches = 0;
    // What the standard chain's container provider reads, forceRefresh or not.
    const source: AwsCredentialProvider = async () => {
      fetches += 1;
      const answer = (await (await fetch(upstream.credentialsUri)).json()) as { AccessKeyId: string; SecretAccessKey: string; Token: string; Expiration: string };
      return { accessKeyId: answer.AccessKeyId, secretAccessKey: answer.SecretAccessKey, sessionToken: answer.Token, expiration: new Date(answer.Expiration) };
    };
    const provider = bedrock(upstream, { credentials: undefined }, { now: () => now, credentials: source });
    const stream = provider.stream(request(), call())[Symbol.asyncIterator]();
    expect((await stream.next()).value).toMatchObject({ type: 'response-start' });
    const first = upstream.issued[0]!;
    expect(upstream.requests.at(-1)!.accessKeyId).toBe(first.accessKeyId);

    // An hour and a half later, mid-stream: AWS no longer takes the first credentials.
    now += 90 * 60_000;
    upstream.expireCredentials();
    const rest: CanonicalEvent[] = [];
    for (let next = await stream.next(); next.done !== true; next = await stream.next()) rest.push(next.value);
    expect(textOf(rest)).toBe(GREETING);
    expect(rest.at(-1)).toEqual({ type: 'finish', reason: 'stop' });

    const again = await collect(provider.stream(request(), call()));
    expect(textOf(again)).toBe(GREETING);
    expect(fetches).toBe(2);
    expect(upstream.requests.at(-1)!.accessKeyId).toBe(upstream.issued[1]!.accessKeyId);
    expect(upstream.refusals).toEqual([]);
  });

  it('keeps temporary credentials until the margin before their expiry, without asking again', async () => {
    const upstream = await double();
    let now = Date.now();
    let fetches = 0;
    const source: AwsCredentialProvider = () => {
      fetches += 1;
      return Promise.resolve({ accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET, expiration: new Date(now + 60 * 60_000) });
    };
    const provider = bedrock(upstream, {}, { now: () => now, credentials: source });
    await collect(provider.stream(request(), call()));
    now += 54 * 60_000;
    await collect(provider.stream(request(), call()));
    expect(fetches).toBe(1);
    // Five minutes before the end (a tenth of the hour is more than five minutes).
    now += 2 * 60_000;
    await collect(provider.stream(request(), call()));
    expect(fetches).toBe(2);
  });

  it('makes a failed credentials fetch a credentials failure with its reason, and tries again on the next call', async () => {
    const upstream = await double();
    let failing = true;
    const source: AwsCredentialProvider = () =>
      failing ? Promise.reject(new Error('Could not load credentials from any providers\nmore detail')) : Promise.resolve({ accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET });
    const provider = bedrock(upstream, {}, { credentials: source });
    const failure = await upstreamFailure(collect(provider.stream(request(), call())));
    expect(failure).toMatchObject({ kind: 'credentials', failoverable: true });
    expect(failure.message).toBe('bedrock provider "bedrock-test": could not get AWS credentials (Could not load credentials from any providers)');
    expect(upstream.requests).toHaveLength(0);
    failing = false;
    expect(textOf(await collect(provider.stream(request(), call())))).toBe(GREETING);
  });

  it('reads the standard chain: temporary credentials from the container endpoint, and its failure as a credentials failure', async () => {
    const upstream = await double();
    const saved = { ...process.env };
    for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name];
    Object.assign(process.env, { AWS_CONTAINER_CREDENTIALS_FULL_URI: upstream.credentialsUri, AWS_CONFIG_FILE: '/nonexistent/aws-config', AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials', AWS_EC2_METADATA_DISABLED: 'true' });
    try {
      const chained = bedrock(upstream, { credentials: undefined });
      expect(textOf(await collect(chained.stream(request(), call())))).toBe(GREETING);
      expect(upstream.requests.at(-1)!.accessKeyId).toBe(upstream.issued[0]!.accessKeyId);

      upstream.failCredentials(true);
      const failing = bedrock(upstream, { name: 'bedrock-chain-down', credentials: undefined });
      const failure = await upstreamFailure(collect(failing.stream(request(), call())));
      expect(failure.kind).toBe('credentials');
      expect(failure.message).toMatch(/^bedrock provider "bedrock-chain-down": could not get AWS credentials \(.+\)$/);
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
    }
  });
});

/** Every frame of a pass-through stream, until it is over. */
function framesOf(frames: { start(sink: FrameSink): void }): Promise<PassthroughFrame[]> {
  return new Promise((resolve) => {
    const collected: PassthroughFrame[] = [];
    frames.start({ frame: (frame) => void collected.push(frame), closed: () => resolve(collected) });
  });
}
