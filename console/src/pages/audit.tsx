/** The audit log (owner only in the console), newest first: every admin change, who made it, before and after, by target and time range. */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, query, type TimeRange } from '../api';
import { PageHeading } from '../components/heading';
import { ErrorNotice, Loading } from '../components/notice';
import { Pager, usePages } from '../components/pager';
import { RangeFilter } from '../components/range-filter';
import { TableWrap } from '../components/table-wrap';
import { Time } from '../components/time';
import type { AuditEntry } from '../types';
import { useLoad } from '../use-load';

export function AuditPage() {
  const location = useLocation();
  const targetType = location.query.target_type ?? '';
  const targetId = location.query.target_id ?? '';
  const range: TimeRange = { ...(location.query.from ? { from: location.query.from } : {}), ...(location.query.to ? { to: location.query.to } : {}) };
  const signature = [targetType, targetId, range.from ?? '', range.to ?? ''].join('\u0000');
  return (
    <>
      <PageHeading title="Audit log" />
      <AuditFilter
        key={signature}
        targetType={targetType}
        targetId={targetId}
        range={range}
        onFilter={(type, id, next) => {
          location.route(`/console/audit${query({ target_type: type || undefined, target_id: id || undefined, from: next.from, to: next.to })}`);
        }}
      />
      <AuditList key={signature} targetType={targetType} targetId={targetId} range={range} />
    </>
  );
}

function AuditFilter({ targetType, targetId, range, onFilter }: { targetType: string; targetId: string; range: TimeRange; onFilter: (type: string, id: string, range: TimeRange) => void }) {
  const [type, setType] = useState(targetType);
  const [id, setId] = useState(targetId);
  return (
    <RangeFilter id="audit" range={range} onFilter={(next) => onFilter(type, id.trim(), next)}>
      <div class="field">
        <label for="audit-type">Target</label>
        <select id="audit-type" value={type} onChange={(event) => setType(event.currentTarget.value)}>
          <option value="">Any</option>
          <option value="account">Accounts</option>
          <option value="admin_token">Admin tokens</option>
          <option value="catalog">Catalog versions</option>
          <option value="key">Keys</option>
        </select>
      </div>
      <div class="field">
        <label for="audit-id">Target id</label>
        <input id="audit-id" value={id} onInput={(event) => setId(event.currentTarget.value)} />
      </div>
    </RangeFilter>
  );
}

function AuditList({ targetType, targetId, range }: { targetType: string; targetId: string; range: TimeRange }) {
  const pages = usePages();
  const audit = useLoad(
    () => api.audit({ target_type: targetType === '' ? undefined : targetType, target_id: targetId === '' ? undefined : targetId, ...range, cursor: pages.cursor }),
    [targetType, targetId, range.from, range.to, pages.cursor],
  );
  return (
    <section aria-label="Audit entries">
      <ErrorNotice error={audit.error} />
      {audit.data === undefined ? (
        audit.loading ? <Loading what="the audit log" /> : null
      ) : audit.data.data.length === 0 ? (
        <p>No changes recorded{targetType !== '' || targetId !== '' || range.from !== undefined || range.to !== undefined ? ' for this filter' : ''}.</p>
      ) : (
        <TableWrap label="Audit log">
          <table>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">By</th>
                <th scope="col">Changes</th>
              </tr>
            </thead>
            <tbody>
              {audit.data.data.map((entry) => (
                <AuditRow key={entry.id} entry={entry} />
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <Pager pages={pages} nextCursor={audit.data?.next_cursor} label="Audit log" />
    </section>
  );
}

interface Change {
  field: string;
  /** Absent for a field the change added (a creation, the reason of a credit). */
  before?: string;
  after: string;
}

function shown(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Shown elsewhere in the row (the target) or of no interest at a glance. */
const UNLISTED = new Set(['id', 'created_at']);

/**
 * The fields whose value differs between the before and after images (for a creation, the fields
 * it set), for reading at a glance; the whole images are one click away.
 */
function changesOf(entry: AuditEntry): Change[] {
  const before = typeof entry.before === 'object' && entry.before !== null ? (entry.before as Record<string, unknown>) : {};
  const after = typeof entry.after === 'object' && entry.after !== null ? (entry.after as Record<string, unknown>) : {};
  const changes: Change[] = [];
  for (const [field, value] of Object.entries(after)) {
    if (UNLISTED.has(field)) continue;
    if (!(field in before)) {
      changes.push({ field, after: shown(value) });
    } else if (JSON.stringify(before[field]) !== JSON.stringify(value)) {
      changes.push({ field, before: shown(before[field]), after: shown(value) });
    }
  }
  return changes;
}

function AuditRow({ entry }: { entry: AuditEntry }) {
  return (
    <tr>
      <td data-label="Time">
        <Time iso={entry.at} />
      </td>
      <td data-label="Action">
        <code>{entry.action}</code>
      </td>
      <td data-label="Target">
        {entry.target_type === 'account' ? (
          <a href={`/console/accounts/${encodeURIComponent(entry.target_id)}`}>{entry.target_id}</a>
        ) : entry.target_type === 'catalog' ? (
          <a href={`/console/catalog/versions/${encodeURIComponent(entry.target_id)}`}>Catalog version {entry.target_id}</a>
        ) : (
          <code>{entry.target_id}</code>
        )}
      </td>
      <td data-label="By">{entry.admin_token_id === null ? 'CLI' : <code>{entry.admin_token_id}</code>}</td>
      <td data-label="Changes" class="wrap">
        <ul class="changes">
          {changesOf(entry).map((change) => (
            <li key={change.field}>
              <code>{change.field}</code>: {change.before === undefined ? '' : `${change.before} → `}
              {change.after}
            </li>
          ))}
        </ul>
        <details>
          <summary>Before and after</summary>
          <div class="diff">
            <div>
              <h3>Before</h3>
              <pre>{JSON.stringify(entry.before, null, 2)}</pre>
            </div>
            <div>
              <h3>After</h3>
              <pre>{JSON.stringify(entry.after, null, 2)}</pre>
            </div>
          </div>
        </details>
      </td>
    </tr>
  );
}
