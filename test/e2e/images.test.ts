/**
 * `POST /v1/images/generations` and `POST /v1/images/edits` end to end, on SQLite and on
 * PostgreSQL + Redis: the official openai client generates (base64 and URL), edits with real files
 * and a mask (the upstream receives the very bytes sent), and streams partial images then the
 * completed one, through the simulated provider and an OpenAI-compatible upstream passed through.
 * The bill, to the nano: a token-priced model pays the upstream's reported usage (image input
 * tokens at the `image_input` price), a model priced per image pays its images at the tier the
 * answer says it made, else the tier held. Bad input, an oversized upload and a failing upstream
 * cost nothing; a client that leaves mid-stream pays the images held.
 */
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costOfTokens, usdToNanos } from '../../src/billing/money.js';
import { countTextTokens } from '../../src/protocol/tokens.js';
import { SIMULATED_INPUT_IMAGE_TOKENS, simulatedOutputTokens, solidPng } from '../../src/providers/simulated/images.js';
import { engines } from '../support/databases.js';
import { settledCharges } from '../support/charges.js';
import { startHarness, type Harness } from '../support/harness.js';
import { DOUBLE_PNG, IMAGE_OUTPUT_TOKENS, INPUT_IMAGE_TOKENS, startImagesUpstream, type ImagesDouble } from '../support/images-upstream.js';
import { waitFor } from '../support/wait-for.js';

/** gpt-image-1's token prices, USD per 1M. */
const TOKEN_PRICES = { input: '5', image_input: '10', output: '40' };
/** dall-e-3's prices per image. */
const DALLE_PRICES = { '1024x1024/standard': '0.04', '1024x1024/hd': '0.08', '1792x1024/standard': '0.08', '1792x1024/hd': '0.12', '1024x1792/standard': '0.08', '1024x1792/hd': '0.12' };
/** gpt-image-1 priced per image instead of by tokens. */
const GPT_IMAGE_PRICES = { '1024x1024/low': '0.011', '1024x1024/medium': '0.042', '1024x1024/high': '0.167', '1536x1024/low': '0.016', '1536x1024/medium': '0.063', '1536x1024/high': '0.25' };
const UPLOAD_LIMIT = 64 * 1024;

function imagesCatalog(double: ImagesDouble): unknown {
  const model = (id: string, targets: Array<[string, string]>, prices: object) => ({
    id,
    endpoints: ['image-generations', 'image-edits'],
    prices,
    max_output_tokens: 6_240,
    targets: targets.map(([provider, upstream], index) => ({ provider, model: upstream, priority: index })),
  });
  return {
    providers: [
      { name: 'sim', type: 'simulated' },
      { name: 'relay', type: 'openai', base_url: double.baseUrl, api_key_env: 'TEST_UPSTREAM_KEY' },
    ],
    models: [
      model('image-sim', [['sim', 'image-sim']], TOKEN_PRICES),
      model('image-relay', [['relay', 'gpt-image-1']], TOKEN_PRICES),
      model('image-failover', [['relay', 'gpt-image-1'], ['sim', 'image-sim']], TOKEN_PRICES),
      model('dalle-relay', [['relay', 'dall-e-3']], { input: '0', output: '0', image: DALLE_PRICES }),
      model('gpt-image-priced', [['relay', 'gpt-image-1']], { input: '0', output: '0', image: GPT_IMAGE_PRICES }),
      { id: 'chat-model', prices: { input: '1', output: '4' }, targets: [{ provider: 'sim', model: 'chat-model' }] },
    ],
    rate_limits: { requests: 10_000, window_seconds: 60, tokens_per_minute: 0 },
    limits: { max_upload_bytes: { 'image-edits': UPLOAD_LIMIT } },
  };
}

/** What a token-priced image model charges for a report. */
function tokenCost(textTokens: number, imageTokens: number, outputTokens: number): bigint {
  return costOfTokens(textTokens, usdToNanos(TOKEN_PRICES.input)) + costOfTokens(imageTokens, usdToNanos(TOKEN_PRICES.image_input)) + costOfTokens(outputTokens, usdToNanos(TOKEN_PRICES.output));
}

function isPng(b64: string | undefined, width?: number, height?: number): boolean {
  const bytes = Buffer.from(b64 ?? '', 'base64');
  const signature = bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  return signature && bytes.subarray(12, 16).toString('ascii') === 'IHDR' && (width === undefined || bytes.readUInt32BE(16) === width) && (height === undefined || bytes.readUInt32BE(20) === height);
}

