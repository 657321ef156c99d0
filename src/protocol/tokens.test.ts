import { describe, expect, it } from 'vitest';
import type { CanonicalRequest } from './canonical.js';
import { countTextTokens, estimateInputTokens } from './tokens.js';

const request = (overrides: Partial<CanonicalRequest> = {}): CanonicalRequest => ({
  model: 'm',
  input: [{ type: 'message', role: 'user', content: [{ type: 'text', text: 'Hello there' }] }],
  tools: [],
  toolChoice: 'auto',
  stream: false,
  ...overrides,
});

describe('token counting', () => {
  it('counts special-token markers in client text as plain text instead of throwing', () => {
    expect(countTextTokens('a <|endoftext|> b')).toBeGreaterThan(3);
    expect(countTextTokens('')).toBe(0);
  });

  it('estimates input with per-item framing, instructions and tools', () => {
    const plain = estimateInputTokens(request());
    expect(plain).toBe(3 + 4 + countTextTokens('Hello there'));
    const withInstructions = estimateInputTokens(request({ instructions: 'Be brief.' }));
    expect(withInstructions).toBe(plain + 4 + countTextTokens('Be brief.'));
    const withTools = estimateInputTokens(request({ tools: [{ name: 'weather', parameters: { type: 'object' } }] }));
    expect(withTools).toBeGreaterThan(plain);
  });
});
