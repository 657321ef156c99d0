/**
 * The catalog file's schema (YAML, `TOLLGATE_CONFIG`). Strict: unknown keys are errors, and every
 * error names the bad field (`models[0].prices.input: ...`). Money is given in USD per 1M tokens
 * and converted once, at load, to integer nano-USD (see billing/money.ts for the arithmetic).
 */
import { z } from 'zod';

const usdAmount = z.union([z.number().nonnegative(), z.string().regex(/^\d+(\.\d{1,9})?$/, 'a decimal USD amount')]);

const timeouts = z
  .object({
    /** Time allowed to open the TCP/TLS connection. */
    connect_ms: z.number().int().positive().default(5_000),
    /** Time allowed from sending the request to the first byte of the answer. */
    first_byte_ms: z.number().int().positive().default(60_000),
    /** Longest silence allowed between two chunks of a stream. */
    idle_ms: z.number().int().positive().default(60_000),
  })
  .strict();

const defaultTimeouts = { connect_ms: 5_000, first_byte_ms: 60_000, idle_ms: 60_000 };

/** Failures the simulated provider can inject, for tests and demos. */
const simulatedFailure = z
  .object({
    mode: z.enum(['none', 'before_first_byte', 'mid_stream', 'hang']).default('none'),
    /** With `mid_stream`: how many text chunks are sent before the failure. */
    after_chunks: z.number().int().nonnegative().default(2),
  })
  .strict();

const simulatedProvider = z
  .object({
    name: z.string().min(1),
    type: z.literal('simulated'),
    /** Delay between two streamed chunks. */
    pace_ms: z.number().int().nonnegative().default(0),
    failure: simulatedFailure.default({ mode: 'none', after_chunks: 2 }),
    timeouts: timeouts.default(defaultTimeouts),
  })
  .strict();

const openaiProvider = z
  .object({
    name: z.string().min(1),
    type: z.literal('openai'),
    /** Base address including the version segment, e.g. `https://api.openai.com/v1`. */
    base_url: z.url(),
    /** Name of the environment variable that holds the upstream secret (never the secret itself). */
    api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name').optional(),
    /** Which creation endpoints the upstream speaks. */
    api: z.enum(['chat', 'responses', 'both']).default('both'),
    timeouts: timeouts.default(defaultTimeouts),
  })
  .strict();

const anthropicProvider = z
  .object({
    name: z.string().min(1),
    type: z.literal('anthropic'),
    /** Base address including the version segment, e.g. `https://api.anthropic.com/v1`. */
    base_url: z.url(),
    api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name').optional(),
    /** Sent as the `anthropic-version` header. */
    version: z.string().min(1).default('2023-06-01'),
    timeouts: timeouts.default(defaultTimeouts),
  })
  .strict();

const geminiProvider = z
  .object({
    name: z.string().min(1),
    type: z.literal('gemini'),
    /** Base address including the version segment, e.g. `https://generativelanguage.googleapis.com/v1beta`. */
    base_url: z.url(),
    api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name').optional(),
    timeouts: timeouts.default(defaultTimeouts),
  })
  .strict();

export const providerSchema = z.discriminatedUnion('type', [simulatedProvider, openaiProvider, anthropicProvider, geminiProvider]);

const target = z
  .object({
    provider: z.string().min(1),
    /** The upstream's own name for the model. */
    model: z.string().min(1),
    /** Lower is tried first. */
    priority: z.number().int().nonnegative().default(0),
    weight: z.number().int().positive().default(1),
  })
  .strict();

const modelSchema = z
  .object({
    id: z.string().min(1),
    enabled: z.boolean().default(true),
    prices: z
      .object({ input: usdAmount, cached_input: usdAmount.optional(), cache_write: usdAmount.optional(), output: usdAmount })
      .strict(),
    reasoning_efforts: z.array(z.enum(['low', 'medium', 'high', 'xhigh', 'max'])).default([]),
    max_output_tokens: z.number().int().positive().default(4_096),
    targets: z.array(target).min(1),
  })
  .strict();

export const configFileSchema = z
  .object({
    providers: z.array(providerSchema).min(1),
    models: z.array(modelSchema).min(1),
    rate_limits: z
      .object({
        /** Requests admitted per key per window. */
        requests: z.number().int().positive().default(600),
        window_seconds: z.number().int().positive().default(60),
        /** Tokens (estimated input + allowed output) per key per minute; 0 turns it off. */
        tokens_per_minute: z.number().int().nonnegative().default(0),
        /** When the shared limit store (Redis) cannot be reached: admit (`open`) or refuse (`closed`). */
        on_backend_failure: z.enum(['open', 'closed']).default('open'),
      })
      .strict()
      .default({ requests: 600, window_seconds: 60, tokens_per_minute: 0, on_backend_failure: 'open' }),
    billing: z
      .object({
        /** A hold not settled within this time (a crash) is released. */
        hold_ttl_seconds: z.number().int().positive().default(900),
      })
      .strict()
      .default({ hold_ttl_seconds: 900 }),
    limits: z
      .object({ max_body_bytes: z.number().int().positive().default(8 * 1024 * 1024) })
      .strict()
      .default({ max_body_bytes: 8 * 1024 * 1024 }),
  })
  .strict();

export type ConfigFile = z.infer<typeof configFileSchema>;
export type ProviderConfig = z.infer<typeof providerSchema>;
export type SimulatedProviderConfig = z.infer<typeof simulatedProvider>;
export type OpenAIProviderConfig = z.infer<typeof openaiProvider>;
export type AnthropicProviderConfig = z.infer<typeof anthropicProvider>;
export type GeminiProviderConfig = z.infer<typeof geminiProvider>;
export type TimeoutsConfig = z.infer<typeof timeouts>;
