/** An account's ledger, newest first as the admin API lists it, page by page, in a time range. */
import { useState } from 'preact/hooks';
import { api, type TimeRange } from '../api';
import { ErrorNotice, Loading } from '../components/notice';
import { Pager, usePages } from '../components/pager';
import { RangeFilter } from '../components/range-filter';
import { TableWrap } from '../components/table-wrap';
import { Time } from '../components/time';
import { Usd } from '../components/usd';
import type { LedgerEntry } from '../types';
import { useLoad } from '../use-load';

const KIND_LABELS: Readonly<Record<LedgerEntry['kind'], string>> = {
  credit: 'Credit',
  debit: 'Debit',
  charge: 'Charge',
  excess: 'Excess (not billed)',
};

/** Credits add, charges and debits subtract, an excess moves nothing (it is shown without a sign). */
function sign(kind: LedgerEntry['kind']): '+' | '−' | undefined {
  if (kind === 'credit') return '+';
  if (kind === 'charge' || kind === 'debit') return '−';
  return undefined;
}

export function LedgerSection({ accountId, version }: { accountId: string; version: number }) {
  const pages = usePages();
  const [range, setRange] = useState<TimeRange>({});
  const ledger = useLoad(() => api.ledger(accountId, range, pages.cursor), [accountId, range.from, range.to, pages.cursor, version]);
  return (
    <section aria-labelledby="ledger-heading">
      <h2 id="ledger-heading">Ledger</h2>
      <RangeFilter
        id="ledger"
        range={range}
        onFilter={(next) => {
          setRange(next);
          pages.reset();
        }}
      />
      <ErrorNotice error={ledger.error} />
      {ledger.data === undefined ? (
        ledger.loading ? <Loading what="the ledger" /> : null
      ) : ledger.data.data.length === 0 ? (
        <p>{range.from === undefined && range.to === undefined ? 'No entries yet.' : 'No entries in this range.'}</p>
      ) : (
        <TableWrap label="Ledger">
          <table>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Kind</th>
                <th scope="col" class="number">
                  Amount
                </th>
                <th scope="col">Model</th>
                <th scope="col">Note or request</th>
              </tr>
            </thead>
            <tbody>
              {ledger.data.data.map((entry) => (
                <tr key={entry.id}>
                  <td data-label="Time">
                    <Time iso={entry.created_at} />
                  </td>
                  <td data-label="Kind">{KIND_LABELS[entry.kind]}</td>
                  <td data-label="Amount" class="number">
                    <Usd value={entry.amount_usd} signed={sign(entry.kind)} />
                  </td>
                  <td data-label="Model">{entry.model ?? '—'}</td>
                  <td data-label="Note" class="wrap">
                    {entry.note ?? ''}
                    {entry.request_id === null ? null : <code class="id">{entry.request_id}</code>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <Pager pages={pages} nextCursor={ledger.data?.next_cursor} label="Ledger" />
    </section>
  );
}
