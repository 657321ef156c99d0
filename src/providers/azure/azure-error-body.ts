/**
 * What Azure OpenAI's error bodies say (docs/wire-protocols.md §17.4). They are OpenAI's envelope,
 * `{"error":{"message","type","param","code"}}`, or Azure's own `{"error":{"code","message"}}`
 * (`DeploymentNotFound`, `404 Resource not found` for a missing `api-version`, `BadRequest` for an
 * unsupported one). A prompt that Azure's content filter stopped is a 400 with `code:
 * "content_filter"` and, in `innererror.content_filter_result`, each category's verdict: the client
 * is told so under that code, with the categories that were filtered, and the log line keeps them.
 */
import { isRecord, parseJson } from '../../lib/json-value.js';
import { errorMessageOf, type ErrorBodyReader } from '../shared/error-body.js';

/** The categories the filter stopped, with their severity when it gives one: `violence (medium)`. */
function filteredCategories(error: Record<string, unknown>): string[] {
  const inner = isRecord(error.innererror) ? error.innererror : undefined;
  const result = inner !== undefined && isRecord(inner.content_filter_result) ? inner.content_filter_result : undefined;
  if (result === undefined) return [];
  return Object.entries(result).flatMap(([category, verdict]) => {
    if (!isRecord(verdict) || verdict.filtered !== true) return [];
    return [typeof verdict.severity === 'string' ? `${category} (${verdict.severity})` : category];
  });
}

export const readAzureErrorBody: ErrorBodyReader = (text) => {
  const message = errorMessageOf(text);
  const parsed = parseJson(text);
  const error = parsed.ok && isRecord(parsed.value) && isRecord(parsed.value.error) ? parsed.value.error : undefined;
  if (error === undefined || error.code !== 'content_filter') return { message, ...(error !== undefined && typeof error.code === 'string' ? { statusName: error.code } : {}) };
  const categories = filteredCategories(error);
  const which = categories.length === 0 ? '' : ` (filtered: ${categories.join(', ')})`;
  return {
    message: `${message ?? 'content filtered'}${which}`,
    statusName: 'content_filter',
    clientMessage: `The prompt was filtered by the upstream provider's content filter${which}. Modify the prompt and retry.`,
    clientCode: 'content_filter',
  };
};
