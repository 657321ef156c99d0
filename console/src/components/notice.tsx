import type { ComponentChildren } from 'preact';

/** An error, announced to screen readers, and marked in words, not only in colour. */
export function ErrorNotice({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <p class="notice notice-error" role="alert">
      <strong>Error:</strong> {message}
    </p>
  );
}

export function SuccessNotice({ children }: { children: ComponentChildren }) {
  return (
    <p class="notice notice-success" role="status">
      <strong>Done:</strong> {children}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" role="status">
      Loading {what}…
    </p>
  );
}
