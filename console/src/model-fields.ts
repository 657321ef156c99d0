/**
 * The model form's fields as text, and the catalog entry they stand for. Prices stay the strings
 * typed (USD per 1M tokens, as the schema takes them: no arithmetic on them here); whole numbers
 * become numbers when they are one, and otherwise go as typed for the server to refuse by field.
 * Fields the form does not show (endpoints, reasoning efforts, other prices) are kept as they were.
 */
import type { Entry } from './catalog-document';

export interface TargetFields {
  provider: string;
  model: string;
  priority: string;
  weight: string;
}

export interface ModelFields {
  id: string;
  input: string;
  cachedInput: string;
  output: string;
  /** Empty: the schema's default. */
  maxOutputTokens: string;
  targets: TargetFields[];
}

export function emptyTarget(provider: string): TargetFields {
  return { provider, model: '', priority: '0', weight: '1' };
}

function text(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
}

/** The fields of an entry of the document (or of a new model, whose one target names `provider`). */
export function modelFields(entry: Entry | undefined, provider: string): ModelFields {
  if (entry === undefined) return { id: '', input: '', cachedInput: '', output: '', maxOutputTokens: '', targets: [emptyTarget(provider)] };
  const prices = (entry.prices ?? {}) as Entry;
  const targets = Array.isArray(entry.targets) ? (entry.targets as Entry[]) : [];
  return {
    id: text(entry.id),
    input: text(prices.input),
    cachedInput: text(prices.cached_input),
    output: text(prices.output),
    maxOutputTokens: text(entry.max_output_tokens),
    targets: targets.map((target) => ({ provider: text(target.provider), model: text(target.model), priority: text(target.priority ?? 0), weight: text(target.weight ?? 1) })),
  };
}

/** A price as typed; the value it had when the text is still what the form showed for it. */
function price(typed: string, before: unknown): unknown {
  const trimmed = typed.trim();
  return before !== undefined && text(before) === trimmed ? before : trimmed;
}

function whole(typed: string): number | string {
  const trimmed = typed.trim();
  return /^\d{1,15}$/.test(trimmed) ? Number(trimmed) : trimmed;
}

/**
 * The entry for `fields`: the fields of `before` (the model edited) it does not set are kept, in
 * their places, so that a save that changes nothing changes nothing in the document either.
 */
export function modelEntry(fields: ModelFields, before: Entry | undefined): Entry {
  const prices: Entry = { ...((before?.prices ?? {}) as Entry) };
  prices.input = price(fields.input, prices.input);
  if (fields.cachedInput.trim() === '') delete prices.cached_input;
  else prices.cached_input = price(fields.cachedInput, prices.cached_input);
  prices.output = price(fields.output, prices.output);
  const entry: Entry = { ...before, id: fields.id.trim(), prices };
  if (fields.maxOutputTokens.trim() === '') delete entry.max_output_tokens;
  else entry.max_output_tokens = whole(fields.maxOutputTokens);
  entry.targets = fields.targets.map((target) => ({ provider: target.provider, model: target.model.trim(), priority: whole(target.priority), weight: whole(target.weight) }));
  return entry;
}
