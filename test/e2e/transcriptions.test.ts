/**
 * `POST /v1/audio/transcriptions` and `POST /v1/audio/translations` end to end, on SQLite and on
 * PostgreSQL + Redis, with real speech (espeak-ng) sent by the official openai client from a file
 * stream: every response format from the simulated model (its text drawn from the measured
 * duration) and from an OpenAI-compatible upstream (the file's bytes arriving as sent, the fields
 * forwarded with the upstream's model name), streamed transcripts, and the bill to the nano: the
 * duration measured from the file (music-metadata, as the gateway reads it) when nothing is
 * reported, the upstream's seconds, or its tokens. Bad input, a client gone during its upload and
 * an upstream failure cost nothing.
 */
import { createReadStream, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costOfTokens, usdToNanos } from '../../src/billing/money.js';
import { simulatedText, simulatedWords } from '../../src/providers/simulated/transcriptions.js';
import { doubleDocument, doubleTranscript, doubleUsage, startAudioUpstream, wavSeconds, type AudioDouble } from '../support/audio-upstream.js';
import { engines } from '../support/databases.js';
import { settledCharges } from '../support/charges.js';
import { startHarness, type Harness } from '../support/harness.js';
import { audioFolder, espeakMissing, measuredMilliseconds, type AudioFolder } from '../support/spoken-audio.js';

const AUDIO_SECOND = '0.0001';
const PER_SECOND = usdToNanos(AUDIO_SECOND);
const TOKEN_INPUT = '2.5';
const TOKEN_OUTPUT = '10';
const UPLOAD_LIMIT = 256 * 1024;

/** The cost of `ms` of audio, as billed: by the millisecond at the price per second, rounded up to the nano. */
function audioCost(ms: number): bigint {
  return (BigInt(ms) * PER_SECOND + 999n) / 1000n;
}

function audioCatalog(double: AudioDouble): unknown {
  const both = ['transcriptions', 'translations'];
  const perSecond = { input: '0', output: '0', audio_second: AUDIO_SECOND };
  return {
    providers: [
      { name: 'sim', type: 'simulated', pace_ms: 2 },
      { name: 'relay', type: 'openai', base_url: double.baseUrl, api_key_env: 'TEST_UPSTREAM_KEY' },
    ],
    models: [
      { id: 'transcribe-sim', endpoints: both, prices: perSecond, targets: [{ provider: 'sim', model: 'transcribe-sim' }] },
      { id: 'whisper-relay', endpoints: both, prices: perSecond, targets: [{ provider: 'relay', model: 'whisper-1' }] },
      { id: 'duration-relay', endpoints: both, prices: perSecond, targets: [{ provider: 'relay', model: 'duration-model' }] },
      {
        id: 'tokens-relay',
        endpoints: ['transcriptions'],
        prices: { input: TOKEN_INPUT, output: TOKEN_OUTPUT },
        max_output_tokens: 2_000,
        targets: [{ provider: 'relay', model: 'gpt-tokens-transcribe' }],
      },
      { id: 'chat-model', prices: { input: '1', output: '4' }, targets: [{ provider: 'sim', model: 'chat-model' }] },
    ],
    rate_limits: { requests: 10_000, window_seconds: 60, tokens_per_minute: 0 },
    limits: { max_upload_bytes: { transcriptions: UPLOAD_LIMIT, translations: UPLOAD_LIMIT } },
  };
}

const missing = espeakMissing();

