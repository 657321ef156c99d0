/** Every environment variable Tollgate reads, in one place. */
export const ENV = {
  host: 'HOST',
  port: 'PORT',
  databaseUrl: 'TOLLGATE_DATABASE_URL',
  config: 'TOLLGATE_CONFIG',
  redisUrl: 'TOLLGATE_REDIS_URL',
  logLevel: 'TOLLGATE_LOG_LEVEL',
  testPostgresUrl: 'TOLLGATE_TEST_POSTGRES_URL',
  testRedisUrl: 'TOLLGATE_TEST_REDIS_URL',
} as const;

export const DEFAULT_DATABASE_URL = 'sqlite:./data/tollgate.db';
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8080;
