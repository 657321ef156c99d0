/**
 * A surface's model check returns the request the handler goes on with and never changes the one it
 * was given: Responses marks hosted tools for mapping, Anthropic Messages drops a reasoning effort
 * the model cannot honour.
 */
import { Sealer } from '../../../lib/seal.js';
import { describe, expect, it } from 'vitest';
import { GENERATIVE_SURFACES } from '../../../protocol/canonical.js';
import type { ModelEntry } from '../../../routing/catalog.js';
import { anthropicMessagesSurface } from './anthropic-messages/anthropic-messages-surface.js';
import { createResponsesSurface } from './responses/responses-surface.js';

function model(overrides: Partial<ModelEntry> = {}): ModelEntry {
  return { id: 'm', enabled: true, endpoints: new Set(GENERATIVE_SURFACES), reasoningEfforts: new Set(), maxOutputTokens: 4_096, hostedTools: 'drop', targets: [], ...overrides };
}

const unusedStore = {} as Parameters<typeof createResponsesSurface>[0]['store'];

describe('checkAgainstModel', () => {
  it('Responses: a model that maps hosted tools gets a request that says so; the decoded one is left as it was', () => {
    const surface = createResponsesSurface({ store: unusedStore, now: () => 0, sealer: Sealer.withRandomKey() });
    const decoded = surface.decode({ model: 'm', input: 'hi', tools: [{ type: 'web_search' }] }, {});
    const before = structuredClone(decoded.request);
    const checked = surface.checkAgainstModel(decoded, model({ hostedTools: 'map' }));
    expect(checked.request.mapHostedTools).toBe(true);
    expect(checked.extras).toBe(decoded.extras);
    expect(decoded.request).toEqual(before);
    expect(decoded.request.mapHostedTools).toBeUndefined();
    // Nothing to change: the same decoded value.
    expect(surface.checkAgainstModel(decoded, model())).toBe(decoded);
  });

  it('Anthropic Messages: a model without reasoning gets the request without its effort; the decoded one keeps it', () => {
    const body = { model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], thinking: { type: 'enabled', budget_tokens: 2_048 } };
    const decoded = anthropicMessagesSurface.decode(body, {});
    expect(decoded.request.reasoningEffort).toBeDefined();
    const before = structuredClone(decoded.request);
    const checked = anthropicMessagesSurface.checkAgainstModel(decoded, model());
    expect('reasoningEffort' in checked.request).toBe(false);
    expect(decoded.request).toEqual(before);
    const { reasoningEffort: _effort, ...rest } = before;
    expect(checked.request).toEqual(rest);
  });
});
