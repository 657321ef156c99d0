/**
 * `POST /v1/audio/speech` end to end, on SQLite and on PostgreSQL + Redis: the official openai
 * client streams the audio to a file (a WAV from the simulated provider, whose header and length
 * are checked; the upstream's own bytes and content type on pass-through), the first bytes reach
 * the client before the upstream has finished, a client that leaves mid-speech stops the upstream
 * call, and the bill is the input's characters at the model's price, to the nano, known before the
 * call. Bad input costs nothing.
 */
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costOfTokens, usdToNanos } from '../../src/billing/money.js';
import { speechCharacters } from '../../src/protocol/speech.js';
import { simulatedSampleCount, simulatedSpeechUsage } from '../../src/providers/simulated/speech.js';
import { engines } from '../support/databases.js';
import { SPEECH_EVENT_USAGE, speechChunk, startEmbeddingsUpstream, type EmbeddingsDouble } from '../support/embeddings-upstream.js';
import { startHarness, type Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';

const PRICE = '15';
const OUTPUT_PRICE = '12';

/** The JSON of each `data:` line of an SSE body. */
function sseData(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice('data: '.length)) as Record<string, unknown>);
}

function speechCatalog(double: EmbeddingsDouble): unknown {
  const speechModel = (id: string, provider: string, upstream: string) => ({ id, endpoints: ['speech'], prices: { input: PRICE, output: OUTPUT_PRICE }, targets: [{ provider, model: upstream }] });
  return {
    providers: [
      { name: 'sim', type: 'simulated' },
      { name: 'relay', type: 'openai', base_url: double.openaiBaseUrl, api_key_env: 'TEST_UPSTREAM_KEY' },
    ],
    models: [speechModel('speech-sim', 'sim', 'tts-sim'), speechModel('speech-relay', 'relay', 'tts-1')],
    rate_limits: { requests: 10_000, window_seconds: 60, tokens_per_minute: 0 },
  };
}

