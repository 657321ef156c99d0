import { describe, expect, it } from 'vitest';
import type { CanonicalEvent } from '../../protocol/canonical.js';
import { ChunkShape } from './chat-chunk-shape.js';
import { ChatChunkReader } from './chat-wire.js';
import { fixture } from './__fixtures__/fixtures.js';

const chunk = (fields: Record<string, unknown>): string =>
  JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1767225600,
    model: 'gpt-4.1-mini',
    service_tier: 'default',
    system_fingerprint: 'fp_1',
    choices: [{ index: 0, delta: { content: 'Hello' }, logprobs: null, finish_reason: null }],
    usage: null,
    obfuscation: 'x1',
    ...fields,
  });

function learn(text: string): ChunkShape | undefined {
  return ChunkShape.learn(text, JSON.parse(text), new ChatChunkReader().read(JSON.parse(text)));
}

function learnt(text: string): ChunkShape {
  const shape = learn(text);
  if (shape === undefined) throw new Error('no shape learnt');
  return shape;
}

describe('ChunkShape', () => {
  const shape = learnt(chunk({}));

  it('reads a chunk of the same layout: its content and its model, whatever the other strings say', () => {
    const text = chunk({ id: 'chatcmpl-2', created: 1767225601, obfuscation: 'zz9', choices: [{ index: 0, delta: { content: ' wörld 🦀' }, logprobs: null, finish_reason: null }] });
    expect(shape.read(text)).toEqual({ content: ' wörld 🦀', modelText: 'gpt-4.1-mini', modelAt: text.indexOf('gpt-4.1-mini') });
  });

  it('decodes escapes in the content as JSON.parse does', () => {
    const content = 'a "quote", a \\ backslash,\na line break, \u0001 and \u2028';
    const text = chunk({ choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }] });
    expect(shape.read(text)?.content).toBe(content);
    const escaped = text.replace('\\n', '\\u000a');
    expect(shape.read(escaped)?.content).toBe(content);
  });

  it('leaves every chunk that reads differently to the parser', () => {
    const choice = (fields: Record<string, unknown>) => [{ index: 0, delta: { content: 'Hi' }, logprobs: null, finish_reason: null, ...fields }];
    const different = [
      chunk({ choices: choice({ finish_reason: 'stop' }) }),
      chunk({ choices: choice({ index: 1 }) }),
      chunk({ choices: [...choice({}), ...choice({ index: 1 })] }),
      chunk({ choices: choice({ delta: { content: 'Hi', refusal: 'No' } }) }),
      chunk({ choices: choice({ delta: { content: 'Hi', reasoning_content: 'Hm' } }) }),
      chunk({ choices: choice({ delta: { content: 'Hi', tool_calls: [{ index: 0, function: { arguments: '{}' } }] } }) }),
      chunk({ choices: choice({ delta: { content: null } }) }),
      chunk({ choices: choice({ delta: { content: 7 } }) }),
      chunk({ usage: { prompt_tokens: 1, completion_tokens: 1 } }),
      chunk({ error: { message: 'overloaded' } }),
      chunk({ extra: 'key' }),
      chunk({ model: null }),
      chunk({ created: 'soon' }),
      chunk({}).replace('"index":0', '"index": 0'),
      chunk({}).replace('"Hello"', '"Hel\\qlo"'),
      chunk({}).replace('"Hello"', '"Hel\u0001lo"'),
      chunk({}).replace('"Hello"', '"Hel"lo"'),
      `${chunk({})} `,
    ];
    for (const text of different) expect(shape.read(text), text).toBeUndefined();
  });

  it('learns nothing from a chunk that carries more than its content, or has a model key besides the top-level one', () => {
    for (const fields of [{ finish_reason: 'stop' }, { delta: { content: 'x', refusal: 'no' } }, { delta: { content: '', refusal: 'no' } }, { delta: { content: 'x', tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: '' } }] } }]) {
      const text = chunk({ choices: [{ index: 0, delta: { content: 'x' }, finish_reason: null, ...fields }] });
      expect(learn(text), text).toBeUndefined();
    }
    expect(learn(chunk({ usage: { prompt_tokens: 1, completion_tokens: 1 } }))).toBeUndefined();
    const noContent = chunk({ choices: [{ index: 0, delta: {}, finish_reason: null }] });
    expect(learn(noContent)).toBeUndefined();
    const nested = chunk({ choices: [{ index: 0, delta: { content: 'x', model: 'gpt-4.1-mini' }, finish_reason: null }] });
    expect(learn(nested)).toBeUndefined();
    const twice = chunk({}).replace('"usage":null', '"usage":null,"model":"other"');
    expect(learn(twice)).toBeUndefined();
  });

  it('finds a known shape for a chunk of another stream', () => {
    const text = chunk({ id: 'chatcmpl-other', created: 1767225999, choices: [{ index: 0, delta: { content: 'Hi' }, logprobs: null, finish_reason: null }] });
    expect(ChunkShape.find(text, undefined)).toEqual({ shape, plain: { content: 'Hi', modelText: 'gpt-4.1-mini', modelAt: text.indexOf('gpt-4.1-mini') } });
    expect(ChunkShape.find(text, shape)).toBeUndefined();
    expect(ChunkShape.find(chunk({ choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: 'stop' }] }), undefined)).toBeUndefined();
  });

  it('keeps the whitespace of the chunk it learnt from', () => {
    const spaced = JSON.stringify(JSON.parse(chunk({})), null, 1).replaceAll('\n', '');
    const spacedShape = learnt(spaced);
    expect(spacedShape.read(spaced.replace('"Hello"', '"Bye"'))?.content).toBe('Bye');
    expect(spacedShape.read(chunk({}))).toBeUndefined();
  });
});

describe('ChunkShape on recorded streams', () => {
  const streams = ['chat-text-stream.sse', 'chat-tool-calls-stream.sse', 'conformance/chat-text-stream.sse', 'conformance/chat-tool-call-stream.sse', 'conformance/chat-parallel-tool-calls-stream.sse', 'conformance/chat-usage-stream.sse'];

  it.each(streams)('reads every chunk of %s it matches as the chunk reader does', (name) => {
    const chunks = fixture(name)
      .split('\n\n')
      .map((event) => event.replace(/^data: /, ''))
      .filter((data) => data !== '' && data !== '[DONE]');
    const reader = new ChatChunkReader();
    let shape: ChunkShape | undefined;
    let matched = 0;
    for (const data of chunks) {
      const plain = reader.finishReason === undefined ? shape?.read(data) : undefined;
      const events = reader.read(JSON.parse(data));
      const learntHere = reader.finishReason === undefined ? ChunkShape.learn(data, JSON.parse(data), events) : undefined;
      if (plain !== undefined) {
        matched += 1;
        const expected: CanonicalEvent[] = plain.content === '' ? [] : [{ type: 'text-delta', delta: plain.content }];
        expect(events, data).toEqual(expected);
        expect(data.slice(plain.modelAt, plain.modelAt + plain.modelText.length)).toBe((JSON.parse(data) as { model: string }).model);
      }
      shape = learntHere ?? shape;
    }
    if (name.includes('text-stream')) expect(matched).toBeGreaterThan(0);
  });
});
