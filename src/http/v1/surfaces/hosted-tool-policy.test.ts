/**
 * The model's `hosted_tools` setting on both surfaces that carry hosted tools: `map` marks the
 * request, `refuse` answers 400 when a target translates (never when every target speaks the
 * client's wire), `drop` leaves the request as it came.
 */
import { describe, expect, it } from 'vitest';
import { GENERATIVE_SURFACES, InvalidRequestError, type Surface } from '../../../protocol/canonical.js';
import type { Provider } from '../../../providers/provider.js';
import type { ModelEntry } from '../../../routing/catalog.js';
import { anthropicMessagesSurface } from './anthropic-messages/anthropic-messages-surface.js';
import { createResponsesSurface } from './responses/responses-surface.js';
import { Sealer } from '../../../lib/seal.js';

function target(native: Surface | undefined): ModelEntry['targets'][number] {
  const provider = { name: 'p', stream: () => ({}) as never, speaksNatively: (surface: Surface) => surface === native } as Provider;
  return { provider, model: 'up', weight: 1, priority: 0 } as unknown as ModelEntry['targets'][number];
}

function model(hostedTools: ModelEntry['hostedTools'], natives: Array<Surface | undefined>): ModelEntry {
  return { id: 'm', enabled: true, endpoints: new Set(GENERATIVE_SURFACES), reasoningEfforts: new Set(), maxOutputTokens: 4_096, hostedTools, targets: natives.map(target) };
}

const messages = { model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'Weather?' }], tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 8 }] };

describe('hosted_tools on the Anthropic Messages surface', () => {
  const decoded = anthropicMessagesSurface.decode(messages, {});

  it('map: the request says so; drop: the decoded request as it was', () => {
    expect(anthropicMessagesSurface.checkAgainstModel(decoded, model('map', [undefined])).request.mapHostedTools).toBe(true);
    expect(anthropicMessagesSurface.checkAgainstModel(decoded, model('drop', [undefined]))).toBe(decoded);
  });

  it('refuse: a 400 naming the tool when a target translates, none when every target is Anthropic', () => {
    expect(() => anthropicMessagesSurface.checkAgainstModel(decoded, model('refuse', ['anthropic-messages', undefined]))).toThrow(InvalidRequestError);
    expect(() => anthropicMessagesSurface.checkAgainstModel(decoded, model('refuse', [undefined]))).toThrow(/The server tool 'web_search_20250305' is not supported/);
    expect(anthropicMessagesSurface.checkAgainstModel(decoded, model('refuse', ['anthropic-messages']))).toBe(decoded);
    // Without server tools nothing is refused.
    const plain = anthropicMessagesSurface.decode({ ...messages, tools: [] }, {});
    expect(anthropicMessagesSurface.checkAgainstModel(plain, model('refuse', [undefined]))).toBe(plain);
  });

  it('keeps dropping a reasoning effort the model cannot honour beside the policy', () => {
    const thinking = anthropicMessagesSurface.decode({ ...messages, max_tokens: 4_096, thinking: { type: 'enabled', budget_tokens: 2_048 } }, {});
    const checked = anthropicMessagesSurface.checkAgainstModel(thinking, model('map', [undefined]));
    expect(checked.request.mapHostedTools).toBe(true);
    expect('reasoningEffort' in checked.request).toBe(false);
  });
});

describe('hosted_tools on the Responses surface', () => {
  const surface = createResponsesSurface({ store: {} as Parameters<typeof createResponsesSurface>[0]['store'], now: () => 0, sealer: Sealer.withRandomKey() });
  const decoded = surface.decode({ model: 'm', input: 'hi', tools: [{ type: 'web_search' }] }, {});

  it('refuse: a 400 when a target translates, none when every target speaks Responses', () => {
    expect(() => surface.checkAgainstModel(decoded, model('refuse', [undefined]))).toThrow(/Tool type 'web_search' is not supported/);
    expect(surface.checkAgainstModel(decoded, model('refuse', ['responses']))).toBe(decoded);
  });
});
