import { describe, expect, it } from 'vitest';
import { errorMessageOf } from './error-body.js';
import { resolveSecret } from './provider-secret.js';

describe('resolveSecret', () => {
  const config = { name: 'acme-primary', api_key_env: 'ACME_KEY' };

  it('reads and trims the named variable', () => {
    expect(resolveSecret('acme', config, { ACME_KEY: '  sk-acme \n' })).toBe('sk-acme');
  });

  it('is undefined when the config names no variable', () => {
    expect(resolveSecret('acme', { name: 'acme-primary' }, { ACME_KEY: 'sk-acme' })).toBeUndefined();
  });

  it.each([undefined, '', '   '])('refuses to start when the named variable is %j, naming the variable', (value) => {
    expect(() => resolveSecret('acme', config, { ACME_KEY: value })).toThrow('acme provider "acme-primary": environment variable ACME_KEY (its API key) is not set');
  });
});

describe('errorMessageOf', () => {
  it('reads OpenAI and Anthropic error bodies, and the bare string some compatible servers send', () => {
    expect(errorMessageOf('{"error":{"message":"bad","type":"invalid_request_error"}}')).toBe('bad');
    expect(errorMessageOf('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')).toBe('Overloaded');
    expect(errorMessageOf('{"error":"plain"}')).toBe('plain');
  });

  it.each(['', '<html>502</html>', '[1]', '{"error":{"code":5}}', '{"message":"no envelope"}'])('finds no message in %j', (text) => {
    expect(errorMessageOf(text)).toBeUndefined();
  });
});
