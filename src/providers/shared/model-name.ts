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

/**
 * A whole answer's JSON text naming `clientModel`: its one `"model": "<upstreamModel>"` pair
 * rewritten, every other byte the upstream's. Undefined unless exactly one pair is written that way
 * (none: escapes; more: a nested `model` of the same name), for the caller to write the answer anew.
 */
export function renameWholeAnswer(text: string, upstreamModel: string, clientModel: string): string | undefined {
  const pattern = modelPattern(upstreamModel);
  pattern.lastIndex = 0;
  const pair = pattern.exec(text);
  if (pair === null) return undefined;
  const end = pattern.lastIndex;
  // A failed search leaves `lastIndex` at 0; a second pair leaves it to be reset.
  if (pattern.exec(text) !== null) {
    pattern.lastIndex = 0;
    return undefined;
  }
  return `${text.slice(0, pair.index)}${pair[1]}${JSON.stringify(clientModel)}${text.slice(end)}`;
}

/** The model the client asked for, from its body (the catalog id), or `fallback`. */
export function clientModelOf(body: Record<string, unknown>, fallback: string): string {
  return typeof body.model === 'string' ? body.model : fallback;
}

/** A whole answer's `model`, named as the client asked for it. */
export function withClientModel(body: Record<string, unknown>, clientModel: string): Record<string, unknown> {
  return typeof body.model === 'string' && body.model !== clientModel ? { ...body, model: clientModel } : body;
}
