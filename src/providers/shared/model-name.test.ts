import { describe, expect, it } from 'vitest';
import { renameWholeAnswer, replaceModelName } from './model-name.js';

describe('model names in upstream text', () => {
  it('renames every "model" pair naming the upstream model, whatever JSON whitespace is around its colon', () => {
    expect(replaceModelName('{"model":"up","x":1}', 'up', 'ours')).toBe('{"model":"ours","x":1}');
    expect(replaceModelName('{"model" :\t"up","response":{"model":\n "up"}}', 'up', 'ours')).toBe('{"model" :\t"ours","response":{"model":\n "ours"}}');
  });

  it('leaves text alone: another model, the name inside a string, an escaped name', () => {
    expect(replaceModelName('{"model":"upper"}', 'up', 'ours')).toBeUndefined();
    expect(replaceModelName('{"text":"\\"model\\": \\"up\\""}', 'up', 'ours')).toBeUndefined();
    expect(replaceModelName('{"model":"\\u0075p"}', 'up', 'ours')).toBeUndefined();
    expect(replaceModelName('{"modelx":"up"}', 'up', 'ours')).toBeUndefined();
  });

  it('writes the client model as JSON, quotes and all', () => {
    expect(replaceModelName('{"model":"up"}', 'up', 'a"b')).toBe('{"model":"a\\"b"}');
  });

  it('renames a whole answer only when exactly one pair names the upstream model', () => {
    expect(renameWholeAnswer('{"id":"1", "model": "up"}', 'up', 'ours')).toBe('{"id":"1", "model": "ours"}');
    expect(renameWholeAnswer('{"model":"up","meta":{"model":"up"}}', 'up', 'ours')).toBeUndefined();
    expect(renameWholeAnswer('{"model":"other"}', 'up', 'ours')).toBeUndefined();
  });
});
