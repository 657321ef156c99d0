/**
 * One rule for the `model` of every answer: the catalog id the client asked for, on both surfaces,
 * streamed or not, whether the route passes the request through or translates it (OpenAI echoes
 * the requested model too). The upstreams name their own model in every capture; it never shows.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readCapture } from '../support/captures.js';
import { startHarness, type Harness } from '../support/harness.js';
import { baseUrlOf, doubleReplaying, KEY_ENV, PROVIDER_NAME, PROVIDERS, rawEntry, SECRET, type ProviderEntry } from '../conformance/provider-table.js';

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close();
});

const CATALOG_ID = 'named-by-the-catalog';

/** Every provider entry, each answering text whether asked to stream or not. */
async function gatewayFor(entry: ProviderEntry) {
  const double = await doubleReplaying(entry, (request) => (request.headers.accept === 'text/event-stream' ? entry.captures.text : entry.captures.wholeText));
  const harness = await startHarness({
    catalog: {
      providers: [rawEntry(entry, baseUrlOf(entry, double))],
      models: [{ id: CATALOG_ID, prices: { input: '1', output: '4' }, max_output_tokens: 256, targets: [{ provider: PROVIDER_NAME, model: entry.upstreamModel }] }],
    },
    env: { [KEY_ENV]: SECRET },
  });
  harnesses.push(harness);
  const { secret } = await harness.newAccount('5');
  return { harness, secret };
}

describe.each(PROVIDERS.map((entry) => [entry.label, entry] as const))('the answer names the catalog model, through %s', (_label, entry) => {
  it('on /v1/responses and /v1/chat/completions, streamed and not', async () => {
    const { harness, secret } = await gatewayFor(entry);
    const client = harness.client(secret);

    const response = await client.responses.create({ model: CATALOG_ID, input: 'Say hello.' });
    expect(response.model).toBe(CATALOG_ID);
    const models: string[] = [];
    for await (const event of await client.responses.create({ model: CATALOG_ID, input: 'Say hello.', stream: true })) {
      if ('response' in event) models.push(event.response.model);
    }
    expect(models.length).toBeGreaterThan(0);
    expect(new Set(models)).toEqual(new Set([CATALOG_ID]));

    const completion = await client.chat.completions.create({ model: CATALOG_ID, messages: [{ role: 'user', content: 'Say hello.' }] });
    expect(completion.model).toBe(CATALOG_ID);
    const chunkModels = new Set<string>();
    for await (const chunk of await client.chat.completions.create({ model: CATALOG_ID, messages: [{ role: 'user', content: 'Say hello.' }], stream: true })) {
      chunkModels.add(chunk.model);
    }
    expect(chunkModels).toEqual(new Set([CATALOG_ID]));
  });
});

describe('a non-streamed pass-through answer', () => {
  it.each([
    ['openai (chat)', '/v1/chat/completions', { model: CATALOG_ID, messages: [{ role: 'user', content: 'Say hello.' }] }],
    ['openai (responses)', '/v1/responses', { model: CATALOG_ID, input: 'Say hello.' }],
  ] as const)('through %s is the upstream\'s bytes, but for the model', async (label, path, body) => {
    const entry = PROVIDERS.find((candidate) => candidate.label === label)!;
    const { harness, secret } = await gatewayFor(entry);
    const response = await harness.post(path, body, secret);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const text = await response.text();
    const capture = readCapture(entry.captures.wholeText.folder, entry.captures.wholeText.file);
    // The capture is pretty-printed: its layout reaching the client shows nothing was serialized anew.
    expect(text).toBe(capture.replace(`"model": "${entry.upstreamModel}"`, `"model": "${CATALOG_ID}"`));
    expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(text));
  });
});
