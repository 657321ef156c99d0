import { describe, expect, it } from 'vitest';
import { GatewayError } from './gateway-error.js';

const body = (error: GatewayError) => JSON.stringify(error.toBody());

describe('GatewayError renders the spec table to the byte', () => {
  it.each([
    ['invalid_json', 400, '{"error":{"message":"Invalid request: invalid JSON request body.","type":"service_api_error","code":""}}'],
    ['invalid_token', 401, '{"error":{"message":"Invalid token.","type":"service_api_error","code":""}}'],
    ['insufficient_balance', 403, '{"error":{"message":"Insufficient balance.","type":"service_api_error","param":"","code":"insufficient_user_quota"}}'],
    ['rate_limited', 429, '{"error":{"message":"Rate limit exceeded.","type":"service_api_error","code":""}}'],
    ['model_unavailable', 503, '{"error":{"message":"The requested model is currently unavailable.","type":"service_api_error","code":"model_not_found"}}'],
  ] as const)('%s', (code, status, expected) => {
    const error = new GatewayError(code);
    expect(error.status).toBe(status);
    expect(body(error)).toBe(expected);
  });

  it("a key's budget gets the balance's 403 in every field but the message, which names the key's budget", () => {
    const error = new GatewayError('key_budget_exceeded');
    expect(error.status).toBe(403);
    expect(body(error)).toBe('{"error":{"message":"Insufficient key budget: this API key\'s spend limit cannot cover the request.","type":"service_api_error","param":"","code":"insufficient_user_quota"}}');
    expect(body(new GatewayError('insufficient_balance'))).toContain('"message":"Insufficient balance."');
  });

  it('404 names the method and the path without its query', () => {
    const error = GatewayError.routeNotFound('GET', '/v1/nothing?x=1');
    expect(error.status).toBe(404);
    expect(body(error)).toBe('{"error":{"message":"Invalid URL (GET /v1/nothing)","type":"invalid_request_error","param":"","code":""}}');
  });

  it('validation errors carry the field as param', () => {
    const error = new GatewayError('invalid_request', { message: "Invalid value for 'reasoning.effort'.", param: 'reasoning.effort' });
    expect(body(error)).toBe('{"error":{"message":"Invalid value for \'reasoning.effort\'.","type":"invalid_request_error","param":"reasoning.effort","code":"invalid_value"}}');
  });

  it('param is absent, never null, when the error is about no field', () => {
    expect(body(new GatewayError('body_too_large'))).toBe('{"error":{"message":"Request body too large.","type":"invalid_request_error","code":"request_too_large"}}');
    expect(body(new GatewayError('internal'))).toBe('{"error":{"message":"The server had an error while processing your request.","type":"server_error","code":"internal_error"}}');
    expect(body(new GatewayError('upstream_error'))).toBe('{"error":{"message":"The upstream provider failed to answer.","type":"server_error","code":"upstream_error"}}');
    expect(body(new GatewayError('invalid_request', { message: 'Bad.', param: null, code: 'invalid_type' }))).toBe('{"error":{"message":"Bad.","type":"invalid_request_error","code":"invalid_type"}}');
  });

  it('errors raised before routing: OpenAI style, with a code and no param', () => {
    for (const [code, status] of [['bad_http_request', 400], ['missing_host', 400], ['request_timeout', 408], ['uri_too_long', 414], ['expectation_failed', 417], ['headers_too_large', 431]] as const) {
      const error = new GatewayError(code);
      expect(error.status).toBe(status);
      expect(Object.keys(error.toBody().error)).toEqual(['message', 'type', 'code']);
      expect(error.toBody().error.type).toBe('invalid_request_error');
    }
  });
});
