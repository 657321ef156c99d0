import { describe, expect, it } from 'vitest';
import { readChunkBySchema, readChunkPlainly } from './chat-wire.js';

/** Chunks of every shape the schema reads, or refuses, for the plain reading to match. */
const CHUNKS: Record<string, unknown>[] = [
  {},
  { choices: null, usage: null },
  { choices: [] },
  { choices: [], usage: { prompt_tokens: 9, completion_tokens: 20, total_tokens: 29, prompt_tokens_details: { cached_tokens: 3 }, completion_tokens_details: { reasoning_tokens: 1 } } },
  { choices: [], usage: { prompt_tokens: -1, completion_tokens: 1.5, prompt_tokens_details: { cached_tokens: '3' }, completion_tokens_details: { reasoning_tokens: 2 ** 53 } } },
  { choices: [], usage: { prompt_tokens: null, completion_tokens: undefined, prompt_tokens_details: null, completion_tokens_details: 'x' } },
  { choices: [], usage: { prompt_tokens: 2 ** 53 - 1, completion_tokens: -0, prompt_tokens_details: [], completion_tokens_details: { reasoning_tokens: true } } },
  { choices: [], usage: 'x' },
  { choices: [], usage: [1] },
  { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
  { choices: [{ index: 0, delta: { content: 'Hi', refusal: null }, finish_reason: null }] },
  { choices: [{ delta: { content: 'Hi' } }] },
  { choices: [{ index: null, delta: { content: 7, refusal: 'No' }, finish_reason: 3 }] },
  { choices: [{ index: 1.5, delta: { reasoning_content: 'Hm', reasoning: { text: 'x' } } }] },
  { choices: [{ index: 'zero', delta: 'x', finish_reason: 'length' }] },
  { choices: [{ index: 1, delta: { content: 'one' } }, { index: 0, delta: { content: 'zero' }, finish_reason: 'stop' }] },
  { choices: [{ index: 0, delta: null }] },
  { choices: [{ index: 0, delta: [] }] },
  { choices: [{ index: 0, delta: { tool_calls: null, content: '' } }] },
];

describe('readChunkPlainly', () => {
  it.each(CHUNKS.map((chunk) => [JSON.stringify(chunk), chunk]))('reads %s as the schema does', (_shown, chunk) => {
    const plain = readChunkPlainly(chunk);
    expect(plain).toBeDefined();
    expect(plain).toEqual(readChunkBySchema(chunk));
  });

  it('leaves tool calls and what the schema refuses to the schema', () => {
    expect(readChunkPlainly({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: '' } }] } }] })).toBeUndefined();
    for (const refused of [{ choices: 'x' }, { choices: [1] }, { choices: [null] }]) {
      expect(readChunkPlainly(refused)).toBeUndefined();
      expect(() => readChunkBySchema(refused)).toThrow('not a chat completion chunk');
    }
  });
});
