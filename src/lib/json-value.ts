/**
 * Small guards for JSON that arrived from outside as `unknown`, for the few places where a full
 * schema would be heavier than the check (a field probed on every streamed chunk).
 */

/** A plain JSON object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `JSON.parse` that reports failure as `undefined` instead of throwing. */
export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}
