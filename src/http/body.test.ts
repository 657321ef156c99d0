import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/gateway-error.js';
import { MAX_JSON_DEPTH, nestingExceeds, parseJsonBody } from './body.js';

describe('nestingExceeds: the depth of JSON text, without recursion', () => {
  it('counts objects and arrays, whatever their mix', () => {
    expect(nestingExceeds('{"a":[{"b":[]}]}', 4)).toBe(false);
    expect(nestingExceeds('{"a":[{"b":[]}]}', 3)).toBe(true);
    expect(nestingExceeds('[1,[2],[3,[4]]]', 3)).toBe(false);
    expect(nestingExceeds('[1,[2],[3,[4]]]', 2)).toBe(true);
    expect(nestingExceeds('"plain"', 0)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(nestingExceeds('{"a":"[[[[{{{{"}', 1)).toBe(false);
    expect(nestingExceeds('{"a":"\\"[[[["}', 1)).toBe(false);
    expect(nestingExceeds('{"a":"\\\\","b":[[]]}', 2)).toBe(true);
    expect(nestingExceeds('{"a\\\\\\"[[":1}', 1)).toBe(false);
  });

  it('handles text of any depth and an unterminated string', () => {
    expect(nestingExceeds('['.repeat(10_000_000), MAX_JSON_DEPTH)).toBe(true);
    expect(nestingExceeds('{"a":"[[[[', 1)).toBe(false);
  });
});

describe('parseJsonBody', () => {
  it('refuses deeper than MAX_JSON_DEPTH with json_too_deep, accepts the limit itself', () => {
    const at = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    expect(parseJsonBody(at(MAX_JSON_DEPTH))).toBeInstanceOf(Array);
    const failure = (() => {
      try {
        return parseJsonBody(at(MAX_JSON_DEPTH + 1));
      } catch (error) {
        return error;
      }
    })();
    expect(failure).toBeInstanceOf(GatewayError);
    expect((failure as GatewayError).errorCode).toBe('json_too_deep');
  });

  it('malformed or empty text is the spec 400', () => {
    for (const text of ['', '  ', '{', '{"a":}', 'nul']) expect(() => parseJsonBody(text)).toThrow(GatewayError);
  });
});
