/**
 * Tells "the database cannot be reached right now" apart from every other failure, so the client
 * gets a 503 it may retry (`service_unavailable`) instead of a 500 that says the gateway is broken.
 * Errors reach us as the drivers throw them (pg, better-sqlite3, Node's sockets), sometimes wrapped
 * (`cause`) or grouped (AggregateError from connecting to every address of a host).
 */

/** Node socket errors: the server is not there, or the network between us is not. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND']);

/**
 * PostgreSQL SQLSTATEs meaning the server cannot serve now (https://www.postgresql.org/docs/current/errcodes-appendix.html):
 * class 08 connection exception; 57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now
 * (starting up); class 53 insufficient resources (disk full, out of memory, too many connections);
 * 58030 I/O error.
 */
const POSTGRES_UNAVAILABLE = /^(08[0-9A-Z]{3}|57P0[1-3]|53[0-9A-Z]{3}|58030)$/;

/**
 * better-sqlite3 codes (primary or extended, https://sqlite.org/rescode.html): the file is locked by
 * another writer beyond the busy timeout, cannot be read or written, cannot be opened, or the disk
 * is full.
 */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|PROTOCOL)(_[A-Z_]+)?$/;

/** pg and pg-pool say these without a code. */
const POSTGRES_CONNECTION_MESSAGES = [
  /^Connection terminated/,
  /^timeout expired$/,
  /^timeout exceeded when trying to connect$/,
  /^Client has encountered a connection error and is not queryable$/,
  /^Connection timeout$/,
];

/** How deep to follow `cause` and AggregateError `errors` (a cycle must not loop). */
const MAX_DEPTH = 5;

/** True when `error` means the database is unreachable or unable to serve for now: answer 503, not 500. */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (depth > MAX_DEPTH || typeof error !== 'object' || error === null) return false;
  const code = stringProperty(error, 'code');
  if (code !== undefined && (NETWORK_CODES.has(code) || POSTGRES_UNAVAILABLE.test(code) || SQLITE_UNAVAILABLE.test(code))) return true;
  const message = stringProperty(error, 'message');
  if (code === undefined && message !== undefined && POSTGRES_CONNECTION_MESSAGES.some((pattern) => pattern.test(message))) return true;
  if ('cause' in error && isDatabaseUnavailable(error.cause, depth + 1)) return true;
  if (error instanceof AggregateError) return error.errors.some((inner: unknown) => isDatabaseUnavailable(inner, depth + 1));
  return false;
}

function stringProperty(value: object, name: 'code' | 'message'): string | undefined {
  const property: unknown = (value as Record<string, unknown>)[name];
  return typeof property === 'string' ? property : undefined;
}
