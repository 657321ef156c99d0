/**
 * Input bounds per model from its targets' providers: the type's defaults, the catalog's own
 * figures, and Vertex AI's, which are its publisher's (Claude's tokenizer, Gemini's image tiles).
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load.js';
import { DEFAULT_INPUT_BOUNDS, inputBoundsFromConfig } from './input-bounds.js';

const vertex = { type: 'vertex', project: 'my-project', location: 'us-east5', credentials_file: '/etc/tollgate/sa.json' };
const model = (id: string, provider: string) => ({ id, prices: { input: 1, output: 1 }, max_output_tokens: 1_024, targets: [{ provider, model: 'm' }] });

describe('inputBoundsFromConfig', () => {
  it("takes a Vertex provider's defaults from its publisher, and the catalog's figures over them", () => {
    const config = parseConfig(
      {
        providers: [
          { name: 'vertex-claude', ...vertex, publisher: 'anthropic' },
          { name: 'vertex-gemini', ...vertex, publisher: 'google' },
          { name: 'vertex-tuned', ...vertex, publisher: 'google', input_bound: { margin_percent: 5 } },
        ],
        models: [model('claude', 'vertex-claude'), model('gemini', 'vertex-gemini'), model('tuned', 'vertex-tuned')],
      },
      'test',
    );
    const bounds = inputBoundsFromConfig(config);
    expect(bounds.get('claude')).toEqual(DEFAULT_INPUT_BOUNDS.anthropic);
    expect(bounds.get('gemini')).toEqual(DEFAULT_INPUT_BOUNDS.gemini);
    expect(bounds.get('tuned')).toEqual({ marginPercent: 5, imageTokens: DEFAULT_INPUT_BOUNDS.gemini.imageTokens });
  });
});
