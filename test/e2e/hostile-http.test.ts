/**
 * Hostile HTTP against the real server on a raw TCP socket: what Node's parser refuses before any
 * route (bad method token, duplicate Content-Length, oversized headers, a missing Host, an unknown
 * Expect, broken chunking…) and bodies nested to any depth all get a 4xx in the spec's error format
 * with `x-request-id`, never Fastify's or Node's own shape, an empty body, or a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/http/body.js';
import { startHarness, type Harness } from '../support/harness.js';
import { rawExchange, type RawAnswer } from '../support/raw-http.js';

const errorBody = (message: string, code: string) => JSON.stringify({ error: { message, type: 'invalid_request_error', code } });
const BAD_REQUEST = errorBody('Invalid request: malformed HTTP request.', 'bad_request');

function expectSpecError(answer: RawAnswer, status: number, body: string, options: { closes?: boolean } = {}): void {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(answer.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/);
  if (options.closes ?? true) expect(answer.headers.connection).toBe('close');
  expect(answer.body).toBe(body);
}

/** `{"a":{"a":…"x"…}}` nested `depth` levels, built as text (no recursion, any depth). */
function nestedObject(depth: number): string {
  return `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
}

describe('hostile HTTP, before and at decoding', () => {
  let harness: Harness;
  let secret: string;

  beforeAll(async () => {
    harness = await startHarness();
    ({ secret } = await harness.newAccount('5'));
  });
  afterAll(async () => harness?.close());

  const post = (headers: string, body = '') =>
    `POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${secret}\r\n${headers}\r\n${body}`;

  it('400 for what the parser refuses, each in the spec format with x-request-id and connection: close', async () => {
    const refused: Array<[string, string]> = [
      ['duplicate Content-Length', post('Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n', '{}')],
      ['a bad method token', 'GE(T /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n'],
      ['a space in a header name', 'GET /healthz HTTP/1.1\r\nHost: gateway\r\nBad Header: x\r\n\r\n'],
      ['an unknown HTTP version', 'GET /healthz HTTP/7.3\r\nHost: gateway\r\n\r\n'],
      ['Content-Length with Transfer-Encoding', post('Content-Length: 2\r\nTransfer-Encoding: chunked\r\n', '2\r\n{}\r\n0\r\n\r\n')],
      ['a bad chunk size', post('Transfer-Encoding: chunked\r\n', 'zz\r\n{}\r\n0\r\n\r\n')],
      ['a non-numeric Content-Length', post('Content-Length: abc\r\n', '{}')],
      ['an HTTP/2 preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'],
      ['binary garbage', '\u0000\u0001\u0002\u00ff\r\n\r\n'],
      ['a bare LF inside a header value', 'GET /healthz HTTP/1.1\r\nHost: gateway\r\nX-A: b\nc\r\n\r\n'],
    ];
    for (const [what, payload] of refused) {
      const answer = await rawExchange(harness.baseUrl, payload);
      expect(answer.status, what).toBe(400);
      expectSpecError(answer, 400, BAD_REQUEST);
    }
  });

  it('400 for an HTTP/1.1 request without Host (HTTP/1.0 needs none)', async () => {
    const answer = await rawExchange(harness.baseUrl, 'GET /healthz HTTP/1.1\r\n\r\n');
    expectSpecError(answer, 400, errorBody('Invalid request: an HTTP/1.1 request must carry a Host header.', 'missing_host_header'));
    const old = await rawExchange(harness.baseUrl, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect(old.status).toBe(200);
  });

  it('431 for headers over the limit, and for a URL too long to be a header line', async () => {
    const headers = await rawExchange(harness.baseUrl, `GET /healthz HTTP/1.1\r\nHost: gateway\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectSpecError(headers, 431, errorBody('Request header fields too large.', 'request_header_fields_too_large'));
    const url = await rawExchange(harness.baseUrl, `GET /v1/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: gateway\r\n\r\n`);
    expectSpecError(url, 431, errorBody('Request header fields too large.', 'request_header_fields_too_large'));
  });

  it('414 for a path parameter longer than any id', async () => {
    const answer = await rawExchange(harness.baseUrl, `GET /v1/responses/resp_${'a'.repeat(1_100)} HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${secret}\r\n\r\n`);
    expectSpecError(answer, 414, errorBody('Request URI too long.', 'uri_too_long'), { closes: false });
  });

  it('417 for an Expect other than 100-continue; 100-continue itself works', async () => {
    const answer = await rawExchange(harness.baseUrl, post('Content-Type: application/json\r\nContent-Length: 2\r\nExpect: teapot\r\n', '{}'));
    expectSpecError(answer, 417, errorBody('Expectation failed: only "Expect: 100-continue" is supported.', 'expectation_failed'));
    const body = JSON.stringify({ model: 'model-5.6', messages: [{ role: 'user', content: 'Hi' }] });
    const continued = await rawExchange(
      harness.baseUrl,
      post(`Content-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n`, body),
    );
    // The interim 100 comes first; the final answer follows on the same connection.
    expect(continued.status).toBe(100);
    expect(continued.body).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  });

  it('404 for CONNECT, as for any other unknown method, instead of a silent close', async () => {
    const answer = await rawExchange(harness.baseUrl, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expectSpecError(answer, 404, JSON.stringify({ error: { message: 'Invalid URL (CONNECT example.com:443)', type: 'invalid_request_error', param: '', code: '' } }));
  });

  it('the server keeps answering normally after all of that', async () => {
    expect((await fetch(`${harness.baseUrl}/healthz`)).status).toBe(200);
  });

  describe(`bodies nested deeper than ${MAX_JSON_DEPTH} levels`, () => {
    const tooDeep = errorBody(`Invalid request: JSON nested deeper than ${MAX_JSON_DEPTH} levels.`, 'json_too_deep');

    it('tools[0].function.parameters nested 5,000 levels: 400 on chat, in the spec format', async () => {
      const parameters = nestedObject(5_000);
      const body = `{"model":"model-5.6","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${parameters}}}]}`;
      const response = await harness.post('/v1/chat/completions', body, secret);
      expect(response.status).toBe(400);
      expect(response.headers.get('x-request-id')).toMatch(/^req_/);
      expect(await response.text()).toBe(tooDeep);
    });

    it('any depth, on both endpoints, arrays or objects, up to the body limit: 400, never a 500', async () => {
      for (const depth of [MAX_JSON_DEPTH + 1, 10_000, 1_000_000]) {
        for (const path of ['/v1/responses', '/v1/chat/completions']) {
          for (const value of [nestedObject(depth), `${'['.repeat(depth)}${']'.repeat(depth)}`]) {
            const response = await harness.post(path, `{"model":"model-5.6","input":"x","metadata":${value}}`, secret);
            expect(response.status, `${path} ${depth}`).toBe(400);
            expect(await response.text()).toBe(tooDeep);
          }
        }
      }
      // Unclosed brackets: refused as too deep before any parser sees them.
      const unclosed = await harness.post('/v1/responses', '['.repeat(100_000), secret);
      expect(await unclosed.text()).toBe(tooDeep);
    });

    it('the limit itself is accepted, and brackets inside strings do not count', async () => {
      // The body is level 1, tools level 2, the tool 3, function 4: parameters may nest to the limit.
      // Each nested schema takes two levels; the innermost one's `examples` array is level MAX_JSON_DEPTH.
      const levels = (MAX_JSON_DEPTH - 6) / 2;
      const schema = `${'{"type":"object","properties":{"a":'.repeat(levels)}{"type":"string","examples":["x"]}${'}}'.repeat(levels)}`;
      const body = `{"model":"model-5.6","messages":[{"role":"user","content":"${'[{'.repeat(500)}\\"[{"}],"tools":[{"type":"function","function":{"name":"f","parameters":${schema}}}]}`;
      expect(() => JSON.parse(body) as unknown).not.toThrow();
      const response = await harness.post('/v1/chat/completions', body, secret);
      expect(response.status, await response.clone().text()).toBe(200);
    });
  });
});
