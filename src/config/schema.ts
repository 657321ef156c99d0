/**
 * The catalog file's schema (YAML, `TOLLGATE_CONFIG`). Strict: unknown keys are errors, and every
 * error names the bad field (`models[0].prices.input: ...`). Money is given in USD per 1M tokens
 * and converted once, at load, to integer nano-USD (see billing/money.ts for the arithmetic).
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { GENERATIVE_SURFACES, SURFACES } from '../protocol/canonical.js';

const usdAmount = z.union([z.number().nonnegative(), z.string().regex(/^\d+(\.\d{1,9})?$/, 'a decimal USD amount')]);

const QUOTA_SLICE_DEFAULTS = { enabled: 'auto', size_usd: '1', headroom: 8, idle_seconds: 10 } as const;

const quotaSlices = z
  .object({
    /** `auto`: on with PostgreSQL, off with SQLite (where a hold's write is a local transaction). */
    enabled: z.union([z.boolean(), z.literal('auto')]).default(QUOTA_SLICE_DEFAULTS.enabled),
    /** The largest slice; a slice is also at most 1/headroom of what the account has unreserved. */
    size_usd: usdAmount.default(QUOTA_SLICE_DEFAULTS.size_usd),
    /**
     * A slice is granted only while the account's unreserved balance is at least this many times
     * it (so slices shrink as a balance runs low, and below twice a request's hold there are none).
     */
    headroom: z.number().int().min(2).max(1_000).default(QUOTA_SLICE_DEFAULTS.headroom),
    /** A slice that admitted nothing for this long goes back to its account. */
    idle_seconds: z.number().positive().max(3_600).default(QUOTA_SLICE_DEFAULTS.idle_seconds),
  })
  .strict();

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

/**
 * How far a hold reaches beyond the gateway's own count of a request's input on this provider
 * (defaults per type in billing/input-bounds.ts): its tokenizer may count more, and images cost by
 * its own formula.
 */
const inputBound = z
  .object({
    margin_percent: z.number().int().min(0).max(1_000).optional(),
    image_tokens: z.number().int().min(0).max(1_000_000).optional(),
  })
  .strict()
  .optional();

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
    input_bound: inputBound,
  })
  .strict();

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name');

/**
 * One key of a pool (docs/architecture.md, "Pools of upstream keys"): its name, which operators
 * see in the console, `/metrics` and alerts, and where its secret is read (never the secret).
 */
const pooledKey = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'a key name: letters, digits, ".", "_" and "-", at most 64'),
    /** The environment variable that holds the key. */
    env: envName.optional(),
    /** A file that holds the key (its whole content, trimmed), e.g. a mounted secret. */
    file: z.string().min(1).optional(),
  })
  .strict()
  .refine((key) => (key.env === undefined) !== (key.file === undefined), { message: 'give exactly one of env and file' });

/** Several keys for one provider, used in turn; a refused key leaves the pool, a limited one cools down. */
const apiKeys = z
  .array(pooledKey)
  .min(1)
  .refine((keys) => new Set(keys.map((key) => key.name)).size === keys.length, 'key names must not repeat')
  .optional();

/** `api_key_env` and `api_keys` are two ways to give a key: one at most. */
function oneKeySource(provider: { api_key_env?: string | undefined; api_keys?: unknown }, context: z.RefinementCtx): void {
  if (provider.api_key_env !== undefined && provider.api_keys !== undefined) {
    context.addIssue({ code: 'custom', path: ['api_keys'], message: 'give api_key_env or api_keys, not both' });
  }
}

/**
 * The OpenAI-compatible vendors whose known differences from OpenAI's wire the `openai` provider
 * handles (docs/wire-protocols.md §20); absent, the upstream is OpenAI itself or a server that
 * speaks its wire as OpenAI does.
 */
export const OPENAI_VENDORS = ['openrouter', 'groq', 'mistral', 'deepseek', 'xai', 'together', 'fireworks', 'vllm', 'ollama'] as const;
export type OpenAIVendor = (typeof OPENAI_VENDORS)[number];

