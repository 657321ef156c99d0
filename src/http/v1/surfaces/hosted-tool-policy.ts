/**
 * The model's `hosted_tools` setting, applied by the surfaces whose requests carry hosted tools
 * (Responses' hosted tools, Anthropic's server tools; docs/wire-protocols.md §3.4):
 * `map` lets translated routes use their own web search (the request returned says so); `refuse`
 * answers 400 naming the first hosted tool when any target of the model would translate the request
 * (an upstream of the client's own wire runs them all, so a model served only that way never
 * refuses); `drop` leaves them to each route, which names what it left out.
 */
import type { CanonicalRequest, HostedTool, Surface } from '../../../protocol/canonical.js';
import type { ModelEntry } from '../../../routing/catalog.js';

export function withHostedToolPolicy(request: CanonicalRequest, model: ModelEntry, surface: Surface, refusal: (tool: HostedTool) => Error): CanonicalRequest {
  const hosted = request.hostedTools ?? [];
  const first = hosted[0];
  if (first === undefined) return request;
  const translates = model.targets.some((target) => target.provider.speaksNatively?.(surface) !== true);
  if (model.hostedTools === 'refuse' && translates) throw refusal(first);
  return model.hostedTools === 'map' ? { ...request, mapHostedTools: true } : request;
}
