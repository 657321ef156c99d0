import { useCallback, useState } from 'preact/hooks';

export interface Action {
  /** True while an attempt runs (its button is disabled). */
  busy: boolean;
  /** What the last attempt failed with, or a check's own message; null when none. */
  error: unknown;
  setError(error: unknown): void;
  /** Runs `work` with `busy` set and the last error cleared; what it throws becomes `error`. */
  attempt(work: () => Promise<void>): Promise<void>;
}

/** The one way a page sends a change: busy while it runs, its failure shown, never thrown. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const attempt = useCallback(async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, setError, attempt };
}
