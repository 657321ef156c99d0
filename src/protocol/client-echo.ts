/**
 * How much of a client's own text an error may repeat. OpenAI's messages quote what was sent (an
 * unknown parameter's name, a value outside an enum), and so do ours, but a client controls that
 * text's length: a 2 MB key would come back twice (in `message` and in `param`), 4 MB of error for
 * a 2 MB request. Every place that puts client text in an error (the /v1 codecs, the admin API and
 * the console) clips it with {@link clipEcho}; docs/contract.md ("Where the contract is silent")
 * states the bound.
 */

/** The most UTF-16 code units of one client string an error repeats. */
export const MAX_ECHO_LENGTH = 256;

/** Marks a clipped string: `first 256 characters…`. */
export const CLIPPED_MARK = '…';

/**
 * `text` as an error may repeat it: whole up to {@link MAX_ECHO_LENGTH}, else its first
 * MAX_ECHO_LENGTH code units (one fewer when the cut would split a surrogate pair) and "…".
 */
export function clipEcho(text: string): string {
  if (text.length <= MAX_ECHO_LENGTH) return text;
  const last = text.charCodeAt(MAX_ECHO_LENGTH - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? MAX_ECHO_LENGTH - 1 : MAX_ECHO_LENGTH;
  return `${text.slice(0, end)}${CLIPPED_MARK}`;
}

/** `parent.key`, the `param` of a client-named member (a metadata key, a logit_bias token), clipped. */
export function memberPath(parent: string, key: string): string {
  return `${parent}.${clipEcho(key)}`;
}
