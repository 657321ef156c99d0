/**
 * The one place that knows every provider type: it builds a live provider for each configured one.
 * Nobody else switches on provider types.
 */
import type { ProviderConfig } from '../config/schema.js';
import { createAnthropicProvider } from './anthropic/anthropic-provider.js';
import { createAzureProvider } from './azure/azure-provider.js';
import { createBedrockProvider } from './bedrock/bedrock-provider.js';
import { createGeminiProvider } from './gemini/gemini-provider.js';
import { createOpenAIProvider } from './openai/openai-provider.js';
import type { Provider } from './provider.js';
import { createSimulatedProvider } from './simulated/simulated-provider.js';
import { createVertexProvider } from './vertex/vertex-provider.js';

export function createProviders(configs: readonly ProviderConfig[], env: Readonly<Record<string, string | undefined>>): Map<string, Provider> {
  const providers = new Map<string, Provider>();
  for (const config of configs) {
    switch (config.type) {
      case 'simulated':
        providers.set(config.name, createSimulatedProvider(config));
        break;
      case 'openai':
        providers.set(config.name, createOpenAIProvider(config, env));
        break;
      case 'anthropic':
        providers.set(config.name, createAnthropicProvider(config, env));
        break;
      case 'gemini':
        providers.set(config.name, createGeminiProvider(config, env));
        break;
      case 'azure':
        providers.set(config.name, createAzureProvider(config, env));
        break;
      case 'vertex':
        providers.set(config.name, createVertexProvider(config, env));
        break;
      case 'bedrock':
        providers.set(config.name, createBedrockProvider(config, env));
        break;
    }
  }
  return providers;
}

export async function closeProviders(providers: ReadonlyMap<string, Provider>): Promise<void> {
  await Promise.all([...providers.values()].map((provider) => provider.close?.()));
}
