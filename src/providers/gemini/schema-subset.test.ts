import { describe, expect, it } from 'vitest';
import { toGeminiParameters, toGeminiSchema } from './schema-subset.js';

describe('toGeminiParameters', () => {
  it('drops the keywords Gemini refuses and keeps the ones it knows', () => {
    const converted = toGeminiParameters({
      $schema: 'http://json-schema.org/draft-07/schema#',
      $id: 'urn:tool:search',
      $comment: 'generated',
      type: 'object',
      title: 'Search',
      description: 'Search the index',
      strict: true,
      additionalProperties: false,
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 200, pattern: '^\\S', examples: ['cats'], format: 'uri' },
        limit: { type: 'integer', minimum: 1, maximum: 50, exclusiveMaximum: 51, multipleOf: 1, default: 10, format: 'int32' },
        tags: { type: 'array', items: { type: 'string' }, minItems: 0, maxItems: 5, uniqueItems: true },
        since: { type: 'string', format: 'date-time', readOnly: true, deprecated: false },
        options: { type: 'object', properties: { exact: { type: 'boolean' } }, patternProperties: { '^x-': {} }, additionalProperties: { type: 'string' } },
      },
      required: ['query', 'ghost'],
    });
    expect(converted).toEqual({
      type: 'object',
      title: 'Search',
      description: 'Search the index',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 200, pattern: '^\\S', example: 'cats' },
        limit: { type: 'integer', minimum: 1, maximum: 50, default: 10, format: 'int32' },
        tags: { type: 'array', items: { type: 'string' }, minItems: 0, maxItems: 5 },
        since: { type: 'string', format: 'date-time' },
        options: { type: 'object', properties: { exact: { type: 'boolean' } } },
      },
      required: ['query'],
    });
  });

  it('turns nullable type arrays and anyOf-with-null into nullable', () => {
    const converted = toGeminiParameters({
      type: 'object',
      properties: {
        note: { type: ['string', 'null'], description: 'Optional note' },
        count: { anyOf: [{ type: 'integer' }, { type: 'null' }], description: 'Optional count' },
        either: { oneOf: [{ type: 'string' }, { type: 'number' }] },
      },
    });
    expect(converted?.properties).toEqual({
      note: { type: 'string', nullable: true, description: 'Optional note' },
      count: { type: 'integer', nullable: true, description: 'Optional count' },
      either: { anyOf: [{ type: 'string' }, { type: 'number' }] },
    });
  });

  it('inlines $ref into $defs and definitions, and cuts recursion', () => {
    const converted = toGeminiParameters({
      type: 'object',
      $defs: { City: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
      definitions: { Node: { type: 'object', properties: { value: { type: 'string' }, next: { $ref: '#/definitions/Node' } } } },
      properties: {
        home: { $ref: '#/$defs/City', description: 'Where the user lives' },
        list: { $ref: '#/definitions/Node' },
        elsewhere: { $ref: 'https://example.com/schema.json' },
      },
    });
    expect(converted?.properties).toEqual({
      home: { type: 'object', description: 'Where the user lives', properties: { name: { type: 'string' } }, required: ['name'] },
      list: { type: 'object', properties: { value: { type: 'string' }, next: { type: 'object' } } },
      elsewhere: { type: 'object' },
    });
    expect(JSON.stringify(converted)).not.toContain('$');
  });

  it('merges allOf members', () => {
    const converted = toGeminiParameters({
      allOf: [
        { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
        { properties: { b: { type: 'number' } }, required: ['b'] },
      ],
    });
    expect(converted).toEqual({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['a', 'b'] });
  });

  it('keeps string enums and consts; lists other enums in the description', () => {
    const converted = toGeminiParameters({
      type: 'object',
      properties: {
        unit: { type: 'string', enum: ['celsius', 'fahrenheit', null] },
        kind: { const: 'weather' },
        level: { type: 'integer', enum: [1, 2, 3], description: 'Detail level.' },
      },
    });
    expect(converted?.properties).toEqual({
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'], nullable: true },
      kind: { enum: ['weather'] },
      level: { type: 'integer', description: 'Detail level. Allowed values: 1, 2, 3.' },
    });
  });

  it('gives no parameters for a function without any', () => {
    expect(toGeminiParameters(undefined)).toBeUndefined();
    expect(toGeminiParameters({ type: 'object', properties: {}, additionalProperties: false })).toBeUndefined();
    expect(toGeminiParameters({ type: 'object' })).toBeUndefined();
  });

  it('infers the object type from properties, and gives an array without items an open one', () => {
    expect(toGeminiParameters({ properties: { list: { type: 'array' } } })).toEqual({ type: 'object', properties: { list: { type: 'array', items: {} } } });
  });

  it('survives a schema with junk in it', () => {
    expect(toGeminiSchema({ type: 42, properties: { ok: { type: 'string' }, bad: 'not a schema', worse: null }, required: 'ok' })).toEqual({
      type: 'object',
      properties: { ok: { type: 'string' } },
    });
  });

  it('bounds what hostile references expand to: a fan-out of definitions, and a long allOf chain', () => {
    const fanOut: Record<string, unknown> = { leaf: { type: 'string' } };
    for (let i = 0; i < 40; i++) {
      const next = i === 39 ? 'leaf' : `d${i + 1}`;
      fanOut[`d${i}`] = { type: 'object', properties: { x: { $ref: `#/$defs/${next}` }, y: { $ref: `#/$defs/${next}` } } };
    }
    const expanded = toGeminiParameters({ type: 'object', properties: { a: { $ref: '#/$defs/d0' } }, $defs: fanOut });
    // 2^40 nodes unbounded; the conversion stops at its node budget instead.
    expect(JSON.stringify(expanded).length).toBeLessThan(2_000_000);

    const chain: Record<string, unknown> = { end: { type: 'object', properties: { z: { type: 'string' } } } };
    for (let i = 0; i < 20_000; i++) chain[`c${i}`] = { allOf: [{ $ref: `#/$defs/${i === 19_999 ? 'end' : `c${i + 1}`}` }] };
    expect(() => toGeminiParameters({ type: 'object', properties: { a: { $ref: '#/$defs/c0' } }, $defs: chain })).not.toThrow();
  });
});
