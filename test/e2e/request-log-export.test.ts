/**
 * Large CSV exports of the request log (`GET /admin/v1/requests?format=csv`) on a real server and
 * database: tens of thousands of rows seeded straight into `request_log` in one statement, then
 * exports that stream while `/healthz` keeps answering, concurrent exports that all complete (the
 * receive timeouts are short here, so a held event loop would answer them 408), the bound on rows
 * per export with the `x-next-cursor` trailer to continue from, and a client that leaves mid-export
 * stopping the queries. The readers are node:http clients in this process, as fast as the server
 * lets them; Node's http client exposes the trailer.
 */
import { get, type IncomingMessage } from 'node:http';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { adminClient, allPages } from '../support/admin-client.js';
import { testCatalog } from '../support/catalog.js';
import { parseCsvRecords } from '../support/csv.js';
import { addressOf, rawExchange } from '../support/raw-http.js';
import { engines, type TestDatabase } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';

/** Rows per export: the code before streaming in turns held the event loop 0.7 to 1.5 s at a time with these. */
const ROWS = 60_000;
/** Short receive timeouts: a request that waits on a held event loop longer than this gets a 408. */
const limits = { headers_timeout_ms: 1_000, request_timeout_ms: 1_000, connections_check_interval_ms: 100 };
/**
 * What the issue asks of the health check while exports run: under 100 ms. The code before
 * streaming in turns held the loop 0.7 to 1.5 s at a time (5 to 10 probes in all got answers, and
 * at times an export got a 408). On a shared, loaded machine this process is also paused now and then by the
 * OS scheduler or a garbage collection, for tens of milliseconds or more whatever it runs; so 99%
 * of the probes must answer under 100 ms, and none may wait as long as a receive timeout.
 */
const PROBE_LIMIT_MS = 100;
const PROBE_WORST_MS = limits.request_timeout_ms;


/**
 * `count` rows of one account, newest `at` a second ago and a millisecond apart, in one INSERT (one
 * transaction) straight into the table. Recent, so that retention does not prune them meanwhile.
 */
