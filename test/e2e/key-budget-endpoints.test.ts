/**
 * One key's budget spent across every endpoint at once (issue 18; a peer's budgets that skipped
 * some endpoints let agents spend past their caps): 70 concurrent requests on a budget that covers
 * about 10, spread over chat, Responses, Messages, embeddings, speech (billed by its characters),
 * image generations (per image, by tier) and transcriptions (per second of the uploaded audio). The upstreams report far more
 * usage than any hold covers, so each charge is its request's hold (the excess recorded): then the
 * key spends at most its budget, every charge is its hold, and what is left is less than the hold of
 * any request that was refused, whichever endpoint it came by. On SQLite and PostgreSQL + Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { formatUsd } from '../../src/billing/money.js';
import type { PricedUnits } from '../../src/protocol/canonical.js';
import { speechCharacters } from '../../src/protocol/speech.js';
import { boundInputTokens } from '../../src/protocol/input-bound.js';
import { adminClient } from '../support/admin-client.js';
import { testCatalog } from '../support/catalog.js';
import { engines } from '../support/databases.js';
import { startEmbeddingsUpstream, type EmbeddingsDouble } from '../support/embeddings-upstream.js';
import { startHarness, type Harness } from '../support/harness.js';
import { measuredMilliseconds, silentWav } from '../support/spoken-audio.js';
import { waitFor } from '../support/wait-for.js';
import { startOpenAIUpstream, type UpstreamDouble } from '../support/openai-upstream.js';

const overReporting = () => ({ prompt_tokens: 5_000_000, completion_tokens: 1_000_000, total_tokens: 6_000_000 });

interface BudgetRequest {
  path: string;
  /** JSON, or a multipart upload (its fields, the file under `file`). */
  body: Record<string, unknown>;
  upload?: true;
  model: string;
  maxOutputTokens: number;
  /** What the request bills each (speech: its characters), held and billed exactly. */
  units?: PricedUnits;
}

const SPEECH_INPUT = 'spend on speech '.repeat(200);
/** Three seconds of 16 kHz mono silence: 96,000 bytes of samples. */
const WAV = silentWav(44 + 96_000);
const WAV_MILLISECONDS = 3_000;

const REQUESTS: BudgetRequest[] = [
  { path: '/v1/chat/completions', model: 'relay-model', maxOutputTokens: 50, body: { model: 'relay-model', messages: [{ role: 'user', content: 'spend on chat' }], max_tokens: 50 } },
  { path: '/v1/responses', model: 'relay-model', maxOutputTokens: 40, body: { model: 'relay-model', input: 'spend on responses', max_output_tokens: 40, store: false } },
  { path: '/v1/messages', model: 'relay-model', maxOutputTokens: 30, body: { model: 'relay-model', max_tokens: 30, messages: [{ role: 'user', content: 'spend on messages' }] } },
  { path: '/v1/embeddings', model: 'embed-relay', maxOutputTokens: 0, body: { model: 'embed-relay', input: 'spend on embeddings '.repeat(400) } },
  { path: '/v1/audio/speech', model: 'speech-relay', maxOutputTokens: 0, units: { characters: speechCharacters(SPEECH_INPUT) }, body: { model: 'speech-relay', voice: 'alloy', input: SPEECH_INPUT } },
  { path: '/v1/images/generations', model: 'image-tiers', maxOutputTokens: 0, units: { images: 2, imageTier: '1024x1024/low' }, body: { model: 'image-tiers', prompt: 'spend on images', n: 2, size: '1024x1024', quality: 'low' } },
  { path: '/v1/audio/transcriptions', model: 'transcribe-sim', maxOutputTokens: 0, units: { audioMilliseconds: WAV_MILLISECONDS }, upload: true, body: { model: 'transcribe-sim' } },
];

/** The upload's body: its fields and a WAV of silence as `file`. */
function uploadBody(fields: Record<string, unknown>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, String(value));
  form.append('file', new Blob([WAV]), 'silence.wav');
  return form;
}