const openaiProvider = z
  .object({
    name: z.string().min(1),
    type: z.literal('openai'),
    /** Which compatible vendor the upstream is; selects its request and answer differences. */
    vendor: z.enum(OPENAI_VENDORS).optional(),
    /**
     * Base address including the version segment, e.g. `https://api.openai.com/v1`. Required
     * without `vendor`; with one, its public address by default.
     */
    base_url: z.url().optional(),
    /** Name of the environment variable that holds the upstream secret (never the secret itself). */
    api_key_env: envName.optional(),
    /** A pool of keys instead of `api_key_env`. */
    api_keys: apiKeys,
    /** Which creation endpoints the upstream speaks: `both` by default, `chat` with a `vendor`. */
    api: z.enum(['chat', 'responses', 'both']).optional(),
    timeouts: timeouts.default(defaultTimeouts),
    input_bound: inputBound,
  })
  .strict()
  .superRefine((provider, context) => {
    oneKeySource(provider, context);
    if (provider.base_url === undefined && provider.vendor === undefined) {
      context.addIssue({ code: 'custom', path: ['base_url'], message: 'required without vendor' });
    }
  });

const anthropicProvider = z
  .object({
    name: z.string().min(1),
    type: z.literal('anthropic'),
    /** Base address including the version segment, e.g. `https://api.anthropic.com/v1`. */
    base_url: z.url(),
    api_key_env: envName.optional(),
    api_keys: apiKeys,
    /** Sent as the `anthropic-version` header. */
    version: z.string().min(1).default('2023-06-01'),
    timeouts: timeouts.default(defaultTimeouts),
    input_bound: inputBound,
  })
  .strict()
  .superRefine(oneKeySource);

const geminiProvider = z
  .object({
    name: z.string().min(1),
    type: z.literal('gemini'),
    /** Base address including the version segment, e.g. `https://generativelanguage.googleapis.com/v1beta`. */
    base_url: z.url(),
    api_key_env: envName.optional(),
    api_keys: apiKeys,
    timeouts: timeouts.default(defaultTimeouts),
    input_bound: inputBound,
  })
  .strict()
  .superRefine(oneKeySource);

/**
 * Microsoft Entra ID (OAuth2 client credentials) for an `azure` provider: a token fetched from
 * `{authority}/{tenant_id}/oauth2/v2.0/token` and sent as a bearer token (docs/wire-protocols.md §17.2).
 */
const entraAuth = z
  .object({
    /** The directory (tenant) id, a GUID or a domain name. */
    tenant_id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9.-]*$/, 'a tenant id (a GUID or a domain name)'),
    /** The application (client) id. */
    client_id: z.string().min(1),
    /** Name of the environment variable that holds the client secret (never the secret itself). */
    client_secret_env: envName,
    /** The identity platform's address: another for a sovereign cloud, or a test double. */
    authority: z.url().default('https://login.microsoftonline.com'),
    scope: z.string().min(1).default('https://cognitiveservices.azure.com/.default'),
    /**
     * The longest wait for the token endpoint's answer, separate from the provider's timeouts: a
     * token endpoint that hangs fails the calls waiting on it (a credentials failure) this soon.
     */
    timeout_ms: z.number().int().positive().default(10_000),
  })
  .strict();

/**
 * Azure OpenAI (docs/wire-protocols.md §17): the OpenAI wire at Azure's addresses. `deployments`
 * calls `/openai/deployments/{target model}/…?api-version=…`; `v1` calls `/openai/v1/…` with the
 * model in the body. The key goes as `api-key`, or an Entra ID token as a bearer: one of the two.
 */
const azureProvider = z
  .object({
    name: z.string().min(1),
    type: z.literal('azure'),
    /** The resource's address, e.g. `https://my-resource.openai.azure.com`. */
    endpoint: z.url(),
    url_form: z.enum(['deployments', 'v1']),
    /** The `api-version` query: required by `deployments`, sent with `v1` only when set. */
    api_version: z.string().regex(/^[A-Za-z0-9.-]+$/, 'an api-version such as 2024-10-21').optional(),
    /** Which creation endpoints the deployments speak. */
    api: z.enum(['chat', 'responses', 'both']).default('both'),
    /** Name of the environment variable that holds the resource's key, sent as `api-key`. */
    api_key_env: envName.optional(),
    /** A pool of resource keys instead of `api_key_env`. */
    api_keys: apiKeys,
    entra: entraAuth.optional(),
    timeouts: timeouts.default(defaultTimeouts),
    input_bound: inputBound,
  })
  .strict()
  .superRefine((provider, context) => {
    if (provider.url_form === 'deployments' && provider.api_version === undefined) {
      context.addIssue({ code: 'custom', path: ['api_version'], message: 'required with url_form: deployments' });
    }
    const given = [provider.api_key_env, provider.api_keys, provider.entra].filter((source) => source !== undefined).length;
    if (given !== 1) context.addIssue({ code: 'custom', path: ['api_key_env'], message: 'give exactly one of api_key_env, api_keys and entra' });
  });