describe.skipIf(missing !== null).each(engines)('transcriptions on %s', (engine) => {
  let harness: Harness;
  let double: AudioDouble;
  let folder: AudioFolder;
  let wav: string;
  let wavBytes: Buffer;
  let measured: number;

  beforeAll(async () => {
    folder = audioFolder();
    wav = folder.speak('hello', 'Hello from the gateway. Every second of this is billed.');
    wavBytes = readFileSync(wav);
    measured = await measuredMilliseconds(wav);
    double = await startAudioUpstream();
    harness = await startHarness({ engine, catalog: audioCatalog(double), env: { TEST_UPSTREAM_KEY: 'sk-upstream' } });
  }, 60_000);

  afterAll(async () => {
    await harness?.close();
    await double?.close();
    folder?.remove();
  });

  /** The account's charges once its holds are settled; the balance moved by exactly them. */
  const charges = async (accountId: string, startUsd = '1'): Promise<bigint[]> => (await settledCharges(harness, accountId, startUsd, { excess: 'allowed' })).map((entry) => entry.amountNanos);

  const simulated = (endpoint: 'transcriptions' | 'translations') => simulatedText(simulatedWords({ endpoint, durationMs: measured, file: { size: wavBytes.length } }));

  it('the openai client, every format from the simulated model: its text drawn from the duration, the measured duration billed each time', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const client = harness.client(secret);
    expect(measured).toBeGreaterThan(2_000);
    const json = await client.audio.transcriptions.create({ file: createReadStream(wav), model: 'transcribe-sim' });
    expect(json).toEqual({ text: simulated('transcriptions') });
    const text = await client.audio.transcriptions.create({ file: createReadStream(wav), model: 'transcribe-sim', response_format: 'text' });
    expect(text).toBe(`${simulated('transcriptions')}\n`);
    const srt = await client.audio.transcriptions.create({ file: createReadStream(wav), model: 'transcribe-sim', response_format: 'srt' });
    expect(srt).toMatch(/^1\n00:00:00,000 --> 00:00:0\d,\d{3}\n\w/);
    const vtt = await client.audio.transcriptions.create({ file: createReadStream(wav), model: 'transcribe-sim', response_format: 'vtt' });
    expect(vtt).toMatch(/^WEBVTT\n\n00:00:00\.000 --> 00:00:0\d\.\d{3}\n\w/);
    const verbose = await client.audio.transcriptions.create({
      file: createReadStream(wav),
      model: 'transcribe-sim',
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
      language: 'en',
    });
    expect(verbose.duration).toBe(measured / 1000);
    expect(verbose.text).toBe(simulated('transcriptions'));
    expect(verbose.words?.length).toBe(simulated('transcriptions').split(' ').length);
    expect(verbose.words?.at(-1)?.end).toBe(measured / 1000);
    expect(verbose.segments?.[0]?.start).toBe(0);
    expect(await charges(accountId)).toEqual(Array.from({ length: 5 }, () => audioCost(measured)));
  });

  it('translations through the openai client, simulated and passed through; the measured duration billed when nothing is reported', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const client = harness.client(secret);
    const simulatedAnswer = await client.audio.translations.create({ file: createReadStream(wav), model: 'transcribe-sim' });
    expect(simulatedAnswer.text).toBe(simulated('translations'));
    const relayed = await client.audio.translations.create({ file: createReadStream(wav), model: 'whisper-relay', prompt: 'An English prompt.', temperature: 0.2 });
    expect(relayed.text).toBe(doubleTranscript({ filename: 'hello.wav', bytes: wavBytes }, 'translations'));
    const forwarded = double.requests.at(-1)!;
    expect(forwarded.path).toBe('/v1/audio/translations');
    expect(forwarded.headers.authorization).toBe('Bearer sk-upstream');
    expect(Object.fromEntries(forwarded.fields)).toEqual({ model: 'whisper-1', prompt: 'An English prompt.', temperature: '0.2' });
    expect(forwarded.files).toHaveLength(1);
    expect(forwarded.files[0]!.filename).toBe('hello.wav');
    expect(forwarded.files[0]!.bytes.equals(wavBytes)).toBe(true);
    expect(await charges(accountId)).toEqual([audioCost(measured), audioCost(measured)]);
  });

  it('a streamed transcript from the simulated model: deltas then the whole text; the measured duration billed', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const stream = await harness.client(secret).audio.transcriptions.create({ file: createReadStream(wav), model: 'transcribe-sim', stream: true });
    let deltas = '';
    const types: string[] = [];
    let done: string | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'transcript.text.delta') deltas += event.delta;
      if (event.type === 'transcript.text.done') done = event.text;
    }
    expect(types.at(-1)).toBe('transcript.text.done');
    expect(types.filter((type) => type === 'transcript.text.delta').length).toBe(simulated('transcriptions').split(' ').length);
    expect(deltas).toBe(simulated('transcriptions'));
    expect(done).toBe(simulated('transcriptions'));
    expect(await charges(accountId)).toEqual([audioCost(measured)]);
  });

  it('passed through: the upstream\'s seconds billed, its text formats as text, its usage as it sent it', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const client = harness.client(secret);
    const seconds = wavSeconds(wavBytes);
    const reportedMs = Math.round(Math.floor(seconds * 10) * 100);
    const json = await client.audio.transcriptions.create({ file: createReadStream(wav), model: 'duration-relay', language: 'en' });
    const transcript = doubleTranscript({ filename: 'hello.wav', bytes: wavBytes }, 'transcriptions');
    expect(json).toEqual({ text: transcript, usage: doubleUsage('duration-model', seconds, '', transcript) });
    expect(double.requests.at(-1)!.files[0]!.bytes.equals(wavBytes)).toBe(true);
    expect(double.requests.at(-1)!.fields).toEqual([
      ['model', 'duration-model'],
      ['language', 'en'],
    ]);
    const verbose = await client.audio.transcriptions.create({ file: createReadStream(wav), model: 'duration-relay', response_format: 'verbose_json' });
    expect(verbose.usage).toEqual({ type: 'duration', seconds: reportedMs / 1000 });
    for (const format of ['text', 'srt', 'vtt'] as const) {
      const answer = await client.audio.transcriptions.create({ file: createReadStream(wav), model: 'duration-relay', response_format: format });
      expect(answer).toBe(doubleDocument(format, transcript, seconds));
    }
    const raw = new FormData();
    raw.append('file', new Blob([wavBytes], { type: 'audio/wav' }), 'hello.wav');
    raw.append('model', 'duration-relay');
    raw.append('response_format', 'srt');
    const response = await fetch(`${harness.baseUrl}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${secret}` }, body: raw });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    // json and verbose_json reported seconds; text, srt and vtt (four times) carry no usage: the measured duration.
    expect(reportedMs).toBeLessThanOrEqual(measured);
    expect(await charges(accountId)).toEqual([audioCost(reportedMs), audioCost(reportedMs), ...Array.from({ length: 4 }, () => audioCost(measured))]);
  });

  it('a token-billed model: its reported tokens billed at the token prices, nothing by the second; streamed too', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const client = harness.client(secret);
    const prompt = 'Names: Tollgate, espeak.';
    const answer = await client.audio.transcriptions.create({ file: createReadStream(wav), model: 'tokens-relay', prompt, include: ['logprobs'] });
    const transcript = doubleTranscript({ filename: 'hello.wav', bytes: wavBytes }, 'transcriptions');
    const usage = doubleUsage('gpt-tokens-transcribe', wavSeconds(wavBytes), prompt, transcript) as { input_tokens: number; output_tokens: number };
    expect(answer.usage).toEqual(usage);
    expect(double.requests.at(-1)!.fields).toEqual([
      ['model', 'gpt-tokens-transcribe'],
      ['prompt', prompt],
      ['include[]', 'logprobs'],
    ]);
    const stream = await client.audio.transcriptions.create({ file: createReadStream(wav), model: 'tokens-relay', stream: true });
    const events: Array<{ type: string; usage?: unknown }> = [];
    for await (const event of stream) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: 'transcript.text.done', text: transcript, usage: doubleUsage('gpt-tokens-transcribe', wavSeconds(wavBytes), '', transcript) });
    const streamed = doubleUsage('gpt-tokens-transcribe', wavSeconds(wavBytes), '', transcript) as { input_tokens: number; output_tokens: number };
    const cost = (tokens: { input_tokens: number; output_tokens: number }) => costOfTokens(tokens.input_tokens, usdToNanos(TOKEN_INPUT)) + costOfTokens(tokens.output_tokens, usdToNanos(TOKEN_OUTPUT));
    expect(await charges(accountId)).toEqual([cost(usage), cost(streamed)]);
  });

  it('whisper ignores stream: the JSON answer is passed on', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const form = new FormData();
    form.append('file', new Blob([wavBytes], { type: 'audio/wav' }), 'hello.wav');
    form.append('model', 'whisper-relay');
    form.append('stream', 'true');
    const response = await fetch(`${harness.baseUrl}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${secret}` }, body: form });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ text: doubleTranscript({ filename: 'hello.wav', bytes: wavBytes }, 'transcriptions') });
    expect(await charges(accountId)).toEqual([audioCost(measured)]);
  });

  /** A multipart request built by hand: `parts` in order, a part with a filename is a file. */
  function send(path: string, secret: string, parts: Array<[string, string | { bytes: Buffer | string; filename: string; type?: string }]>): Promise<Response> {
    const form = new FormData();
    for (const [name, value] of parts) {
      if (typeof value === 'string') form.append(name, value);
      else form.append(name, new Blob([value.bytes], { type: value.type ?? 'audio/wav' }), value.filename);
    }
    return fetch(`${harness.baseUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${secret}` }, body: form });
  }

  it('bad input gets a 400 naming the field (413 past the limit), and costs nothing', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const audio = { bytes: wavBytes, filename: 'hello.wav' };
    const cases: Array<[string, Array<[string, string | { bytes: Buffer | string; filename: string; type?: string }]>, number, string | null, string]> = [
      ['/v1/audio/transcriptions', [['model', 'transcribe-sim']], 400, 'file', 'missing_required_parameter'],
      ['/v1/audio/transcriptions', [['model', 'transcribe-sim'], ['file', 'not a file']], 400, 'file', 'invalid_type'],
      ['/v1/audio/transcriptions', [['model', 'transcribe-sim'], ['file', { bytes: 'this is plain text, renamed to look like audio\n'.repeat(20), filename: 'notes.wav' }]], 400, 'file', 'invalid_value'],
      ['/v1/audio/transcriptions', [['model', 'transcribe-sim'], ['file', { bytes: 'text', filename: 'notes.txt', type: 'text/plain' }]], 400, 'file', 'invalid_value'],
      ['/v1/audio/transcriptions', [['model', 'transcribe-sim'], ['file', audio], ['pitch', '2']], 400, 'pitch', 'unknown_parameter'],
      ['/v1/audio/transcriptions', [['file', audio]], 400, 'model', 'missing_required_parameter'],
      ['/v1/audio/transcriptions', [['model', 'transcribe-sim'], ['file', audio], ['response_format', 'mp3']], 400, 'response_format', 'invalid_value'],
      ['/v1/audio/transcriptions', [['model', 'transcribe-sim'], ['file', audio], ['temperature', 'hot']], 400, 'temperature', 'invalid_type'],
      ['/v1/audio/transcriptions', [['model', 'transcribe-sim'], ['file', audio], ['temperature', '1.5']], 400, 'temperature', 'decimal_above_max_value'],
      ['/v1/audio/transcriptions', [['model', 'transcribe-sim'], ['file', audio], ['timestamp_granularities[]', 'word']], 400, 'timestamp_granularities', 'invalid_value'],
      ['/v1/audio/transcriptions', [['model', 'transcribe-sim'], ['file', audio], ['stream', 'yes']], 400, 'stream', 'invalid_type'],
      ['/v1/audio/transcriptions', [['model', 'transcribe-sim'], ['file', audio], ['include[]', 'tokens']], 400, 'include', 'invalid_value'],
      ['/v1/audio/transcriptions', [['model', 'transcribe-sim'], ['file', audio], ['chunking_strategy', 'sometimes']], 400, 'chunking_strategy', 'invalid_value'],
      ['/v1/audio/translations', [['model', 'transcribe-sim'], ['file', audio], ['language', 'fr']], 400, 'language', 'unknown_parameter'],
      ['/v1/audio/translations', [['model', 'transcribe-sim'], ['file', audio], ['stream', 'true']], 400, 'stream', 'unknown_parameter'],
      ['/v1/audio/translations', [['model', 'tokens-relay'], ['file', audio]], 404, 'model', 'model_not_found'],
      ['/v1/audio/transcriptions', [['model', 'chat-model'], ['file', audio]], 404, 'model', 'model_not_found'],
      ['/v1/audio/transcriptions', [['model', 'transcribe-sim'], ['file', { bytes: Buffer.alloc(1024 * 1024, 1), filename: 'big.wav' }]], 413, 'field', 'request_too_large'],
    ];
    for (const [path, parts, status, param, code] of cases) {
      const response = await send(path, secret, parts);
      const label = `${path} ${JSON.stringify(parts.map(([name, value]) => [name, typeof value === 'string' ? value : value.filename]))}`;
      expect(response.status, label).toBe(status);
      // The 413 is the gateway's own, before any field is read: it names no field.
      expect(((await response.json()) as { error: { param: string | null; code: string } }).error, label).toMatchObject(status === 413 ? { code } : { param, code });
    }
    const fake = await send('/v1/audio/transcriptions', secret, [['model', 'transcribe-sim'], ['file', { bytes: 'plain text\n', filename: 'notes.wav' }]]);
    expect(((await fake.json()) as { error: { message: string } }).error.message).toMatch(/^Invalid file: /);
    const json = await harness.post('/v1/audio/transcriptions', { model: 'transcribe-sim', file: 'hello.wav' }, secret);
    expect(json.status).toBe(400);
    expect(((await json.json()) as { error: { code: string } }).error.code).toBe('invalid_content_type');
    expect(await charges(accountId)).toEqual([]);
  });

  it('an upstream that fails (a 500, garbage in a 200) costs nothing; a stream cut after its 200 bills the measured duration', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const broken = await send('/v1/audio/transcriptions', secret, [['model', 'duration-relay'], ['prompt', 'stream-breaks'], ['stream', 'true'], ['file', { bytes: wavBytes, filename: 'hello.wav' }]]);
    const events = await broken.text();
    expect(events).toContain('transcript.text.delta');
    expect(events).toContain('event: error');
    for (const prompt of ['answer-500', 'answer-garbage']) {
      const response = await send('/v1/audio/transcriptions', secret, [['model', 'duration-relay'], ['prompt', prompt], ['file', { bytes: wavBytes, filename: 'hello.wav' }]]);
      expect(response.status, prompt).toBeGreaterThanOrEqual(500);
    }
    // A stream cut after its 200 is billed what the request measured (the upstream worked on it): no report came.
    expect(await charges(accountId)).toEqual([audioCost(measured)]);
  });

  it('a client that leaves during its upload is billed nothing: no hold was placed yet', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const boundary = '----tollgate-test-boundary';
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\ntranscribe-sim\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="hello.wav"\r\nContent-Type: audio/wav\r\n\r\n`);
    const url = new URL(`${harness.baseUrl}/v1/audio/transcriptions`);
    await new Promise<void>((resolve) => {
      const request = httpRequest({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + wavBytes.length + 100) },
      });
      request.on('error', () => resolve());
      request.write(head);
      request.write(wavBytes.subarray(0, wavBytes.length / 2), () => {
        setTimeout(() => {
          request.destroy();
          resolve();
        }, 100);
      });
    });
    // The gateway is still serving, and nothing was held or billed.
    const after = await harness.client(secret).audio.transcriptions.create({ file: createReadStream(wav), model: 'transcribe-sim' });
    expect(after.text).toBe(simulated('transcriptions'));
    expect(await charges(accountId)).toEqual([audioCost(measured)]);
  });
});