describe.each(engines)('speech on %s', (engine) => {
  let harness: Harness;
  let double: EmbeddingsDouble;
  let folder: string;

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'tollgate-speech-'));
    double = await startEmbeddingsUpstream();
    harness = await startHarness({ engine, catalog: speechCatalog(double), env: { TEST_UPSTREAM_KEY: 'sk-upstream' } });
  }, 60_000);

  afterAll(async () => {
    await harness?.close();
    await double?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  async function charges(accountId: string) {
    await waitFor(async () => (await harness.store.countOpenHolds(accountId)) === 0);
    return (await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge').map((entry) => entry.amountNanos);
  }

  it('the openai client streams a WAV to a file: its header and length as spoken, the characters billed', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const input = 'Hello from the gateway, in a simulated voice 🙂';
    const response = await harness.client(secret).audio.speech.create({ model: 'speech-sim', voice: 'alloy', input, response_format: 'wav' });
    expect(response.headers.get('content-type')).toBe('audio/wav');
    const file = join(folder, `${engine}.wav`);
    await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream), createWriteStream(file));
    const audio = readFileSync(file);
    const samples = simulatedSampleCount(input);
    expect(audio.subarray(0, 4).toString('ascii')).toBe('RIFF');
    expect(audio.subarray(8, 12).toString('ascii')).toBe('WAVE');
    expect(audio.readUInt32LE(24)).toBe(24_000);
    expect(audio.readUInt32LE(40)).toBe(samples * 2);
    expect(audio.length).toBe(44 + samples * 2);
    // The emoji is one character, as billed.
    expect(speechCharacters(input)).toBe(input.length - 1);
    expect(await charges(accountId)).toEqual([costOfTokens(speechCharacters(input), usdToNanos(PRICE))]);
  });

  it('pcm is the raw samples; mp3 from a provider without an encoder is its 400, and costs nothing', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const pcm = await harness.post('/v1/audio/speech', { model: 'speech-sim', voice: 'nova', input: 'raw', response_format: 'pcm' }, secret);
    expect(pcm.status).toBe(200);
    expect(pcm.headers.get('content-type')).toBe('audio/pcm');
    expect((await pcm.arrayBuffer()).byteLength).toBe(simulatedSampleCount('raw') * 2);
    const mp3 = await harness.post('/v1/audio/speech', { model: 'speech-sim', voice: 'nova', input: 'compressed' }, secret);
    expect(mp3.status).toBe(400);
    expect(((await mp3.json()) as { error: { message: string } }).error.message).toContain('The simulated provider speaks wav and pcm only, not mp3.');
    expect(await charges(accountId)).toEqual([costOfTokens(3, usdToNanos(PRICE))]);
  });

  it('an OpenAI-compatible upstream is passed through: its bytes and content type, its first bytes before its last are sent', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const body = { model: 'speech-relay', voice: { id: 'voice_custom' }, input: 'Read this aloud.', speed: 1.25, instructions: 'Calmly.' };
    const response = await harness.post('/v1/audio/speech', body, secret);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('audio/mpeg');
    const reader = response.body!.getReader();
    const first = await reader.read();
    const firstAt = Date.now();
    const chunks: Uint8Array[] = [first.value!];
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      chunks.push(next.value);
    }
    expect(firstAt).toBeLessThan(double.speechEnds.at(-1)!);
    expect(Buffer.concat(chunks)).toEqual(Buffer.concat(Array.from({ length: 10 }, (_, index) => speechChunk(body.input, index))));
    expect(double.requests.at(-1)).toMatchObject({ path: '/v1/audio/speech', body: { ...body, model: 'tts-1' } });
    expect(await charges(accountId)).toEqual([costOfTokens(speechCharacters(body.input), usdToNanos(PRICE))]);
  });

  it('a client that leaves mid-speech stops the upstream call, and is billed what the upstream was asked to say', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const before = double.abortedCount();
    const leaving = new AbortController();
    const input = 'speak-slowly for a long while';
    const response = await fetch(`${harness.baseUrl}/v1/audio/speech`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
      body: JSON.stringify({ model: 'speech-relay', voice: 'alloy', input }),
      signal: leaving.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    leaving.abort();
    await waitFor(async () => double.abortedCount() === before + 1);
    expect(await charges(accountId)).toEqual([costOfTokens(speechCharacters(input), usdToNanos(PRICE))]);
  });

  it('stream_format sse: the upstream\'s events as they are, its reported tokens billed in place of the characters', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const response = await harness.post('/v1/audio/speech', { model: 'speech-relay', voice: 'alloy', input: 'events please', stream_format: 'sse' }, secret);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = sseData(await response.text());
    expect(events.map((event) => event.type)).toEqual(['speech.audio.delta', 'speech.audio.delta', 'speech.audio.delta', 'speech.audio.done']);
    expect(Buffer.from(String(events[1]?.audio), 'base64')).toEqual(speechChunk('events please', 1));
    expect(events[3]?.usage).toEqual(SPEECH_EVENT_USAGE);
    const expected = costOfTokens(SPEECH_EVENT_USAGE.input_tokens, usdToNanos(PRICE)) + costOfTokens(SPEECH_EVENT_USAGE.output_tokens, usdToNanos(OUTPUT_PRICE));
    expect(await charges(accountId)).toEqual([expected]);
  });

  it('stream_format sse on the simulated voice: base64 WAV deltas, then the usage it reports, billed', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const input = 'simulated events';
    const response = await harness.post('/v1/audio/speech', { model: 'speech-sim', voice: 'nova', input, response_format: 'pcm', stream_format: 'sse' }, secret);
    expect(response.status).toBe(200);
    const events = sseData(await response.text());
    const done = events.at(-1);
    expect(done?.type).toBe('speech.audio.done');
    const audio = Buffer.concat(events.slice(0, -1).map((event) => Buffer.from(String(event.audio), 'base64')));
    expect(audio.length).toBe(simulatedSampleCount(input) * 2);
    const usage = simulatedSpeechUsage(input);
    expect(done?.usage).toEqual(usage);
    expect(await charges(accountId)).toEqual([costOfTokens(usage.input_tokens, usdToNanos(PRICE)) + costOfTokens(usage.output_tokens, usdToNanos(OUTPUT_PRICE))]);
  });

  it('stream_format sse that breaks off: an error event ends the stream, and the characters held are billed', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const input = 'answer-garbage please';
    const response = await harness.post('/v1/audio/speech', { model: 'speech-relay', voice: 'alloy', input, stream_format: 'sse' }, secret);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('event: error');
    expect(sseData(text).at(-1)).toMatchObject({ error: { type: 'server_error', code: 'upstream_error' } });
    expect(await charges(accountId)).toEqual([costOfTokens(speechCharacters(input), usdToNanos(PRICE))]);
  });

  it('bad input gets OpenAI\'s 400 and costs nothing', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const cases: Array<[object, string, string]> = [
      [{ model: 'speech-relay', voice: 'alloy', input: 'x'.repeat(4_097) }, 'input', 'string_above_max_length'],
      [{ model: 'speech-relay', voice: 'alloy', input: '' }, 'input', 'empty_string'],
      [{ model: 'speech-relay', input: 'hi' }, 'voice', 'missing_required_parameter'],
      [{ model: 'speech-relay', voice: 'alloy', input: 'hi', response_format: 'ogg' }, 'response_format', 'invalid_value'],
      [{ model: 'speech-relay', voice: 'alloy', input: 'hi', speed: 9 }, 'speed', 'decimal_above_max_value'],
      [{ model: 'speech-relay', voice: 'alloy', input: 'hi', stream_format: 'json' }, 'stream_format', 'invalid_value'],
      [{ model: 'speech-relay', voice: 'alloy', input: 'hi', pitch: 2 }, 'pitch', 'unknown_parameter'],
    ];
    for (const [body, param, code] of cases) {
      const response = await harness.post('/v1/audio/speech', body, secret);
      expect(response.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect(((await response.json()) as { error: { param: string; code: string } }).error).toMatchObject({ param, code });
    }
    expect(await charges(accountId)).toEqual([]);
  });
});
