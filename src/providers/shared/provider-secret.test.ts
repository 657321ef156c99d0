import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorMessageOf } from './error-body.js';
import { resolvePooledKeys, resolveSecret } from './provider-secret.js';

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

describe('resolvePooledKeys', () => {
  it('reads each key, trimmed, from its variable or its file, by name', () => {
    const folder = mkdtempSync(join(tmpdir(), 'tollgate-keys-'));
    try {
      writeFileSync(join(folder, 'b'), ' sk-from-file\n');
      writeFileSync(join(folder, 'empty'), ' \n');
      const keys = [{ name: 'a', env: 'ACME_A' }, { name: 'b', file: join(folder, 'b') }];
      expect(resolvePooledKeys('acme', { name: 'acme-pool', api_keys: keys }, { ACME_A: ' sk-from-env ' })).toEqual([
        { name: 'a', secret: 'sk-from-env' },
        { name: 'b', secret: 'sk-from-file' },
      ]);
      expect(() => resolvePooledKeys('acme', { name: 'acme-pool', api_keys: [{ name: 'c', file: join(folder, 'empty') }] }, {})).toThrow(`acme provider "acme-pool", key "c": the file ${join(folder, 'empty')} is empty`);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('is undefined without api_keys, and refuses a blank variable naming it', () => {
    expect(resolvePooledKeys('acme', { name: 'acme-pool' }, {})).toBeUndefined();
    expect(() => resolvePooledKeys('acme', { name: 'acme-pool', api_keys: [{ name: 'a', env: 'ACME_A' }] }, { ACME_A: '  ' })).toThrow('acme provider "acme-pool", key "a": environment variable ACME_A is not set');
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
