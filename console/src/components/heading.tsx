import type { ComponentChildren } from 'preact';
import { usePageTitle } from '../page-title';

/** The page's one h1 (focus lands on it after navigation) and its title in the tab. */
export function PageHeading({ title, children }: { title: string; children?: ComponentChildren }) {
  usePageTitle(title);
  return (
    <div class="page-heading">
      <h1 tabIndex={-1}>{title}</h1>
      {children}
    </div>
  );
}