/**
 * Google Vertex AI (docs/wire-protocols.md §19): Gemini (`publisher: google`, the Gemini wire) or
 * Claude (`publisher: anthropic`, Anthropic's Messages wire) at
 * `{endpoint}/v1/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}:…`,
 * with an OAuth2 bearer token: from the service-account key file `credentials_file` names (its
 * JWT sent to the file's own `token_uri`), or from Application Default Credentials when none is
 * named.
 */
const vertexProvider = z
  .object({
    name: z.string().min(1),
    type: z.literal('vertex'),
    /** The Google Cloud project id. */
    project: z.string().regex(/^[a-z][a-z0-9-]{4,61}[a-z0-9]$/, 'a Google Cloud project id'),
    /** A region such as `us-central1`, or `global`. */
    location: z.string().regex(/^[a-z][a-z0-9-]*[a-z0-9]$/, 'a location such as us-central1 or global'),
    /**
     * The API's address; by default `https://{location}-aiplatform.googleapis.com`, or
     * `https://aiplatform.googleapis.com` for `global`. Another for a private endpoint or a test double.
     */
    endpoint: z.url().optional(),
    publisher: z.enum(['google', 'anthropic']),
    /**
     * Path of a service-account key file (JSON, `type: service_account`). Absent: Application
     * Default Credentials (`GOOGLE_APPLICATION_CREDENTIALS`, gcloud's login, the metadata server).
     */
    credentials_file: z.string().min(1).optional(),
    scopes: z.array(z.string().min(1)).min(1).default(['https://www.googleapis.com/auth/cloud-platform']),
    /**
     * The longest wait for the token endpoint's answer, separate from the provider's timeouts: a
     * token endpoint that hangs fails the calls waiting on it (a credentials failure) this soon.
     */
    token_timeout_ms: z.number().int().positive().default(10_000),
    /** Claude only: the `anthropic_version` of each body. */
    anthropic_version: z.string().min(1).default('vertex-2023-10-16'),
    timeouts: timeouts.default(defaultTimeouts),
    input_bound: inputBound,
  })
  .strict();

/**
 * Where a `bedrock` provider's AWS credentials come from (docs/wire-protocols.md §18.2): an access
 * key in the environment variables named here, or AWS's standard chain (environment, SSO, web
 * identity token file, shared config files with `profile`, container and instance metadata).
 */
const bedrockCredentials = z
  .object({
    /** A profile of the shared config and credentials files, for the standard chain. */
    profile: z.string().min(1).optional(),
    /** Names of the environment variables holding an access key (never the key itself). */
    access_key_id_env: envName.optional(),
    secret_access_key_env: envName.optional(),
    /** With temporary credentials: the variable holding their session token. */
    session_token_env: envName.optional(),
  })
  .strict()
  .superRefine((credentials, context) => {
    if ((credentials.access_key_id_env === undefined) !== (credentials.secret_access_key_env === undefined)) {
      context.addIssue({ code: 'custom', path: ['access_key_id_env'], message: 'give both access_key_id_env and secret_access_key_env, or neither' });
    }
    if (credentials.session_token_env !== undefined && credentials.access_key_id_env === undefined) {
      context.addIssue({ code: 'custom', path: ['session_token_env'], message: 'only with access_key_id_env and secret_access_key_env' });
    }
    if (credentials.profile !== undefined && credentials.access_key_id_env !== undefined) {
      context.addIssue({ code: 'custom', path: ['profile'], message: 'give either a profile or access key variables, not both' });
    }
  });

/**
 * AWS Bedrock's runtime API (docs/wire-protocols.md §18): Converse for every model family, or
 * Claude's Messages body through InvokeModel (`api: invoke`, which also serves `/v1/messages` as a
 * pass-through). Targets name Bedrock model ids or inference profiles. Calls are signed with SigV4.
 */
