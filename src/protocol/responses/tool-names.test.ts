import { describe, expect, it } from 'vitest';
import { flatToolName } from './tool-names.js';

describe('flatToolName', () => {
  it('joins namespace and name when the result is a valid function name everywhere', () => {
    expect(flatToolName('collaboration', 'spawn_agent')).toBe('collaboration__spawn_agent');
  });

  it('hashes names that are too long or hold other characters, keeping them distinct and valid', () => {
    const long = flatToolName('n'.repeat(60), 'tool');
    const dotted = flatToolName('mcp.server', 'read');
    const other = flatToolName('mcp:server', 'read');
    for (const name of [long, dotted, other]) expect(name).toMatch(/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/);
    expect(dotted).not.toBe(other);
    expect(flatToolName('mcp.server', 'read')).toBe(dotted);
  });
});