describe.each(engines)('one key budget across every endpoint, on %s', (engine) => {
  let harness: Harness;
  let chat: UpstreamDouble;
  let embeddings: EmbeddingsDouble;

  beforeAll(async () => {
    chat = await startOpenAIUpstream({ usage: overReporting, reply: () => ({ content: 'spent' }) });
    embeddings = await startEmbeddingsUpstream({ openaiTokens: () => 5_000_000 });
    const catalog = testCatalog({ upstreamBaseUrl: chat.baseUrl }) as { providers: unknown[]; models: unknown[] };
    catalog.providers.push({ name: 'embed-upstream', type: 'openai', base_url: embeddings.openaiBaseUrl, api_key_env: 'TEST_UPSTREAM_KEY' });
    catalog.models.push({ id: 'embed-relay', endpoints: ['embeddings'], prices: { input: '1', output: '0' }, targets: [{ provider: 'embed-upstream', model: 'text-embedding-3-small' }] });
    catalog.models.push({ id: 'image-tiers', endpoints: ['image-generations'], prices: { input: '0', output: '0', image: { '1024x1024/low': '0.011', default: '0.25' } }, targets: [{ provider: 'sim', model: 'image-sim' }] });
    catalog.models.push({ id: 'transcribe-sim', endpoints: ['transcriptions'], prices: { input: '0', output: '0', audio_second: '0.0004' }, targets: [{ provider: 'sim', model: 'whisper-sim' }] });
    catalog.models.push({ id: 'speech-relay', endpoints: ['speech'], prices: { input: '0', output: '0', characters: '15' }, targets: [{ provider: 'embed-upstream', model: 'tts-1' }] });
    harness = await startHarness({ engine, catalog, env: { TEST_UPSTREAM_KEY: 'sk-upstream-secret' } });
  }, 60_000);

  afterAll(async () => {
    await harness?.close();
    await chat?.close();
    await embeddings?.close();
  });

  it('70 concurrent requests over seven endpoints spend at most the budget, each its hold, and leave less than any refused hold', async () => {
    const billing = harness.gateway.billing;
    const holdOf = (request: BudgetRequest) =>
      request.units !== undefined
        ? billing.holdAmount(request.model, 0, request.maxOutputTokens, request.units)
        : billing.holdAmount(request.model, boundInputTokens(request.body, { imageTokens: billing.inputBound(request.model).imageTokens }), request.maxOutputTokens);
    const holds = REQUESTS.map(holdOf);
    const largest = holds.reduce((max, hold) => (hold > max ? hold : max), 0n);
    const budget = largest * 10n;
    const { accountId, keyId, secret } = await harness.newAccount('100', { budget: { limitUsd: formatUsd(budget), period: 'day' } });
    expect((await fetch(`${harness.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(200);

    const sent = Array.from({ length: 70 }, (_, index) => index % REQUESTS.length);
    expect(await measuredMilliseconds(WAV)).toBe(WAV_MILLISECONDS);
    const send = (request: BudgetRequest) =>
      request.upload === true
        ? fetch(`${harness.baseUrl}${request.path}`, { method: 'POST', headers: { authorization: `Bearer ${secret}` }, body: uploadBody(request.body) })
        : harness.post(request.path, request.body, secret);
    const responses = await Promise.all(sent.map((kind) => send(REQUESTS[kind]!)));
    const answers = await Promise.all(responses.map(async (response, index) => ({ kind: sent[index]!, status: response.status, requestId: response.headers.get('x-request-id')!, body: await response.arrayBuffer() })));
    expect(answers.every((answer) => answer.status === 200 || answer.status === 403)).toBe(true);
    const admitted = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status === 403);
    expect(refused.length).toBeGreaterThan(0);

    await waitFor(async () => (await harness.store.countOpenHolds(accountId)) === 0);
    const charges = (await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
    const chargeOf = new Map(charges.map((charge) => [charge.requestId, charge.amountNanos]));
    // Every admitted request was charged exactly its hold, whatever its endpoint.
    expect(charges).toHaveLength(admitted.length);
    for (const answer of admitted) expect(chargeOf.get(answer.requestId), `${REQUESTS[answer.kind]!.path}`).toBe(holds[answer.kind]);
    const spent = charges.reduce((sum, charge) => sum + charge.amountNanos, 0n);
    expect(spent).toBeLessThanOrEqual(budget);
    // Charges are holds, so what was left when any request was refused only shrank since: less than its hold.
    for (const answer of refused) expect(budget - spent).toBeLessThan(holds[answer.kind]!);

    const viewer = (await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR)).secret;
    const got = await adminClient(harness.baseUrl)('GET', `/keys/${keyId}`, viewer);
    expect(got.body.budget).toMatchObject({ spent_usd: formatUsd(spent), reserved_usd: '0', remaining_usd: formatUsd(budget - spent) });
  }, 60_000);
});