const bedrockProvider = z
  .object({
    name: z.string().min(1),
    type: z.literal('bedrock'),
    region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'an AWS region such as us-east-1'),
    /** The runtime API's address: `https://bedrock-runtime.{region}.amazonaws.com` by default (a VPC endpoint, a test double). */
    endpoint: z.url().optional(),
    api: z.enum(['converse', 'invoke']).default('converse'),
    credentials: bedrockCredentials.optional(),
    timeouts: timeouts.default(defaultTimeouts),
    input_bound: inputBound,
  })
  .strict();

export const providerSchema = z.discriminatedUnion('type', [simulatedProvider, openaiProvider, anthropicProvider, geminiProvider, azureProvider, vertexProvider, bedrockProvider]);

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
      .object({
        /** Per 1M tokens, as every price below unless it says otherwise. */
        input: usdAmount,
        cached_input: usdAmount.optional(),
        cache_write: usdAmount.optional(),
        /** Input tokens that are images (gpt-image's reports); absent: the input price. */
        image_input: usdAmount.optional(),
        output: usdAmount,
        /**
         * Per image made, by tier: `<size>/<quality>` (`1024x1024/high`), `<size>`, or `default`,
         * looked up in that order (billing/prices.ts). A model priced per image refuses a size and
         * quality it has no price for.
         */
        image: z.record(z.string().regex(/^(default|[a-z0-9]+(\/[a-z]+)?)$/, 'an image tier: <size>/<quality>, <size> or default'), usdAmount).optional(),
        /** Per second of input audio (transcriptions, translations), billed by the millisecond. */
        audio_second: usdAmount.optional(),
        /** Per 1M characters of text spoken (speech); absent: speech bills its characters at `input`. */
        characters: usdAmount.optional(),
      })
      .strict(),
    /**
     * The `/v1` endpoints the model serves; asked on any other, it answers 404 `model_not_found`
     * and nothing is forwarded. By default the three generative ones.
     */
    endpoints: z
      .array(z.enum(SURFACES))
      .min(1)
      .refine((endpoints) => new Set(endpoints).size === endpoints.length, 'endpoints must not repeat')
      .default([...GENERATIVE_SURFACES]),
    reasoning_efforts: z.array(z.enum(['low', 'medium', 'high', 'xhigh', 'max'])).default([]),
    max_output_tokens: z.number().int().positive().default(4_096),
    /**
     * Hosted Responses tools (`web_search`, `tool_search`, …) on a route that translates the request
     * (Chat, Anthropic, Gemini): leave them out and name them in `x-tollgate-dropped-tools` (`drop`),
     * answer 400 (`refuse`), or use the upstream's own equivalent where one exists and drop the rest
     * (`map`: Anthropic's web search tool, Gemini's Google Search grounding).
     */
    hosted_tools: z.enum(['drop', 'refuse', 'map']).default('drop'),
    /**
     * Keep this model's prompts and answers in the request log, each cut at `max_bytes` (they are
     * the customers' data: off unless set). Streamed answers are not kept yet, only JSON ones.
     */
    log_bodies: z.object({ max_bytes: z.number().int().positive().max(1_048_576) }).strict().optional(),
    targets: z.array(target).min(1),
  })
  .strict();

/** What an alert webhook can be sent (README, "Alerts"). */
export const ALERT_EVENT_TYPES = ['balance.low', 'key_budget.80', 'key_budget.100', 'target.down', 'target.up', 'upstream_key.refused', 'slow_answer', 'spend.report'] as const;
export type AlertEventType = (typeof ALERT_EVENT_TYPES)[number];

/**
 * What a webhook's body looks like: `generic` is Tollgate's signed JSON envelope; the others are
 * the incoming-webhook messages of Slack, Discord and Microsoft Teams (alerts/chat-payloads.ts).
 */
