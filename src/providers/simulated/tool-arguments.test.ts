import { describe, expect, it } from 'vitest';
import { toolArgumentsFromSchema, valueFromSchema, wordsOf } from './tool-arguments.js';

const words = ['Paris', 'tomorrow', 'morning', 'please'];

function parsed(parameters: Record<string, unknown> | undefined): unknown {
  return JSON.parse(toolArgumentsFromSchema(parameters, words));
}

describe('wordsOf', () => {
  it('keeps words and drops punctuation', () => {
    expect(wordsOf('Weather in São Paulo, tomorrow?! (it’s 2025)')).toEqual(['Weather', 'in', 'São', 'Paulo', 'tomorrow', 'it', 's', '2025']);
    expect(wordsOf('  ... ')).toEqual([]);
  });
});

describe('toolArgumentsFromSchema', () => {
  it('fills every top-level property with a value of its type', () => {
    expect(
      parsed({
        type: 'object',
        properties: {
          city: { type: 'string' },
          count: { type: 'integer' },
          ratio: { type: 'number' },
          flag: { type: 'boolean' },
          unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
          mode: { const: 'fast' },
          nothing: { type: 'null' },
        },
      }),
    ).toEqual({ city: 'Paris tomorrow morning', count: 1, ratio: 1, flag: true, unit: 'celsius', mode: 'fast', nothing: null });
  });

  it('keeps nested objects minimal (required properties only) and arrays at their minimum size', () => {
    expect(
      parsed({
        type: 'object',
        properties: {
          filter: {
            type: 'object',
            properties: { name: { type: 'string' }, limit: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
            required: ['limit', 'tags'],
          },
          ids: { type: 'array', items: { type: 'integer' }, minItems: 2 },
          pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'boolean' }], minItems: 2 },
        },
      }),
    ).toEqual({ filter: { limit: 1, tags: ['Paris tomorrow morning'] }, ids: [1, 1], pair: ['please Paris tomorrow', true] });
  });

  it('respects numeric bounds, string lengths and formats', () => {
    expect(
      parsed({
        type: 'object',
        properties: {
          page: { type: 'integer', minimum: 5 },
          share: { type: 'number', maximum: 0.5 },
          above: { type: 'integer', exclusiveMinimum: 1 },
          code: { type: 'string', maxLength: 4 },
          long: { type: 'string', minLength: 40 },
          when: { type: 'string', format: 'date-time' },
          email: { type: 'string', format: 'email' },
        },
      }),
    ).toEqual({
      page: 5,
      share: 0.5,
      above: 2,
      code: 'Pari',
      long: 'please Paris tomorrowxxxxxxxxxxxxxxxxxxx',
      when: '2025-01-01T00:00:00Z',
      email: 'user@example.com',
    });
  });

  it('follows local $refs, picks the non-null branch of anyOf and merges allOf', () => {
    expect(
      parsed({
        type: 'object',
        $defs: { Unit: { type: 'string', enum: ['kelvin'] } },
        properties: {
          unit: { $ref: '#/$defs/Unit' },
          maybe: { anyOf: [{ type: 'null' }, { type: 'integer' }] },
          nullable: { type: ['null', 'boolean'] },
          merged: { allOf: [{ type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] }, { properties: { b: { type: 'boolean' } }, required: ['b'] }] },
        },
        required: ['unit'],
      }),
    ).toEqual({ unit: 'kelvin', maybe: 1, nullable: true, merged: { a: 1, b: true } });
  });

  it('terminates on recursive schemas', () => {
    const tree = {
      type: 'object',
      $defs: { Node: { type: 'object', properties: { child: { $ref: '#/$defs/Node' } }, required: ['child'] } },
      properties: { root: { $ref: '#/$defs/Node' }, loop: { anyOf: [{ $ref: '#/properties/loop' }] } },
    };
    const value = parsed(tree);
    expect(value).toHaveProperty('root.child.child');
    expect(JSON.stringify(value).length).toBeLessThan(500);
  });

  it('adds a required property that has no schema', () => {
    expect(parsed({ type: 'object', properties: {}, required: ['query'] })).toEqual({ query: 'Paris tomorrow morning' });
  });

  it('survives malformed schemas from the client', () => {
    expect(toolArgumentsFromSchema(undefined, words)).toBe('{}');
    expect(parsed({})).toEqual({});
    expect(parsed({ type: 'string' })).toEqual({ value: 'Paris tomorrow morning' });
    expect(parsed({ type: 42, properties: 'nope', required: 'x' })).toEqual({});
    expect(parsed({ type: 'object', properties: { a: null, b: 7, c: { enum: [] } } })).toEqual({
      a: 'Paris tomorrow morning',
      b: 'please Paris tomorrow',
      c: 'morning please Paris',
    });
    expect(parsed({ type: 'object', properties: { x: { $ref: 'https://example.com/schema' }, y: { $ref: '#/missing' } } })).toEqual({ x: 'Paris tomorrow morning', y: 'please Paris tomorrow' });
  });

  it('uses a fallback word when the user gave none, and is deterministic', () => {
    const schema = { type: 'object', properties: { q: { type: 'string' } } };
    expect(JSON.parse(toolArgumentsFromSchema(schema, []))).toEqual({ q: 'simulated' });
    expect(valueFromSchema(schema, words)).toEqual(valueFromSchema(schema, words));
  });

  it('stays bounded whatever the schema asks for: a billion items, or definitions that fan out', () => {
    const huge = JSON.parse(toolArgumentsFromSchema({ type: 'object', properties: { a: { type: 'array', items: { type: 'string' }, minItems: 1e9 } } }, words)) as { a: string[] };
    expect(huge.a.length).toBeGreaterThan(0);
    expect(huge.a.length).toBeLessThanOrEqual(10_000);
    const defs: Record<string, unknown> = {};
    for (let i = 0; i < 40; i++) defs[`d${i}`] = { type: 'object', properties: { x: { $ref: `#/$defs/d${i + 1}` }, y: { $ref: `#/$defs/d${i + 1}` } }, required: ['x', 'y'] };
    const fanned = toolArgumentsFromSchema({ type: 'object', properties: { a: { $ref: '#/$defs/d0' } }, $defs: defs }, words);
    expect(fanned.length).toBeLessThan(1_000_000);
  });
});
