import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig } from './load.js';

describe('config', () => {
  it('the demo catalog serves the spec model ids', () => {
    const config = loadConfig(undefined);
    const ids = config.models.map((model) => model.id);
    expect(ids).toEqual(expect.arrayContaining(['model-5.6', 'model-5.6-sol', 'model-5.6-terra', 'model-5.6-luna', 'model-5.6-mini']));
    expect(Object.isFrozen(config.models[0])).toBe(true);
  });

  it('names the bad field', () => {
    const bad = {
      providers: [{ name: 'sim', type: 'simulated' }],
      models: [{ id: 'm', prices: { input: 'cheap', output: 1 }, targets: [{ provider: 'sim', model: 'x' }] }],
    };
    expect(() => parseConfig(bad)).toThrow(/models\[0\]\.prices\.input/);
  });

  it('rejects unknown keys and dangling provider references', () => {
    expect(() => parseConfig({ providers: [{ name: 'sim', type: 'simulated', colour: 'red' }], models: [] })).toThrow(ConfigError);
    const dangling = {
      providers: [{ name: 'sim', type: 'simulated' }],
      models: [{ id: 'm', prices: { input: 1, output: 1 }, targets: [{ provider: 'nope', model: 'x' }] }],
    };
    expect(() => parseConfig(dangling)).toThrow(/models\[0\]\.targets\[0\]\.provider: no provider named "nope"/);
  });
});
