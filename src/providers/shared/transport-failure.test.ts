import { describe, expect, it } from 'vitest';
import { SseDecodeError } from '../../lib/sse-decoder.js';
import { classifyTransportFailure, describeStreamFailure, errorCode } from './transport-failure.js';

const withCode = (code: string): Error => Object.assign(new Error(code), { code });

describe('classifyTransportFailure', () => {
  it.each([
    ['ECONNREFUSED', 'connect'],
    ['ECONNRESET', 'connect'],
    ['UND_ERR_SOCKET', 'connect'],
    ['UND_ERR_CONNECT_TIMEOUT', 'timeout'],
    ['UND_ERR_HEADERS_TIMEOUT', 'timeout'],
    ['ETIMEDOUT', 'timeout'],
    ['HPE_INVALID_CONSTANT', 'protocol'],
    ['UND_ERR_HEADERS_OVERFLOW', 'protocol'],
  ])('reads %s as %s', (code, kind) => {
    expect(classifyTransportFailure(withCode(code))).toEqual({ kind, detail: expect.stringContaining(`(${code})`) });
  });

  it('falls back to connect for an error without a code', () => {
    expect(classifyTransportFailure(new Error('boom'))).toEqual({ kind: 'connect', detail: 'could not reach the upstream (unknown error)' });
    expect(classifyTransportFailure('not even an error').kind).toBe('connect');
  });
});

describe('errorCode', () => {
  it('finds the code on the cause chain and inside an AggregateError (happy-eyeballs connects)', () => {
    expect(errorCode(new Error('outer', { cause: withCode('ECONNRESET') }))).toBe('ECONNRESET');
    expect(errorCode(new AggregateError([new Error('no code'), withCode('ECONNREFUSED')]))).toBe('ECONNREFUSED');
  });

  it('stops on an error that is its own cause', () => {
    const looped = new Error('loop');
    (looped as Error & { cause: unknown }).cause = looped;
    expect(errorCode(looped)).toBeUndefined();
  });
});

describe('describeStreamFailure', () => {
  it('says what broke a stream after the 200, without internals', () => {
    expect(describeStreamFailure(new SseDecodeError('too long'))).toBe('The upstream sent a stream event larger than allowed.');
    expect(describeStreamFailure(withCode('UND_ERR_BODY_TIMEOUT'))).toBe('The upstream stopped sending data (idle timeout).');
    expect(describeStreamFailure(withCode('UND_ERR_ABORTED'))).toBe('The upstream request was cancelled.');
    expect(describeStreamFailure(withCode('ECONNRESET'))).toBe('The upstream connection was lost mid-stream.');
  });
});