function wordsIn(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

describe.each(engines)('images on %s', (engine) => {
  let harness: Harness;
  let double: ImagesDouble;

  beforeAll(async () => {
    double = await startImagesUpstream();
    harness = await startHarness({ engine, catalog: imagesCatalog(double), env: { TEST_UPSTREAM_KEY: 'sk-upstream' } });
  }, 60_000);

  afterAll(async () => {
    await harness?.close();
    await double?.close();
  });

  /** The account's charges once its holds are settled; the balance moved by exactly them. */
  const charges = (accountId: string, startUsd = '5') => settledCharges(harness, accountId, startUsd);

  async function amounts(accountId: string): Promise<bigint[]> {
    return (await charges(accountId)).map((entry) => entry.amountNanos);
  }

  it('generate on the simulated provider: valid PNGs, base64 and data URLs, usage in tokens billed to the nano', async () => {
    const { accountId, secret } = await harness.newAccount('5');
    const client = harness.client(secret);
    const prompt = 'A lighthouse on a cliff at dusk';
    const answer = await client.images.generate({ model: 'image-sim', prompt, n: 2 });
    expect(answer.data).toHaveLength(2);
    for (const image of answer.data!) expect(isPng(image.b64_json, 256, 256)).toBe(true);
    expect(answer).toMatchObject({ size: '1024x1024', quality: 'medium', output_format: 'png' });
    const textTokens = countTextTokens(prompt);
    expect(answer.usage).toEqual({ input_tokens: textTokens, output_tokens: 2 * 1_056, total_tokens: textTokens + 2 * 1_056, input_tokens_details: { text_tokens: textTokens, image_tokens: 0 } });
    const wide = await client.images.generate({ model: 'image-sim', prompt, size: '1536x1024', quality: 'high', response_format: 'url' });
    expect(wide.data![0]!.url!.startsWith('data:image/png;base64,')).toBe(true);
    expect(isPng(wide.data![0]!.url!.slice('data:image/png;base64,'.length), 256, 171)).toBe(true);
    const charged = await charges(accountId);
    expect(charged.map((entry) => entry.amountNanos)).toEqual([tokenCost(textTokens, 0, 2 * 1_056), tokenCost(textTokens, 0, simulatedOutputTokens('1536x1024', 'high'))]);
    expect(charged.map((entry) => [entry.inputTokens, entry.outputTokens, entry.surface])).toEqual([
      [textTokens, 2_112, 'image-generations'],
      [textTokens, 6_240, 'image-generations'],
    ]);
  });

  it('generate passed through to an OpenAI-compatible upstream: the body as sent, the model renamed, the reported usage billed', async () => {
    const { accountId, secret } = await harness.newAccount('5');
    const prompt = 'A watercolour of a fox';
    const body = { model: 'image-relay', prompt, n: 3, size: '1024x1536', quality: 'low', background: 'opaque', output_format: 'webp', output_compression: 80, moderation: 'low', user: 'user-1' } as const;
    const answer = await harness.client(secret).images.generate(body);
    expect(answer.data!.map((image) => image.b64_json)).toEqual([DOUBLE_PNG, DOUBLE_PNG, DOUBLE_PNG].map((png) => png.toString('base64')));
    expect(answer).toMatchObject({ size: '1024x1536', quality: 'low', output_format: 'webp', created: 1_767_225_600 });
    expect(double.requests.at(-1)).toMatchObject({ path: '/v1/images/generations', body: { ...body, model: 'gpt-image-1' } });
    expect(double.requests.at(-1)!.headers.authorization).toBe('Bearer sk-upstream');
    expect(await amounts(accountId)).toEqual([tokenCost(3 + wordsIn(prompt), 0, 3 * IMAGE_OUTPUT_TOKENS)]);
  });

  it('a model priced per image pays its images at the tier asked for (dall-e-3), or at the tier the answer says it made', async () => {
    const { accountId, secret } = await harness.newAccount('5');
    const client = harness.client(secret);
    const hd = await client.images.generate({ model: 'dalle-relay', prompt: 'A red bicycle', size: '1792x1024', quality: 'hd', style: 'natural' });
    expect(hd.data).toEqual([{ url: 'https://images.example/0.png', revised_prompt: 'A picture of A red bicycle' }]);
    expect(hd.usage).toBeUndefined();
    const standard = await client.images.generate({ model: 'dalle-relay', prompt: 'Two blue bicycles', size: '1024x1024', quality: 'standard', n: 2, response_format: 'b64_json' });
    expect(standard.data!.map((image) => image.b64_json)).toEqual([DOUBLE_PNG.toString('base64'), DOUBLE_PNG.toString('base64')]);
    // `auto` is held at the dearest tier (1536x1024/high); the upstream made 1024x1024 at high.
    const auto = await client.images.generate({ model: 'gpt-image-priced', prompt: 'A kite' });
    expect(auto).toMatchObject({ size: '1024x1024', quality: 'high' });
    expect(await amounts(accountId)).toEqual([usdToNanos('0.12'), 2n * usdToNanos('0.04'), usdToNanos('0.167')]);
  });

  it('edit with real files and a mask: the upstream gets the very bytes and fields, in order, the model renamed; usage billed', async () => {
    const { accountId, secret } = await harness.newAccount('5');
    const first = solidPng(64, 64, [200, 10, 10]);
    const second = solidPng(32, 48, [10, 200, 10]);
    const mask = solidPng(64, 64, [0, 0, 0]);
    const prompt = 'Put both objects on one table';
    const answer = await harness.client(secret).images.edit({
      model: 'image-relay',
      prompt,
      image: [await toFile(first, 'first.png', { type: 'image/png' }), await toFile(second, 'second.png', { type: 'image/png' })],
      mask: await toFile(mask, 'mask.png', { type: 'image/png' }),
      input_fidelity: 'high',
      quality: 'medium',
      size: '1024x1024',
    });
    expect(answer.data!.map((image) => image.b64_json)).toEqual([DOUBLE_PNG.toString('base64')]);
    const received = double.requests.at(-1)!;
    expect(received.path).toBe('/v1/images/edits');
    expect(received.files.map((file) => [file.field, file.filename, file.contentType])).toEqual([
      ['image[]', 'first.png', 'image/png'],
      ['image[]', 'second.png', 'image/png'],
      ['mask', 'mask.png', 'image/png'],
    ]);
    expect(received.files[0]!.bytes.equals(first)).toBe(true);
    expect(received.files[1]!.bytes.equals(second)).toBe(true);
    expect(received.files[2]!.bytes.equals(mask)).toBe(true);
    expect(received.body).toEqual({ model: 'gpt-image-1', prompt, input_fidelity: 'high', quality: 'medium', size: '1024x1024' });
    expect(await amounts(accountId)).toEqual([tokenCost(3 + wordsIn(prompt), 3 * INPUT_IMAGE_TOKENS, IMAGE_OUTPUT_TOKENS)]);
  });

  it('edit on the simulated provider: one file, its image tokens reported and billed at the image input price', async () => {
    const { accountId, secret } = await harness.newAccount('5');
    const prompt = 'Make it blue';
    const answer = await harness.client(secret).images.edit({ model: 'image-sim', prompt, image: await toFile(solidPng(16, 16, [1, 2, 3]), 'in.png', { type: 'image/png' }), quality: 'low' });
    expect(isPng(answer.data![0]!.b64_json, 256, 256)).toBe(true);
    const textTokens = countTextTokens(prompt);
    expect(answer.usage).toMatchObject({ input_tokens: textTokens + SIMULATED_INPUT_IMAGE_TOKENS, output_tokens: 272 });
    expect(await amounts(accountId)).toEqual([tokenCost(textTokens, SIMULATED_INPUT_IMAGE_TOKENS, 272)]);
  });

  it('stream: partial images then the completed one with its usage, billed before it goes out (simulated and passed through)', async () => {
    const { accountId, secret } = await harness.newAccount('5');
    const client = harness.client(secret);
    const prompt = 'A slow sunrise';
    const events: Array<{ type: string; partial_image_index?: number; b64_json: string }> = [];
    for await (const event of await client.images.generate({ model: 'image-sim', prompt, stream: true, partial_images: 2 })) events.push(event);
    expect(events.map((event) => [event.type, event.partial_image_index])).toEqual([
      ['image_generation.partial_image', 0],
      ['image_generation.partial_image', 1],
      ['image_generation.completed', undefined],
    ]);
    for (const event of events) expect(isPng(event.b64_json, 256, 256)).toBe(true);
    const relayed: Array<{ type: string }> = [];
    const editPrompt = 'Add a moon';
    const stream = await client.images.edit({ model: 'image-relay', prompt: editPrompt, image: await toFile(solidPng(8, 8, [9, 9, 9]), 'a.png', { type: 'image/png' }), stream: true, partial_images: 1 });
    for await (const event of stream) relayed.push(event);
    expect(relayed.map((event) => event.type)).toEqual(['image_edit.partial_image', 'image_edit.completed']);
    expect(relayed[1]).toMatchObject({ usage: { output_tokens: IMAGE_OUTPUT_TOKENS, input_tokens_details: { image_tokens: INPUT_IMAGE_TOKENS } } });
    expect(double.requests.at(-1)!.body).toMatchObject({ model: 'gpt-image-1', stream: 'true', partial_images: '1' });
    expect(await amounts(accountId)).toEqual([tokenCost(countTextTokens(prompt), 0, 1_056), tokenCost(3 + wordsIn(editPrompt), INPUT_IMAGE_TOKENS, IMAGE_OUTPUT_TOKENS)]);
  });

  it('a client that leaves mid-stream stops the upstream, and pays the images its hold says (per image)', async () => {
    const { accountId, secret } = await harness.newAccount('5');
    const before = double.abortedCount();
    const leaving = new AbortController();
    const response = await fetch(`${harness.baseUrl}/v1/images/generations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
      body: JSON.stringify({ model: 'gpt-image-priced', prompt: 'stream-slow lanterns', size: '1024x1024', quality: 'low', stream: true, partial_images: 3 }),
      signal: leaving.signal,
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('event: image_generation.partial_image');
    leaving.abort();
    await waitFor(async () => double.abortedCount() === before + 1);
    expect(await amounts(accountId)).toEqual([usdToNanos('0.011')]);
  });

  it('an upstream stream cut after a partial image ends with an error event; the prompt is billed, no output', async () => {
    const { accountId, secret } = await harness.newAccount('5');
    const response = await harness.post('/v1/images/generations', { model: 'image-relay', prompt: 'stream-cut', stream: true, partial_images: 2 }, secret);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('event: image_generation.partial_image');
    expect(text).toContain('event: error');
    expect(text).not.toContain('image_generation.completed');
    // The upstream had the prompt: its tokens are billed, as on any stream cut after the upstream's 200.
    expect(await amounts(accountId)).toEqual([tokenCost(countTextTokens('stream-cut'), 0, 0)]);
  });

  // The relay target fails here (and may be left cooling down): the tests after this one do not reach it.
  it('an upstream 500 fails over to the next target; alone, a 500, garbage or a garbage stream is the spec\'s 503; none of it billed', async () => {
    const { accountId, secret } = await harness.newAccount('5');
    const prompt = 'answer-500 please';
    const failedOver = await harness.client(secret).images.generate({ model: 'image-failover', prompt });
    expect(isPng(failedOver.data![0]!.b64_json, 256, 256)).toBe(true);
    expect(await amounts(accountId)).toEqual([tokenCost(countTextTokens(prompt), 0, 1_056)]);

    const other = await harness.newAccount('5');
    for (const body of [
      { model: 'image-relay', prompt: 'answer-500' },
      { model: 'image-relay', prompt: 'answer-garbage' },
      { model: 'image-relay', prompt: 'answer-garbage', stream: true },
    ]) {
      const response = await harness.post('/v1/images/generations', body, other.secret);
      expect(response.status, JSON.stringify(body)).toBe(503);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('model_not_found');
    }
    expect(await amounts(other.accountId)).toEqual([]);
  });

  it('bad generations get OpenAI\'s 400, nothing forwarded, nothing billed', async () => {
    const { accountId, secret } = await harness.newAccount('5');
    const before = double.requests.length;
    const cases: Array<[object, string | null, string]> = [
      [{ model: 'image-relay' }, 'prompt', 'missing_required_parameter'],
      [{ prompt: 'a cat' }, 'model', 'missing_required_parameter'],
      [{ model: 'image-relay', prompt: '' }, 'prompt', 'empty_string'],
      [{ model: 'image-relay', prompt: 'a cat', colour: 'red' }, 'colour', 'unknown_parameter'],
      [{ model: 'image-relay', prompt: 'a cat', n: '2' }, 'n', 'invalid_type'],
      [{ model: 'image-relay', prompt: 'a cat', n: 11 }, 'n', 'integer_above_max_value'],
      [{ model: 'image-relay', prompt: 'a cat', size: '640x480' }, 'size', 'invalid_value'],
      [{ model: 'image-relay', prompt: 'a cat', quality: 'ultra' }, 'quality', 'invalid_value'],
      [{ model: 'image-relay', prompt: 'a cat', stream: 'yes' }, 'stream', 'invalid_type'],
      [{ model: 'image-relay', prompt: 'a cat', partial_images: 4 }, 'partial_images', 'integer_above_max_value'],
      [{ model: 'image-relay', prompt: 'a cat', stream: true, n: 2 }, 'n', 'unsupported_value'],
      [{ model: 'image-relay', prompt: 'a cat', input_fidelity: 'high' }, 'input_fidelity', 'unknown_parameter'],
      [{ model: 'dalle-relay', prompt: 'a cat', size: '256x256' }, 'size', 'invalid_value'],
      [{ model: 'chat-model', prompt: 'a cat' }, 'model', 'model_not_found'],
    ];
    for (const [body, param, code] of cases) {
      const response = await harness.post('/v1/images/generations', body, secret);
      expect(response.status, JSON.stringify(body)).toBe(code === 'model_not_found' ? 404 : 400);
      expect(((await response.json()) as { error: { param: string | null; code: string } }).error, JSON.stringify(body)).toMatchObject({ param, code });
    }
    expect(double.requests.length).toBe(before);
    expect(await amounts(accountId)).toEqual([]);
  });

  it('bad edits get a 400 (a text where a file is due, no file, a JSON body, an unknown field), an oversized upload a 413; nothing billed', async () => {
    const { accountId, secret } = await harness.newAccount('5');
    const before = double.requests.length;
    const png = new Blob([solidPng(4, 4, [1, 1, 1])], { type: 'image/png' });
    const form = (parts: Array<[string, string | Blob]>): FormData => {
      const data = new FormData();
      for (const [name, value] of parts) {
        if (typeof value === 'string') data.append(name, value);
        else data.append(name, value, 'file.png');
      }
      return data;
    };
    const post = (body: FormData | string, contentType?: string) =>
      fetch(`${harness.baseUrl}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${secret}`, ...(contentType === undefined ? {} : { 'content-type': contentType }) }, body });
    const cases: Array<[FormData, string, string]> = [
      [form([['model', 'image-relay'], ['prompt', 'x'], ['image', 'not a file']]), 'image', 'invalid_type'],
      [form([['model', 'image-relay'], ['prompt', 'x']]), 'image', 'missing_required_parameter'],
      [form([['model', 'image-relay'], ['image', png]]), 'prompt', 'missing_required_parameter'],
      [form([['model', 'image-relay'], ['prompt', 'x'], ['image', png], ['mask', 'nope']]), 'mask', 'invalid_type'],
      [form([['model', 'image-relay'], ['prompt', 'x'], ['image', png], ['prompt', 'twice']]), 'prompt', 'invalid_type'],
      [form([['model', 'image-relay'], ['prompt', 'x'], ['image', png], ['style', 'vivid']]), 'style', 'unknown_parameter'],
      [form([['model', 'image-relay'], ['prompt', 'x'], ['image', png], ['n', 'two']]), 'n', 'invalid_type'],
      [form([['model', 'dalle-relay'], ['prompt', 'x'], ['image', png], ['size', '512x512']]), 'size', 'invalid_value'],
    ];
    for (const [body, param, code] of cases) {
      const response = await post(body);
      expect(response.status, `${param} ${code}`).toBe(400);
      expect(((await response.json()) as { error: { param: string; code: string } }).error).toMatchObject({ param, code });
    }
    const json = await post(JSON.stringify({ model: 'image-relay', prompt: 'x', image: 'data:image/png;base64,AAAA' }), 'application/json');
    expect(json.status).toBe(400);
    expect(((await json.json()) as { error: { code: string } }).error.code).toBe('invalid_content_type');
    const large = await post(form([['model', 'image-relay'], ['prompt', 'x'], ['image', new Blob([Buffer.alloc(200 * 1024, 7)], { type: 'image/png' })]]));
    expect(large.status).toBe(413);
    expect(((await large.json()) as { error: { code: string } }).error.code).toBe('request_too_large');
    expect(double.requests.length).toBe(before);
    expect(await amounts(accountId)).toEqual([]);
  });
});
