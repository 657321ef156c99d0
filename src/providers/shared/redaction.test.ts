import { describe, expect, it } from 'vitest';
import { createRedactor } from './redaction.js';

describe('createRedactor', () => {
  it('removes every occurrence of the secret and of the upstream address', () => {
    const redact = createRedactor('https://llm.internal.example:8443/v1/', 'sk-live-abc123');
    expect(redact('key sk-live-abc123 refused at https://llm.internal.example:8443/v1/chat/completions; retry sk-live-abc123')).toBe(
      'key [redacted] refused at [upstream]chat/completions; retry [redacted]',
    );
    expect(redact('host llm.internal.example:8443 and llm.internal.example')).toBe('host [upstream] and [upstream]');
    expect(redact('nothing to hide')).toBe('nothing to hide');
  });

  it('works without a secret', () => {
    expect(createRedactor('http://127.0.0.1:4000/v1', undefined)('see http://127.0.0.1:4000/v1')).toBe('see [upstream]');
  });
});
