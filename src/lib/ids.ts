/**
 * The ids the request path makes on every request (request, hold, response and message ids, and
 * the items of a Responses answer): a random part drawn from the system's CSPRNG once per process,
 * then a counter. Drawing random bytes per id cost a few microseconds each, several times a
 * request; a counter costs a string concatenation.
 *
 * Unique across processes and restarts (workers, several instances on one database): each process
 * draws its own random part, at least 64 bits, so two processes share one with a probability of
 * about n²/2⁶⁵ for n process starts. Within a process the counter never repeats: when its 32 bits
 * run out the random part is drawn again. The ids keep the shapes clients and tests know: 24
 * lowercase hex digits after the prefix (what 12 random bytes in hex gave), 48 for Responses items
 * (like OpenAI's).
 *
 * Ids are not secrets: consecutive ids of one process differ only in the counter. Whatever is
 * looked up by an id is looked up with its owner too (a stored response by id and account,
 * store/queries/response-queries.ts), so knowing another account's id reads nothing.
 */
import { randomBytes } from 'node:crypto';

/** Ids per random draw: the counter is 8 hex digits. */
const COUNTER_LIMIT = 0x1_0000_0000;
/** Random hex digits of a short id (64 bits) and of a long one (160 bits). */
const SHORT_RANDOM_DIGITS = 16;
const LONG_RANDOM_DIGITS = 40;

export class IdSource {
  readonly #draw: () => string;
  #short = '';
  #long = '';
  #counter = 0;

  /**
   * `draw` returns at least LONG_RANDOM_DIGITS random lowercase hex digits; `firstCounter` is for
   * tests (the counter running out).
   */
  constructor(draw: () => string = () => randomBytes(LONG_RANDOM_DIGITS / 2).toString('hex'), firstCounter = 0) {
    this.#draw = draw;
    this.#redraw();
    this.#counter = firstCounter;
  }

  /** 24 lowercase hex digits: 16 random (per process), 8 of the counter. */
  short(): string {
    const counter = this.#next();
    return this.#short + counter;
  }

  /** 48 lowercase hex digits: 40 random (per process), 8 of the counter. */
  long(): string {
    const counter = this.#next();
    return this.#long + counter;
  }

  #redraw(): void {
    const random = this.#draw();
    if (!/^[0-9a-f]+$/.test(random) || random.length < LONG_RANDOM_DIGITS) throw new RangeError(`expected ${LONG_RANDOM_DIGITS} random hex digits`);
    this.#short = random.slice(0, SHORT_RANDOM_DIGITS);
    this.#long = random.slice(0, LONG_RANDOM_DIGITS);
    this.#counter = 0;
  }

  #next(): string {
    if (this.#counter >= COUNTER_LIMIT) this.#redraw();
    const counter = this.#counter;
    this.#counter = counter + 1;
    // COUNTER_LIMIT + counter has nine hex digits; the first is the 1 dropped.
    return (COUNTER_LIMIT + counter).toString(16).slice(1);
  }
}

const ids = new IdSource();

/** 24 lowercase hex digits, unique across processes: the tail of `req_`, `hold_`, `resp_`, `chatcmpl-`, `msg_` ids. */
export function idSuffix(): string {
  return ids.short();
}

/** 48 lowercase hex digits, unique across processes: the tail of Responses item ids (`msg_`, `fc_`, `rs_`, …). */
export function longIdSuffix(): string {
  return ids.long();
}

/** A Responses item id of OpenAI's shape: `msg_` (or `fc_`, `rs_`, …) + 48 hex digits. */
export function newItemId(prefix: string): string {
  return `${prefix}_${ids.long()}`;
}
