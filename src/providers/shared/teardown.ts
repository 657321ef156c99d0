/**
 * Wraps a pass-through's frame generator so that leaving early tears the upstream request down
 * even when the consumer never pulled a frame (a generator that has not started ignores
 * `return()`'s cleanup).
 */
export function withTeardown<T>(generator: AsyncGenerator<T>, teardown: () => void): AsyncIterable<T> {
  let finished = false;
  const iterator: AsyncIterator<T> = {
    next: async () => {
      const result = await generator.next();
      if (result.done === true) finished = true;
      return result;
    },
    return: async () => {
      if (!finished) teardown();
      finished = true;
      return generator.return(undefined);
    },
  };
  return { [Symbol.asyncIterator]: () => iterator };
}
