/**
 * Drives a generator that yields between small slices of CPU-bound work, pausing (letting the event
 * loop serve other requests) once a slice ends PAUSE_AFTER_MS or more after the last pause, and
 * returns its result. Pausing by time rather than at every yield keeps each turn of the loop short
 * however slow a slice is (a cold tokenizer is ~20× slower than a warm one), without paying a turn
 * of the loop for every fast slice of a huge text.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

export const PAUSE_AFTER_MS = 5;

export async function runYielding<T>(work: Generator<void, T>): Promise<T> {
  let lastPause = performance.now();
  for (;;) {
    const step = work.next();
    if (step.done === true) return step.value;
    if (performance.now() - lastPause >= PAUSE_AFTER_MS) {
      await nextTurn();
      lastPause = performance.now();
    }
  }
}