export const WEBHOOK_FORMATS = ['generic', 'slack', 'discord', 'teams'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

const webhook = z
  .object({
    /** Where events are POSTed (JSON). */
    url: z.url({ protocol: /^https?$/ }),
    /** The body's shape: Tollgate's signed envelope (default), or a chat service's incoming-webhook message. */
    format: z.enum(WEBHOOK_FORMATS).default('generic'),
    /**
     * Name of the environment variable holding the signing secret (never the secret itself);
     * required for `generic`, not used by the chat formats (their URL is their secret).
     */
    secret_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name').optional(),
    /** The event types this webhook receives. */
    events: z
      .array(z.enum(ALERT_EVENT_TYPES))
      .min(1)
      .refine((events) => new Set(events).size === events.length, 'event types must not repeat'),
  })
  .strict()
  .refine((webhook) => webhook.format !== 'generic' || webhook.secret_env !== undefined, {
    message: 'a generic webhook needs secret_env (the variable holding its signing secret)',
    path: ['secret_env'],
  });

/**
 * `spend.report` (alerts/spend-report-checker.ts): after each UTC day (or each week, from Monday
 * 00:00 UTC), the period's spend in total and by account, the `top` spenders named.
 */
const spendReport = z
  .object({
    every: z.enum(['day', 'week']).default('day'),
    top: z.number().int().min(1).max(100).default(10),
  })
  .strict();

/**
 * `slow_answer` (alerts/slow-answers.ts): an answer of a model whose first byte came later than
 * `first_token_ms`, or that took longer than `duration_ms` in all; one alert per slow period of a
 * model, the period ending once `rearm_seconds` pass without a slow answer.
 */
const slowAnswer = z
  .object({
    first_token_ms: z.number().int().positive().optional(),
    duration_ms: z.number().int().positive().optional(),
    rearm_seconds: z.number().int().positive().default(600),
  })
  .strict()
  .refine((slow) => slow.first_token_ms !== undefined || slow.duration_ms !== undefined, 'set first_token_ms, duration_ms or both');

const DEFAULT_ALERT_DELIVERY = {
  poll_ms: 1_000,
  timeout_ms: 10_000,
  first_retry_ms: 5_000,
  max_retry_ms: 600_000,
  max_age_seconds: 86_400,
};

/**
 * Webhooks for operators (README, "Alerts"): delivered from a database outbox by a background
 * deliverer, at least once, signed, retried with exponential backoff up to `max_retry_ms` between
 * attempts and given up `max_age_seconds` after the event.
 */
const alerts = z
  .object({
    webhooks: z.array(webhook).default([]),
    /** Thresholds of the `slow_answer` event (required when a webhook receives it). */
    slow_answer: slowAnswer.optional(),
    /** The period and length of the `spend.report` event (a day and the top 10 when absent). */
    spend_report: spendReport.default({ every: 'day', top: 10 }),
    /** How often the background checkers look for crossings (low balances). */
    check_ms: z.number().int().min(50).default(5_000),
    delivery: z
      .object({
        /** How often the deliverer looks for due deliveries in the outbox. */
        poll_ms: z.number().int().min(20).default(DEFAULT_ALERT_DELIVERY.poll_ms),
        /** Time allowed for one attempt, connection to answer. */
        timeout_ms: z.number().int().positive().default(DEFAULT_ALERT_DELIVERY.timeout_ms),
        /** Wait after the first failed attempt; doubled after each further one. */
        first_retry_ms: z.number().int().positive().default(DEFAULT_ALERT_DELIVERY.first_retry_ms),
        /** Longest wait between two attempts. */
        max_retry_ms: z.number().int().positive().default(DEFAULT_ALERT_DELIVERY.max_retry_ms),
        /** An event not delivered this long after it happened is given up (logged). */
        max_age_seconds: z.number().int().positive().default(DEFAULT_ALERT_DELIVERY.max_age_seconds),
      })
      .strict()
      .refine((delivery) => delivery.first_retry_ms <= delivery.max_retry_ms, {
        message: 'first_retry_ms must not exceed max_retry_ms',
        path: ['first_retry_ms'],
      })
      .default(DEFAULT_ALERT_DELIVERY),
  })
  .strict()
  .refine((alerts) => alerts.slow_answer !== undefined || !alerts.webhooks.some((webhook) => webhook.events.includes('slow_answer')), {
    message: 'a webhook receives slow_answer: set alerts.slow_answer (its thresholds)',
    path: ['slow_answer'],
  })
  .default({ webhooks: [], check_ms: 5_000, delivery: DEFAULT_ALERT_DELIVERY, spend_report: { every: 'day', top: 10 } });

/**
 * What a gateway should give a client, not Node's defaults (60 s for headers, no limit for the
 * body under Fastify): 10 s for headers, 60 s for a body up to `max_body_bytes` (8 MiB at about
 * 1 Mbit/s), keep-alive above the 60 s idle timeout of common load balancers so that they close
 * first, and a check every second so that a timeout is enforced within a second of its value.
 */
/** OpenAI's own limits on an uploaded file: 25 MB of audio, 50 MB of image(s) to edit. */
const DEFAULT_UPLOAD_LIMITS = {
  'image-edits': 50 * 1024 * 1024,
  transcriptions: 25 * 1024 * 1024,
  translations: 25 * 1024 * 1024,
};

const DEFAULT_LIMITS = {
  max_body_bytes: 8 * 1024 * 1024,
  max_upload_bytes: DEFAULT_UPLOAD_LIMITS,
  headers_timeout_ms: 10_000,
  request_timeout_ms: 60_000,
  keep_alive_timeout_ms: 72_000,
  connections_check_interval_ms: 1_000,
  socket_idle_ms: 600_000,
};

/** proxy-addr's names for ranges (Fastify's `trustProxy`): 127.0.0.0/8 and ::1, link-local, unique local. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** An IP address, a CIDR range (`10.0.0.0/8`, `fd00::/8`) or one of PROXY_RANGE_NAMES. */
function isAddressOrRange(value: string): boolean {
  if (PROXY_RANGE_NAMES.includes(value)) return true;
  const [address = '', prefix, ...rest] = value.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128));
}

