/** Every environment variable Tollgate reads, in one place. */
export const ENV = {
  host: 'HOST',
  port: 'PORT',
  /** When set, the admin API (/admin/v1) is served only on this port, not on PORT. */
  adminPort: 'TOLLGATE_ADMIN_PORT',
  databaseUrl: 'TOLLGATE_DATABASE_URL',
  config: 'TOLLGATE_CONFIG',
  redisUrl: 'TOLLGATE_REDIS_URL',
  /** `1` lets several instances run without Redis, each counting rate limits on its own. */
  acceptLocalLimits: 'TOLLGATE_ACCEPT_LOCAL_LIMITS',
  logLevel: 'TOLLGATE_LOG_LEVEL',
  /** `1`: create the funded demo account on a fresh database even with an operator's catalog (as `serve --demo`). */
  demo: 'TOLLGATE_DEMO',
  /** Seconds SIGTERM waits for in-flight requests and streams before cutting them (they still settle). */
  drainSeconds: 'TOLLGATE_DRAIN_SECONDS',
  /** 32 bytes, base64: the key compaction summaries are sealed with (README, "Compaction"); random per process when unset. */
  sealKey: 'TOLLGATE_SEAL_KEY',
  /** 32 bytes, base64: the key upstream secrets entered through the admin API are sealed with (README, "Catalog at runtime"). */
  secretsKey: 'TOLLGATE_SECRETS_KEY',
  testPostgresUrl: 'TOLLGATE_TEST_POSTGRES_URL',
  testRedisUrl: 'TOLLGATE_TEST_REDIS_URL',
} as const;

/** The environment as the process runtime reads it (`process.env`, or a test's own). */
export type Env = Readonly<Record<string, string | undefined>>;

export const DEFAULT_DATABASE_URL = 'sqlite:./data/tollgate.db';
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8080;
