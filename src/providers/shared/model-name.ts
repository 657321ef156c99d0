/**
 * One rule for every route and surface: an answer names the model the client asked for (the
 * catalog id), as OpenAI echoes the requested model. Pass-through answers are the upstream's bytes,
 * so only the `model` value is rewritten in them and every other byte stays the upstream's.
 */

const MODEL_KEY = '"model"';

/** JSON's whitespace between tokens: space, tab, line feed, carriage return. */
function isJsonSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13;
}

/**
 * Where each `"model": <token>` pair of `text` is, as [start of its value, end of its value]:
 * `token` is the upstream's model as JSON text. A plain scan (no pattern to compile or keep): a
 * quote inside a JSON string is escaped, so `"model"` cannot be found inside text.
 */
function modelValues(text: string, token: string, limit: number): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  let from = 0;
  while (found.length < limit) {
    const at = text.indexOf(MODEL_KEY, from);
    if (at === -1) break;
    // The key's closing quote may open the next try (as a pattern searching each position would).
    from = at + MODEL_KEY.length - 1;
    let index = at + MODEL_KEY.length;
    while (isJsonSpace(text.charCodeAt(index))) index++;
    if (text.charCodeAt(index) !== 58) continue;
    index++;
    while (isJsonSpace(text.charCodeAt(index))) index++;
    if (!text.startsWith(token, index)) continue;
    found.push([index, index + token.length]);
    from = index + token.length;
  }
  return found;
}

/** `text` with each of `spans` replaced by `value`. */
function spliced(text: string, spans: ReadonlyArray<[number, number]>, value: string): string {
  let result = '';
  let last = 0;
  for (const [start, end] of spans) {
    result += text.slice(last, start) + value;
    last = end;
  }
  return result + text.slice(last);
}

/**
 * `data` (JSON text) with each `"model": "<upstreamModel>"` pair naming `clientModel` instead, or
 * undefined when none is written that way (escapes).
 */
export function replaceModelName(data: string, upstreamModel: string, clientModel: string): string | undefined {
  const spans = modelValues(data, JSON.stringify(upstreamModel), Infinity);
  return spans.length === 0 ? undefined : spliced(data, spans, JSON.stringify(clientModel));
}

/**
 * A whole answer's JSON text naming `clientModel`: its one `"model": "<upstreamModel>"` pair
 * rewritten, every other byte the upstream's. Undefined unless exactly one pair is written that way
 * (none: escapes; more: a nested `model` of the same name), for the caller to write the answer anew.
 */
export function renameWholeAnswer(text: string, upstreamModel: string, clientModel: string): string | undefined {
  const spans = modelValues(text, JSON.stringify(upstreamModel), 2);
  return spans.length === 1 ? spliced(text, spans, JSON.stringify(clientModel)) : undefined;
}

/** The model the client asked for, from its body (the catalog id), or `fallback`. */
export function clientModelOf(body: Record<string, unknown>, fallback: string): string {
  return typeof body.model === 'string' ? body.model : fallback;
}

/** A whole answer's `model`, named as the client asked for it. */
export function withClientModel(body: Record<string, unknown>, clientModel: string): Record<string, unknown> {
  return typeof body.model === 'string' && body.model !== clientModel ? { ...body, model: clientModel } : body;
}
