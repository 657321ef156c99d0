import { useEffect } from 'preact/hooks';

/** Names the page in the tab and for screen readers, and moves focus to its heading after navigation. */
export function usePageTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Tollgate console`;
    const heading = document.querySelector<HTMLElement>('main h1');
    if (heading !== null && document.activeElement !== null && document.activeElement.closest('main') === null) heading.focus({ preventScroll: true });
  }, [title]);
}
