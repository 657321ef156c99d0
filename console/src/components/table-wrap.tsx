import type { ComponentChildren } from 'preact';

/**
 * A table's frame. On a narrow screen a wide table scrolls sideways in it (by touch, or by
 * keyboard: the frame takes focus); a `stackable` one instead shows each row as a card, every cell
 * named by its `data-label` (see styles.css).
 */
export function TableWrap({ label, stackable = true, children }: { label: string; stackable?: boolean; children: ComponentChildren }) {
  return (
    <div class={stackable ? 'table-wrap stackable' : 'table-wrap'} role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

/** The header of a column of row actions: empty to the eye, named for screen readers. */
export function ActionsHeader() {
  return (
    <th scope="col">
      <span class="visually-hidden">Actions</span>
    </th>
  );
}
