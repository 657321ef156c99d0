/**
 * Long texts counted a slice at a time, so that whoever counts them can pause in between and let
 * other requests run (the input bound, input-bound.ts, and the exact input count, tokens.ts).
 */

/**
 * Text counted between two yields, at which the driver may pause (lib/run-yielding.ts). Small,
 * because the tokenizer can be slow: on random words it takes a few microseconds a character even
 * warm, and 32K characters took 100–140 ms in one go under CI load, holding /healthz past its
 * 100 ms. The driver pauses by time, so small slices cost no extra turns of the loop.
 */
export const YIELD_CHARACTERS = 1024;

/**
 * `text` in slices of about YIELD_CHARACTERS, each cut just before a space where there is one, so
 * that no word is split (tokens begin with their leading space).
 */
export function* slicesOf(text: string): Generator<string> {
  let start = 0;
  while (text.length - start > YIELD_CHARACTERS) {
    const space = text.lastIndexOf(' ', start + YIELD_CHARACTERS);
    const end = space > start ? space : start + YIELD_CHARACTERS;
    yield text.slice(start, end);
    start = end;
  }
  yield start === 0 ? text : text.slice(start);
}
