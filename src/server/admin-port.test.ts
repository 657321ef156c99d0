import { describe, expect, it } from 'vitest';
import { adminPort } from './server-process.js';

describe('TOLLGATE_ADMIN_PORT', () => {
  it('is absent (the admin API shares the public port) when unset or empty', () => {
    expect(adminPort({})).toBeUndefined();
    expect(adminPort({ TOLLGATE_ADMIN_PORT: '' })).toBeUndefined();
  });

  it('reads a port number, 0 included (a free port)', () => {
    expect(adminPort({ TOLLGATE_ADMIN_PORT: '9090' })).toBe(9090);
    expect(adminPort({ TOLLGATE_ADMIN_PORT: '0' })).toBe(0);
  });

  it('refuses anything else, naming the variable', () => {
    for (const value of ['abc', '-1', '65536', '80.5']) {
      expect(() => adminPort({ TOLLGATE_ADMIN_PORT: value })).toThrow(`TOLLGATE_ADMIN_PORT must be a port number, got ${JSON.stringify(value)}`);
    }
  });
});
