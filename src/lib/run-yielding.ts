/**
 * Drives a generator that pauses (yields) between slices of CPU-bound work, letting the event loop
 * serve other requests at every pause, and returns its result.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

export async function runYielding<T>(work: Generator<void, T>): Promise<T> {
  for (;;) {
    const step = work.next();
    if (step.done === true) return step.value;
    await nextTurn();
  }
}