/**
 * The catalog alone, providers and models (docs/architecture.md, "The catalog at runtime"): what
 * the admin API's `PUT /catalog/document` takes, validated by the very schemas of the file's.
 */
export const catalogDocumentSchema = z
  .object({
    providers: z.array(providerSchema).min(1),
    models: z.array(modelSchema).min(1),
  })
  .strict();

export const configFileSchema = z
  .object({
    /**
     * Where the catalog (providers, models) comes from: `database` (default) — the file seeds an
     * empty database, and the admin API changes it from then on, each change a version; `file` —
     * the file's catalog is served as it is, and the admin API refuses changes (configuration as code).
     */
    catalog: z
      .object({ source: z.enum(['database', 'file']).default('database') })
      .strict()
      .default({ source: 'database' }),
    /** How the gateway is reached. */
    server: z
      .object({
        /**
         * Reverse proxies whose `X-Forwarded-For` is believed: addresses, CIDR ranges, or
         * `loopback`, `linklocal`, `uniquelocal`. A client's address (for its allowance of failed
         * authentications) is then the nearest address in that header not on this list; with the
         * list empty, the header is ignored and the address is the TCP peer's.
         */
        trusted_proxies: z
          .array(z.string().trim().refine(isAddressOrRange, 'an IP address, a CIDR range (10.0.0.0/8), loopback, linklocal or uniquelocal'))
          .default([]),
      })
      .strict()
      .default({ trusted_proxies: [] }),
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
        /**
         * Failed authentications (unknown, disabled or expired keys) answered with 401 per client
         * address per minute; past it, further failures get 429. Only failures count: a usable key is
         * never refused for its address's failures. Admin tokens (and console sessions) have an
         * allowance of the same size of their own. 0 turns it off.
         */
        auth_failures_per_minute: z.number().int().nonnegative().default(30),
        /**
         * Credential lookups (keys not cached yet, admin tokens, console sessions) each process may
         * ask the database for per second, whatever their addresses; past it, 429. Half of it is kept
         * for addresses within their allowance of failures. API keys and admin tokens have a budget
         * of this size each. 0 turns it off.
         */
        auth_lookups_per_second: z.number().int().nonnegative().default(1_000),
      })
      .strict()
      .default({ requests: 600, window_seconds: 60, tokens_per_minute: 0, on_backend_failure: 'open', auth_failures_per_minute: 30, auth_lookups_per_second: 1_000 }),
    billing: z
      .object({
        /** A hold not settled within this time (a crash) is settled at its last checkpoint. */
        hold_ttl_seconds: z.number().int().positive().default(900),
        /** How often running requests record their metered usage: what a crash can lose at most. */
        checkpoint_seconds: z.number().positive().max(60).default(2),
        /**
         * Quota slices (docs/architecture.md, Money): each process reserves a slice of a busy
         * account's balance in one write and admits holds from it in memory. A slice is leased for
         * `hold_ttl_seconds`: a dead process's slices come back after it.
         */
        slices: quotaSlices.default(QUOTA_SLICE_DEFAULTS),
      })
      .strict()
      .default({ hold_ttl_seconds: 900, checkpoint_seconds: 2, slices: QUOTA_SLICE_DEFAULTS }),
    limits: z
      .object({
        max_body_bytes: z.number().int().positive().default(DEFAULT_LIMITS.max_body_bytes),
        /**
         * The largest multipart body each upload endpoint reads, files and fields together (413
         * beyond it, nothing forwarded or billed); `max_body_bytes` bounds the JSON endpoints.
         */
        max_upload_bytes: z
          .object({
            'image-edits': z.number().int().positive().default(DEFAULT_UPLOAD_LIMITS['image-edits']),
            transcriptions: z.number().int().positive().default(DEFAULT_UPLOAD_LIMITS.transcriptions),
            translations: z.number().int().positive().default(DEFAULT_UPLOAD_LIMITS.translations),
          })
          .strict()
          .default(DEFAULT_UPLOAD_LIMITS),
        /** Time a client has to send the request line and headers (a slowloris is cut after it). */
        headers_timeout_ms: z.number().int().positive().default(DEFAULT_LIMITS.headers_timeout_ms),
        /** Time a client has to send the whole request, body included; the answer is not limited. */
        request_timeout_ms: z.number().int().positive().default(DEFAULT_LIMITS.request_timeout_ms),
        /** How long an idle keep-alive connection is kept between two requests. */
        keep_alive_timeout_ms: z.number().int().positive().default(DEFAULT_LIMITS.keep_alive_timeout_ms),
        /** How often connections are checked against the two receive timeouts (their precision). */
        connections_check_interval_ms: z.number().int().positive().default(DEFAULT_LIMITS.connections_check_interval_ms),
        /**
         * How long a Responses WebSocket is kept open without a response running (its messages are
         * bounded by `max_body_bytes`, like the POST they stand for).
         */
        socket_idle_ms: z.number().int().positive().default(DEFAULT_LIMITS.socket_idle_ms),
      })
      .strict()
      .refine((limits) => limits.headers_timeout_ms <= limits.request_timeout_ms, {
        message: 'headers_timeout_ms must not exceed request_timeout_ms',
        path: ['headers_timeout_ms'],
      })
      .default(DEFAULT_LIMITS),
    /** The request log: one row per routed `/v1` request, written in batches off the request path. */
    log: z
      .object({
        enabled: z.boolean().default(true),
        /** Rows older than this are pruned in the background, a few at a time. */
        retention_days: z.number().int().positive().max(36_500).default(30),
        /**
         * Rows one CSV export of the request log holds at most; a longer one stops there and names
         * where the next export continues (its `x-next-cursor` trailer).
         */
        export_max_rows: z.number().int().positive().default(1_000_000),
      })
      .strict()
      .default({ enabled: true, retention_days: 30, export_max_rows: 1_000_000 }),
    alerts,
    metrics: z
      .object({
        /** `GET /metrics` answers only with an admin token (any role) in `Authorization: Bearer`. */
        require_admin_token: z.boolean().default(false),
      })
      .strict()
      .default({ require_admin_token: false }),
  })
  .strict();

export type ConfigFile = z.infer<typeof configFileSchema>;
export type CatalogDocument = z.infer<typeof catalogDocumentSchema>;
export type ProviderConfig = z.infer<typeof providerSchema>;
export type SimulatedProviderConfig = z.infer<typeof simulatedProvider>;
export type OpenAIProviderConfig = z.infer<typeof openaiProvider>;
export type AnthropicProviderConfig = z.infer<typeof anthropicProvider>;
export type GeminiProviderConfig = z.infer<typeof geminiProvider>;
export type AzureProviderConfig = z.infer<typeof azureProvider>;
export type VertexProviderConfig = z.infer<typeof vertexProvider>;
export type EntraAuthConfig = z.infer<typeof entraAuth>;
export type BedrockProviderConfig = z.infer<typeof bedrockProvider>;
export type BedrockCredentialsConfig = z.infer<typeof bedrockCredentials>;
export type TimeoutsConfig = z.infer<typeof timeouts>;
export type AlertsConfig = z.infer<typeof alerts>;
export type WebhookConfig = z.infer<typeof webhook>;
