/**
 * What a Responses WebSocket remembers between turns: the last response made on it, as the input
 * that produced it and the output it gave. Over the socket a client continues with
 * `previous_response_id` and only the new items, even when nothing is stored (`store: false`, what
 * Codex sends): a turn that continues the socket's last response is spliced here into the whole
 * conversation (that response's input, its output, then the new input), which every route can
 * answer, and a pass-through forwards with the client's items as they came. When that response
 * was stored (`store: true`), the HTTP route continues it from the store instead, as it would over
 * HTTP, so that the new response names it as its `previous_response_id`. Any other
 * `previous_response_id` goes to the HTTP route as it is, which looks it up among the key's
 * account's stored responses exactly as for `POST /v1/responses` (docs/wire-protocols.md §22).
 */
import { outputItemsAsInputItems } from '../../../../../protocol/responses/input-items.js';

interface Remembered {
  id: string;
  /** Everything the response read, as Responses input items (JSON, as the client sent them). */
  input: unknown[];
  /** Its output items, as input items. */
  output: unknown[];
  /** It was stored (saved before its final event): the store can continue it. */
  stored: boolean;
}

export class SocketConversation {
  #last: Remembered | undefined;

  /**
   * The body to run: `body` with the socket's last response spliced in when it continues that
   * one, and the input it reads in full (what `remember` keeps once the response is made);
   * undefined when it continues a stored response, which the next turn continues from the store.
   */
  splice(body: Record<string, unknown>): { body: Record<string, unknown>; input: unknown[] | undefined } {
    const newInput = asItems(body.input);
    const last = this.#last;
    const previous = body.previous_response_id;
    if (previous !== undefined && previous !== null && previous !== last?.id) return { body, input: undefined };
    if (last === undefined || previous !== last.id) return { body, input: newInput };
    const input = [...last.input, ...last.output, ...newInput];
    if (last.stored) return { body, input };
    const { previous_response_id: _continued, ...rest } = body;
    return { body: { ...rest, input }, input };
  }

  /** Keeps `response` (made from `input`) as the one the next turn may continue. */
  remember(input: unknown[], response: Record<string, unknown>): void {
    const id = response.id;
    if (typeof id !== 'string' || id === '') return;
    this.#last = { id, input, output: outputItemsAsInputItems(response.output), stored: response.store === true };
  }

  /** A turn that failed: nothing to continue from. */
  forget(): void {
    this.#last = undefined;
  }
}

/** Responses `input`: a string is one user message. */
function asItems(input: unknown): unknown[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return Array.isArray(input) ? input : [];
}
