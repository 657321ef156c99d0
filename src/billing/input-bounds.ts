/**
 * How far each model's holds must reach beyond the gateway's own count of a request's input: the
 * largest margin and image allowance of any provider the model may be routed to (the target is
 * chosen after the hold is placed). Upstreams with another tokenizer count the same text as more
 * tokens (docs/architecture.md, Money); images cost what their provider's documented formula gives
 * for the largest image it accepts.
 */
import type { ConfigFile, ProviderConfig } from '../config/schema.js';

export interface InputBound {
  /** Percent added to the gateway's count of the input. */
  marginPercent: number;
  /** Tokens held for one image. */
  imageTokens: number;
}

/**
 * Defaults per provider type. OpenAI: o200k is its tokenizer; the margin covers chat framing, and
 * an image is at most 1,536 patches × 1.62 (gpt-4.1-mini), above the 1,445 of a 2048×768 tiled
 * image. Anthropic: its tokenizer counts ~20–35% more than o200k on English and code, plus the
 * tool-use system prompt; an image is at most ~1.15 megapixels / 750 ≈ 1,600 tokens. Gemini:
 * 258 tokens per 768-px tile, 16 tiles for a 3072-px image. Azure: OpenAI's models, OpenAI's
 * figures. Simulated: bills our own estimate. Vertex AI serves Gemini or Claude: the figures of its
 * publisher's own provider type (`defaultsOf`).
 */
export const DEFAULT_INPUT_BOUNDS: Readonly<Record<Exclude<ProviderConfig['type'], 'vertex'>, InputBound>> = Object.freeze({
  simulated: { marginPercent: 0, imageTokens: 765 },
  openai: { marginPercent: 10, imageTokens: 2_500 },
  anthropic: { marginPercent: 40, imageTokens: 1_600 },
  gemini: { marginPercent: 25, imageTokens: 4_128 },
  // Azure OpenAI serves OpenAI's models: OpenAI's tokenizer and image formula.
  azure: { marginPercent: 10, imageTokens: 2_500 },
  // Bedrock serves every family; Claude's tokenizer (the largest count among them) and image formula.
  bedrock: { marginPercent: 40, imageTokens: 1_600 },
});

function defaultsOf(provider: ProviderConfig): InputBound {
  if (provider.type === 'vertex') return DEFAULT_INPUT_BOUNDS[provider.publisher === 'anthropic' ? 'anthropic' : 'gemini'];
  return DEFAULT_INPUT_BOUNDS[provider.type];
}

function boundOf(provider: ProviderConfig): InputBound {
  const defaults = defaultsOf(provider);
  return {
    marginPercent: provider.input_bound?.margin_percent ?? defaults.marginPercent,
    imageTokens: provider.input_bound?.image_tokens ?? defaults.imageTokens,
  };
}

/** Input bounds by catalog model id. */
export function inputBoundsFromConfig(config: Pick<ConfigFile, 'providers' | 'models'>): ReadonlyMap<string, InputBound> {
  const providers = new Map(config.providers.map((provider) => [provider.name, boundOf(provider)]));
  const bounds = new Map<string, InputBound>();
  for (const model of config.models) {
    let marginPercent = 0;
    let imageTokens = 0;
    for (const target of model.targets) {
      const bound = providers.get(target.provider);
      if (bound === undefined) continue;
      marginPercent = Math.max(marginPercent, bound.marginPercent);
      imageTokens = Math.max(imageTokens, bound.imageTokens);
    }
    bounds.set(model.id, Object.freeze({ marginPercent, imageTokens }));
  }
  return bounds;
}

/** `tokens` with `marginPercent` added, rounded up (integers only). */
export function withMargin(tokens: number, marginPercent: number): number {
  return Math.ceil((tokens * (100 + marginPercent)) / 100);
}
