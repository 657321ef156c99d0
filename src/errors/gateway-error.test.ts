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

  it('404 names the method and the path without its query', () => {
    const error = GatewayError.routeNotFound('GET', '/v1/nothing?x=1');
    expect(error.status).toBe(404);
    expect(body(error)).toBe('{"error":{"message":"Invalid URL (GET /v1/nothing)","type":"invalid_request_error","param":"","code":""}}');
  });

  it('validation errors carry the field as param', () => {
    const error = new GatewayError('invalid_request', { message: "Invalid value for 'reasoning.effort'.", param: 'reasoning.effort' });
    expect(body(error)).toBe('{"error":{"message":"Invalid value for \'reasoning.effort\'.","type":"invalid_request_error","param":"reasoning.effort","code":"invalid_value"}}');
  });
});
