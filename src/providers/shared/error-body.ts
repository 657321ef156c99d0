/**
 * Reading the body of a non-2xx upstream answer. Each provider says what its error body means
 * (`ErrorBodyReader`); the shared HTTP client turns that and the status into an `UpstreamError`.
 */
import { isRecord, parseJson } from '../../lib/json-value.js';

/** What a provider reads from an error body. All fields are raw upstream text, not yet redacted. */
export interface UpstreamErrorBody {
  /** The upstream's own explanation, when the body has one. */
  message: string | undefined;
  /** A symbolic status shown after the HTTP status in logs, e.g. Gemini's `INVALID_ARGUMENT`. */
  statusName?: string | undefined;
  /**
   * The body says the gateway's own key or project was refused, whatever the HTTP status (Gemini
   * answers an invalid key with a 400). 401 and 403 always mean that; this covers the rest.
   */
  refusesCredentials?: boolean;
  /**
   * What a refusal of the request itself (a 4xx) tells the client instead of `message`, and the
   * `code` it carries: an upstream's named refusal that clients act on, as Azure's content filter
   * (docs/wire-protocols.md §17.4). Raw text, redacted by the client like `message`.
   */
  clientMessage?: string;
  clientCode?: string;
}

/** Reads a provider's error body; `text` may be anything, including empty or HTML. */
export type ErrorBodyReader = (text: string) => UpstreamErrorBody;

/**
 * The `error.message` of an OpenAI-style error body (`{"error":{"message",…}}`, or `{"error":"…"}`
 * from some compatible servers), when the text is one. Anthropic's body
 * (`{"type":"error","error":{"type","message"}}`) has the same path.
 * https://platform.openai.com/docs/guides/error-codes, https://docs.anthropic.com/en/api/errors
 */
export function errorMessageOf(text: string): string | undefined {
  const parsed = parseJson(text);
  if (!parsed.ok || !isRecord(parsed.value)) return undefined;
  const error = parsed.value.error;
  if (isRecord(error) && typeof error.message === 'string') return error.message;
  if (typeof error === 'string') return error;
  return undefined;
}

/** The reader for OpenAI-style error bodies: the message only. */
export const readMessageErrorBody: ErrorBodyReader = (text) => ({ message: errorMessageOf(text) });

/**
 * The code an in-band failure object names, as the canonical error event's `upstreamCode`: OpenAI's
 * `error.code` (or `type` without one), Anthropic's `error.type`; nothing when it names none.
 */
export function upstreamCodeOf(error: unknown): { upstreamCode?: string } {
  if (!isRecord(error)) return {};
  const code = typeof error.code === 'string' && error.code !== '' ? error.code : typeof error.type === 'string' && error.type !== '' && error.type !== 'error' ? error.type : undefined;
  return code === undefined ? {} : { upstreamCode: code };
}
