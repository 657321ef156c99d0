import type { ConfigFile } from './schema.js';

/**
 * The built-in catalog used when `TOLLGATE_CONFIG` names no file: the spec's model ids served by
 * the simulated provider, so `npm start` works with no network and no upstream secret.
 */
export const DEMO_CATALOG: unknown = {
  providers: [{ name: 'simulated', type: 'simulated', pace_ms: 15 }],
  models: [
    ...['model-5.6', 'model-5.6-sol', 'model-5.6-terra', 'model-5.6-luna'].map((id) => ({
      id,
      prices: { input: '1.25', cached_input: '0.125', output: '10' },
      reasoning_efforts: ['low', 'medium', 'high', 'xhigh', 'max'],
      max_output_tokens: 8192,
      targets: [{ provider: 'simulated', model: id }],
    })),
    {
      id: 'model-5.6-mini',
      prices: { input: '0.25', cached_input: '0.025', output: '2' },
      reasoning_efforts: [],
      max_output_tokens: 4096,
      targets: [{ provider: 'simulated', model: 'model-5.6-mini' }],
    },
    {
      id: 'embedding-5-small',
      endpoints: ['embeddings'],
      prices: { input: '0.02', output: '0' },
      targets: [{ provider: 'simulated', model: 'embedding-5-small' }],
    },
    {
      // Priced per 1M characters, as OpenAI prices tts-1 (its events, `sse`, bill the tokens they
      // report at input and output); the simulated voice speaks wav and pcm.
      id: 'speech-5',
      endpoints: ['speech'],
      prices: { input: '0.6', output: '12', characters: '15' },
      targets: [{ provider: 'simulated', model: 'speech-5' }],
    },
    {
      // Priced by tokens as OpenAI prices gpt-image-1 (image input tokens at `image_input`); held at
      // `max_output_tokens` per image: the most gpt-image-1 reports for one (high, 1536x1024).
      id: 'image-5',
      endpoints: ['image-generations', 'image-edits'],
      prices: { input: '5', image_input: '10', output: '40' },
      max_output_tokens: 6240,
      targets: [{ provider: 'simulated', model: 'image-5' }],
    },
    {
      // Priced per second of audio, as OpenAI prices whisper-1 ($0.006 a minute); the simulated model hears 2.5 words a second.
      id: 'transcribe-5',
      endpoints: ['transcriptions', 'translations'],
      prices: { input: '0', output: '0', audio_second: '0.0001' },
      targets: [{ provider: 'simulated', model: 'transcribe-5' }],
    },
    {
      // OpenAI's default moderation model: a request that names none is moderated with it.
      id: 'omni-moderation-latest',
      endpoints: ['moderations'],
      prices: { input: '0', output: '0' },
      targets: [{ provider: 'simulated', model: 'omni-moderation-latest' }],
    },
  ],
  rate_limits: { requests: 60, window_seconds: 60, tokens_per_minute: 0 },
} satisfies Record<string, unknown>;

export type { ConfigFile };
