import { describe, expect, it } from 'vitest';
import { clipEcho, memberPath, MAX_ECHO_LENGTH } from './client-echo.js';

describe('clipEcho', () => {
  it('keeps text up to the bound whole', () => {
    expect(clipEcho('temprature')).toBe('temprature');
    expect(clipEcho('')).toBe('');
    const atBound = 'a'.repeat(MAX_ECHO_LENGTH);
    expect(clipEcho(atBound)).toBe(atBound);
  });

  it('cuts longer text to the bound and marks it with …', () => {
    expect(clipEcho('a'.repeat(MAX_ECHO_LENGTH + 1))).toBe(`${'a'.repeat(MAX_ECHO_LENGTH)}…`);
    expect(clipEcho('b'.repeat(2 * 1024 * 1024))).toHaveLength(MAX_ECHO_LENGTH + 1);
  });

  it('never splits a surrogate pair', () => {
    const text = `${'a'.repeat(MAX_ECHO_LENGTH - 1)}😀😀`;
    expect(clipEcho(text)).toBe(`${'a'.repeat(MAX_ECHO_LENGTH - 1)}…`);
    expect(clipEcho(`${'a'.repeat(MAX_ECHO_LENGTH - 2)}😀😀`)).toBe(`${'a'.repeat(MAX_ECHO_LENGTH - 2)}😀…`);
  });

  it('clips the client-chosen member of a path, not the path', () => {
    expect(memberPath('metadata', 'team')).toBe('metadata.team');
    expect(memberPath('metadata', 'k'.repeat(1_000))).toBe(`metadata.${'k'.repeat(MAX_ECHO_LENGTH)}…`);
  });
});
