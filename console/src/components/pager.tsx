/**
 * Keyset pages (the admin API's `next_cursor`): the cursors of the pages seen so far are kept, so
 * Previous goes back without the API needing a backward cursor.
 */
import { useState } from 'preact/hooks';

export interface Pages {
  cursor: string | undefined;
  number: number;
  next(cursor: string): void;
  previous(): void;
  reset(): void;
}

export function usePages(): Pages {
  const [stack, setStack] = useState<Array<string | undefined>>([undefined]);
  return {
    cursor: stack.at(-1),
    number: stack.length,
    next: (cursor) => setStack([...stack, cursor]),
    previous: () => setStack(stack.length > 1 ? stack.slice(0, -1) : stack),
    reset: () => setStack([undefined]),
  };
}

export function Pager({ pages, nextCursor, label }: { pages: Pages; nextCursor: string | null | undefined; label: string }) {
  if (pages.number === 1 && (nextCursor === null || nextCursor === undefined)) return null;
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" class="button-secondary" disabled={pages.number === 1} onClick={() => pages.previous()}>
        ← Previous
      </button>
      <span>Page {pages.number}</span>
      <button type="button" class="button-secondary" disabled={nextCursor === null || nextCursor === undefined} onClick={() => nextCursor && pages.next(nextCursor)}>
        Next →
      </button>
    </nav>
  );
}
