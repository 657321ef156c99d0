/**
 * A time range filter of the newest-first listings (ledger, audit log): UTC days, from inclusive,
 * "before" exclusive, sent to the admin API's `from` and `to` as they are (a date is UTC midnight).
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { TimeRange } from '../api';

export function RangeFilter({ id, range, onFilter, children }: { id: string; range: TimeRange; onFilter: (range: TimeRange) => void; children?: ComponentChildren }) {
  const [from, setFrom] = useState(range.from ?? '');
  const [to, setTo] = useState(range.to ?? '');
  return (
    <form
      role="search"
      aria-label={`${id} time range`}
      class="form-grid filters"
      onSubmit={(event) => {
        event.preventDefault();
        onFilter({ ...(from === '' ? {} : { from }), ...(to === '' ? {} : { to }) });
      }}
    >
      {children}
      <div class="field">
        <label for={`${id}-from`}>From (UTC day)</label>
        <input id={`${id}-from`} type="date" value={from} onInput={(event) => setFrom(event.currentTarget.value)} />
      </div>
      <div class="field">
        <label for={`${id}-to`}>Before (UTC day)</label>
        <input id={`${id}-to`} type="date" value={to} onInput={(event) => setTo(event.currentTarget.value)} />
      </div>
      <button type="submit" class="button-secondary">
        Filter
      </button>
    </form>
  );
}