async function seedRequestLog(database: TestDatabase, accountId: string, count: number): Promise<void> {
  const newest = Date.now() - 1_000;
  const columns = 'at, request_id, account_id, key_id, surface, model, target, status, error_code, stream, latency_ms, first_byte_ms, input_tokens, cached_input_tokens, output_tokens, reasoning_tokens, cost_nanos';
  if (database.engine === 'sqlite') {
    const connection = new BetterSqlite3(database.url.slice('sqlite:'.length));
    try {
      connection
        .prepare(
          `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
           INSERT INTO request_log (${columns})
           SELECT ? - i, 'req_seed_' || ? || '_' || i, ?, 'key_seed', 'chat-completions', 'model-5.6', 'sim/model-5.6', CASE WHEN i % 10 = 0 THEN 502 ELSE 200 END,
                  CASE WHEN i % 10 = 0 THEN 'upstream_error' ELSE NULL END, i % 2, 40 + i % 100, 10 + i % 30, 1000 + i, i % 7, 50 + i % 400, i % 5, 1234567 + i FROM n`,
        )
        .run(count, newest, accountId, accountId);
    } finally {
      connection.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO request_log (${columns})
       SELECT $2::bigint - i, 'req_seed_' || $3 || '_' || i, $3, 'key_seed', 'chat-completions', 'model-5.6', 'sim/model-5.6', CASE WHEN i % 10 = 0 THEN 502 ELSE 200 END,
              CASE WHEN i % 10 = 0 THEN 'upstream_error' ELSE NULL END, i % 2, 40 + i % 100, 10 + i % 30, 1000 + i, i % 7, 50 + i % 400, i % 5, 1234567 + i
       FROM generate_series(1, $1::int) AS i`,
      [count, newest, accountId],
    );
    // Statistics, as autovacuum keeps them for a table in use: without them a fresh table's plan
    // sorts every older row of the account for each page.
    await client.query('ANALYZE request_log');
  } finally {
    await client.end();
  }
}

interface Export {
  status: number;
  headers: IncomingMessage['headers'];
  /** The body as received; joined into text only when read (not while the probe measures). */
  chunks: Buffer[];
  trailers: NodeJS.Dict<string>;
}

const textOf = (answer: Export) => Buffer.concat(answer.chunks).toString('utf8');

/** One export read to its end (trailer included) by a client that takes the bytes as they come. */
function readExport(baseUrl: string, query: string, token: string): Promise<Export> {
  return new Promise((resolve, reject) => {
    get(`${baseUrl}/admin/v1/requests?format=csv&${query}`, { headers: { authorization: `Bearer ${token}` } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, chunks, trailers: response.trailers }));
      response.on('error', reject);
    }).on('error', reject);
  });
}

/** Asks `/healthz` again and again, one at a time, until `until` settles; returns each answer's time, slowest first. */
async function probeWhile(baseUrl: string, until: Promise<unknown>): Promise<number[]> {
  let settled = false;
  void until.finally(() => (settled = true)).catch(() => undefined);
  const times: number[] = [];
  while (!settled) {
    const started = performance.now();
    const response = await fetch(`${baseUrl}/healthz`);
    await response.text();
    expect(response.status).toBe(200);
    times.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return times.sort((left, right) => right - left);
}

const lineCount = (csv: string) => csv.split('\r\n').length - 2;

describe.each(engines)('request log export on %s', (engine) => {
  let harness: Harness;
  let viewer: string;
  let accountId: string;

  beforeAll(async () => {
    harness = await startHarness({ engine, catalog: { ...(testCatalog() as object), limits } });
    viewer = (await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR)).secret;
    accountId = (await harness.newAccount('1')).accountId;
    await seedRequestLog(harness.database, accountId, ROWS);
  }, 60_000);

  afterAll(async () => {
    vi.restoreAllMocks();
    await harness?.close();
  });

  it(`streams three concurrent exports of ${ROWS} rows to the end, longer than the receive timeouts, while /healthz answers in under ${PROBE_LIMIT_MS} ms (99%)`, async () => {
    const started = performance.now();
    const exports = Promise.all([0, 1, 2].map(() => readExport(harness.baseUrl, `account=${accountId}`, viewer)));
    const probe = await probeWhile(harness.baseUrl, exports);
    const answers = await exports;
    const elapsedMs = performance.now() - started;
    // Each export complete, none refused with a 408.
    expect(answers.map((answer) => [answer.status, lineCount(textOf(answer))])).toEqual([0, 1, 2].map(() => [200, ROWS]));
    const worst = probe[0] ?? 0;
    const percentile99 = probe[Math.floor(probe.length / 100)] ?? 0;
    const slowest = `slowest of ${probe.length} probes (ms): ${probe.slice(0, 10).map(Math.round).join(', ')}`;
    expect(percentile99, slowest).toBeLessThan(PROBE_LIMIT_MS);
    expect(worst, slowest).toBeLessThan(PROBE_WORST_MS);
    expect(probe.length).toBeGreaterThan(20);
    // The exports outlived request_timeout_ms: it bounds receiving a request, never its answer.
    expect(elapsedMs).toBeGreaterThan(limits.request_timeout_ms);
    for (const answer of answers) {
      expect(answer.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(answer.trailers['x-next-cursor']).toBe('');
    }
    // Every row once, newest first.
    const ids = parseCsvRecords(answers[0] === undefined ? '' : textOf(answers[0])).records.map((record) => record.request_id);
    expect(new Set(ids).size).toBe(ROWS);
    expect(ids[0]).toBe(`req_seed_${accountId}_1`);
    expect(ids.at(-1)).toBe(`req_seed_${accountId}_${ROWS}`);
  }, 120_000);

  it('stops the queries when the client leaves mid-export', async () => {
    const pages = vi.spyOn(harness.store, 'listRequestLog');
    const left = new Promise<void>((resolve, reject) => {
      const request = get(`${harness.baseUrl}/admin/v1/requests?format=csv&account=${accountId}`, { headers: { authorization: `Bearer ${viewer}` } }, (response) => {
        expect(response.statusCode).toBe(200);
        response.once('data', () => {
          request.destroy();
          resolve();
        });
      });
      request.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? undefined : reject(error)));
    });
    await left;
    await new Promise((resolve) => setTimeout(resolve, 300));
    const asked = pages.mock.calls.length;
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(pages.mock.calls.length).toBe(asked);
    // Far from the ROWS / 200 pages of the whole export.
    expect(asked).toBeLessThan(20);
    pages.mockRestore();
    // The server is fine: the next export still runs.
    expect(lineCount(textOf(await readExport(harness.baseUrl, `account=${accountId}&status=502`, viewer)))).toBe(ROWS / 10);
  }, 60_000);

  it('refuses a bad cursor and an unknown account before the first byte, in the error format', async () => {
    for (const [query, status, message] of [
      ['cursor=junk', 400, /Invalid cursor/],
      ['account=nobody', 404, /no account with id or name "nobody"/],
    ] as const) {
      const answer = await readExport(harness.baseUrl, query, viewer);
      expect(answer.status, query).toBe(status);
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(answer.headers['x-request-id']).toMatch(/^req_/);
      expect((JSON.parse(textOf(answer)) as { error: { message: string } }).error.message).toMatch(message);
    }
  });
});

describe.each(engines)('request log export bound on %s', (engine) => {
  const MAX_ROWS = 450;
  const SEEDED = 1_000;
  let harness: Harness;
  let viewer: string;
  let accountId: string;

  beforeAll(async () => {
    harness = await startHarness({ engine, catalog: { ...(testCatalog() as object), log: { export_max_rows: MAX_ROWS } } });
    viewer = (await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR)).secret;
    accountId = (await harness.newAccount('1')).accountId;
    await seedRequestLog(harness.database, accountId, SEEDED);
  }, 60_000);

  afterAll(async () => {
    await harness?.close();
  });

  it('stops an export at log.export_max_rows and names in the x-next-cursor trailer where the next one continues, as the JSON pages do', async () => {
    const exported: string[] = [];
    const trailers: string[] = [];
    let cursor: string | undefined;
    do {
      const answer = await readExport(harness.baseUrl, `account=${accountId}${cursor === undefined ? '' : `&cursor=${cursor}`}`, viewer);
      expect(answer.status).toBe(200);
      expect(answer.headers.trailer).toBe('x-next-cursor');
      const { records } = parseCsvRecords(textOf(answer));
      exported.push(...records.map((record) => record.request_id ?? ''));
      const next = answer.trailers['x-next-cursor'] ?? 'missing';
      trailers.push(next);
      expect(records.length).toBe(next === '' ? SEEDED % MAX_ROWS : MAX_ROWS);
      cursor = next === '' ? undefined : next;
    } while (cursor !== undefined);
    expect(trailers.map((trailer) => trailer !== '')).toEqual([true, true, false]);
    // The same rows, in the same order, as the JSON listing's pages.
    const { rows } = await allPages(adminClient(harness.baseUrl), `/requests?account=${accountId}`, viewer, 200);
    expect(exported).toEqual(rows.map((row) => row.request_id));
    expect(new Set(exported).size).toBe(SEEDED);
  }, 60_000);

  it('sends an HTTP/1.0 client the same rows without the chunked coding a trailer needs (the connection ends the body)', async () => {
    const { host, port } = addressOf(harness.baseUrl);
    const answer = await rawExchange(harness.baseUrl, `GET /admin/v1/requests?format=csv&account=${accountId} HTTP/1.0\r\nHost: ${host}:${port}\r\nAuthorization: Bearer ${viewer}\r\n\r\n`);
    expect(answer.status).toBe(200);
    expect(answer.headers['transfer-encoding']).toBeUndefined();
    expect(answer.headers.trailer).toBeUndefined();
    expect(parseCsvRecords(answer.body).records.map((record) => record.request_id)).toEqual(Array.from({ length: MAX_ROWS }, (_, index) => `req_seed_${accountId}_${index + 1}`));
  });
});
