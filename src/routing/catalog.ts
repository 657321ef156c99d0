/**
 * The model catalog as the router uses it: each client-facing model id with its settings and its
 * targets bound to live provider instances. Built once from the frozen config.
 */
import type { ConfigFile } from '../config/schema.js';
import type { HostedToolPolicy, ReasoningEffort, RequestedEffort, Surface } from '../protocol/canonical.js';
import type { Provider } from '../providers/provider.js';

export interface Target {
  provider: Provider;
  /** The upstream's own name for the model. */
  upstreamModel: string;
  priority: number;
  weight: number;
  /** Stable name for health tracking and logs: `provider/model`. */
  label: string;
}

export interface ModelEntry {
  id: string;
  enabled: boolean;
  /** The `/v1` endpoints it serves (catalog `endpoints`). */
  endpoints: ReadonlySet<Surface>;
  reasoningEfforts: ReadonlySet<ReasoningEffort>;
  maxOutputTokens: number;
  /** What translated routes do with hosted tools (catalog `hosted_tools`). */
  hostedTools: HostedToolPolicy;
  targets: readonly Target[];
}

export type Catalog = ReadonlyMap<string, ModelEntry>;

/**
 * What a model makes of a requested effort: `'use'` (its catalog entry lists it, or it is OpenAI's
 * `minimal` or `none` and the model reasons), `'drop'` (`none` on a model that does not reason:
 * what it does anyway, so the request goes on without it) or `'refuse'`.
 */
export function effortFor(model: Pick<ModelEntry, 'reasoningEfforts'>, effort: RequestedEffort): 'use' | 'drop' | 'refuse' {
  if (effort === 'none') return model.reasoningEfforts.size > 0 ? 'use' : 'drop';
  if (effort === 'minimal') return model.reasoningEfforts.size > 0 ? 'use' : 'refuse';
  return model.reasoningEfforts.has(effort) ? 'use' : 'refuse';
}

/** Whether `provider` can serve `endpoint` (every provider serves the generative ones). */
export function servesEndpoint(provider: Provider, endpoint: Surface): boolean {
  if (endpoint === 'embeddings') return provider.embed !== undefined;
  if (endpoint === 'moderations') return provider.moderate !== undefined;
  if (endpoint === 'speech') return provider.speak !== undefined;
  if (endpoint === 'image-generations' || endpoint === 'image-edits') return provider.images !== undefined;
  if (endpoint === 'transcriptions' || endpoint === 'translations') return provider.transcribe !== undefined;
  return true;
}

export function buildCatalog(models: ConfigFile['models'], providers: ReadonlyMap<string, Provider>): Catalog {
  const catalog = new Map<string, ModelEntry>();
  for (const model of models) {
    const targets: Target[] = [];
    for (const target of model.targets) {
      const provider = providers.get(target.provider);
      if (provider === undefined) throw new Error(`model ${model.id}: no provider named ${target.provider}`);
      const unserved = model.endpoints.find((endpoint) => !servesEndpoint(provider, endpoint));
      if (unserved !== undefined) throw new Error(`model ${model.id}: provider ${target.provider} does not serve ${unserved}`);
      targets.push({
        provider,
        upstreamModel: target.model,
        priority: target.priority,
        weight: target.weight,
        label: `${target.provider}/${target.model}`,
      });
    }
    catalog.set(model.id, {
      id: model.id,
      enabled: model.enabled,
      endpoints: new Set(model.endpoints),
      reasoningEfforts: new Set(model.reasoning_efforts),
      maxOutputTokens: model.max_output_tokens,
      hostedTools: model.hosted_tools,
      targets,
    });
  }
  return catalog;
}
