/**
 * Waits `milliseconds`, or less if `signal` aborts first. Resolves `true` when the full time passed
 * and `false` on abort (never rejects), and leaves no timer or listener behind either way, so an
 * aborted stream stops at once instead of finishing its pause.
 */
export function abortableSleep(milliseconds: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (milliseconds <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, milliseconds);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
