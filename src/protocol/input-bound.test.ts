import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeChatRequest } from './chat-completions/decode-request.js';
import { boundInputTokens, walkInputBound } from './input-bound.js';
import { slicesOf, YIELD_CHARACTERS } from './text-slices.js';
import { decodeResponsesRequest } from './responses/decode-request.js';
import { countTextTokens, estimateInputTokens, inputTokenMemo, TOKENS_PER_IMAGE } from './tokens.js';

const options = { imageTokens: TOKENS_PER_IMAGE };

describe('the input bound of a request body', () => {
  it('counts fields the canonical request ignores: a 1 MB JSON schema moves the bound by its tokens', () => {
    const plain = { model: 'm', messages: [{ role: 'user', content: 'Hi' }] };
    const schema = { type: 'object', description: 'x '.repeat(500_000) };
    const withSchema = { ...plain, response_format: { type: 'json_schema', json_schema: { name: 's', schema } } };
    expect(estimateInputTokens(decodeChatRequest(withSchema).request)).toBe(estimateInputTokens(decodeChatRequest(plain).request));
    expect(boundInputTokens(withSchema, options) - boundInputTokens(plain, options)).toBeGreaterThan(countTextTokens('x '.repeat(500_000)));
  });

  it('is the same bound when the texts are counted again from the memo (a coding agent resending its prompt and tools)', () => {
    const fresh = `${process.pid}-${Date.now()}`;
    const system = `You are a coding agent (${fresh}). `.repeat(500);
    const tools = Array.from({ length: 20 }, (_, index) => ({
      type: 'function',
      function: { name: `tool_${index}_${fresh}`, description: `Tool ${index} (${fresh}) edits files. `.repeat(20), parameters: { type: 'object', properties: { path: { type: 'string' } } } },
    }));
    const body = { model: 'm', messages: [{ role: 'system', content: system }, { role: 'user', content: 'Hi' }], tools };
    // A prompt longer than a slice is remembered a slice at a time (the same slices every time).
    const slices = [...slicesOf(system)];
    expect(slices.length).toBeGreaterThan(1);
    expect(slices.some((slice) => inputTokenMemo.has(slice))).toBe(false);
    const cold = boundInputTokens(body, options);
    expect(slices.every((slice) => inputTokenMemo.has(slice))).toBe(true);
    expect(boundInputTokens(structuredClone(body), options)).toBe(cold);
  });

  it('is at least the canonical estimate for chat and Responses requests of any text (seeded)', () => {
    const text = fc.string({ maxLength: 200, unit: 'grapheme' });
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('user', 'assistant', 'system'), text), { minLength: 1, maxLength: 6 }), text, (messages, instructions) => {
        const chat = { model: 'm', messages: messages.map(([role, content]) => ({ role, content })) };
        expect(boundInputTokens(chat, options)).toBeGreaterThanOrEqual(estimateInputTokens(decodeChatRequest(chat).request));
        const responses = { model: 'm', instructions, input: messages.map(([role, content]) => ({ role: role === 'system' ? 'developer' : role, content })) };
        expect(boundInputTokens(responses, options)).toBeGreaterThanOrEqual(estimateInputTokens(decodeResponsesRequest(responses)));
      }),
      { seed: 7, numRuns: 200 },
    );
  });

  it('counts an image by its allowance, whatever its bytes, in every vendor shape', () => {
    const data = `data:image/png;base64,${'A'.repeat(1_000_000)}`;
    const base = boundInputTokens({ content: [] }, options);
    const shapes = [
      { type: 'image_url', image_url: { url: data, detail: 'high' } },
      { type: 'input_image', image_url: data },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'A'.repeat(1_000_000) } },
      { inline_data: { mime_type: 'image/png', data: 'A'.repeat(1_000_000) } },
    ];
    for (const shape of shapes) {
      const bound = boundInputTokens({ content: [shape] }, options);
      expect(bound - base).toBeLessThan(TOKENS_PER_IMAGE + 20);
      expect(bound - base).toBeGreaterThanOrEqual(TOKENS_PER_IMAGE);
    }
    expect(boundInputTokens({ content: [data] }, { imageTokens: 5_000 })).toBeGreaterThanOrEqual(5_000);
  });

  it('walks any depth without recursion and pauses every slice of text', () => {
    let deep: unknown = 'leaf';
    for (let depth = 0; depth < 200_000; depth += 1) deep = { nested: deep };
    expect(boundInputTokens(deep, options)).toBeGreaterThan(200_000);
    const walk = walkInputBound({ parts: Array.from({ length: 10 }, () => 'word '.repeat(YIELD_CHARACTERS / 5 + 1)) }, options);
    let pauses = 0;
    for (let step = walk.next(); step.done !== true; step = walk.next()) pauses += 1;
    expect(pauses).toBeGreaterThanOrEqual(9);
  });

  it('bounds text beyond the exact budget by its bytes, so an 8 MiB body is linear', () => {
    const text = 'abcdefgh '.repeat(1_000);
    const exact = boundInputTokens({ text }, { ...options, exactCharacters: 1 << 20 });
    const bytes = boundInputTokens({ text }, { ...options, exactCharacters: 0 });
    expect(exact).toBeLessThan(bytes);
    expect(bytes).toBeGreaterThanOrEqual(text.length);
  });
});
