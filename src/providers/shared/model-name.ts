/**
 * One rule for every route and surface: an answer names the model the client asked for (the
 * catalog id), as OpenAI echoes the requested model. Pass-through answers are the upstream's bytes,
 * so only the `model` value is rewritten in them and every other byte stays the upstream's.
 */

/** Patterns by upstream model name: compiled once per name, not once per frame (a handful of names). */
const MODEL_PATTERNS = new Map<string, RegExp>();

function modelPattern(upstreamModel: string): RegExp {
  let pattern = MODEL_PATTERNS.get(upstreamModel);
  if (pattern === undefined) {
    if (MODEL_PATTERNS.size >= 256) MODEL_PATTERNS.clear();
    const token = JSON.stringify(upstreamModel).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    pattern = new RegExp(`("model"\\s*:\\s*)${token}`, 'g');
    MODEL_PATTERNS.set(upstreamModel, pattern);
  }
  return pattern;
}

/**
 * `data` (JSON text) with each `"model": "<upstreamModel>"` pair naming `clientModel` instead, or
 * undefined when none is written that way (escapes). A quote inside a JSON string is escaped, so the
 * pattern cannot match text.
 */
export function replaceModelName(data: string, upstreamModel: string, clientModel: string): string | undefined {
  const replaced = data.replace(modelPattern(upstreamModel), (_match, key: string) => `${key}${JSON.stringify(clientModel)}`);
  return replaced === data ? undefined : replaced;
}

/** The model the client asked for, from its body (the catalog id), or `fallback`. */
export function clientModelOf(body: Record<string, unknown>, fallback: string): string {
  return typeof body.model === 'string' ? body.model : fallback;
}

/** A whole answer's `model`, named as the client asked for it. */
export function withClientModel(body: Record<string, unknown>, clientModel: string): Record<string, unknown> {
  return typeof body.model === 'string' && body.model !== clientModel ? { ...body, model: clientModel } : body;
}
