/**
 * The catalog's versions, newest first: when, who, the note and what each changed from the one
 * before; a link to each one's document; for operators, "Roll back to this version" (a second
 * press confirms), which makes a new version equal to that one. Viewers read the list only; in
 * file mode there are no versions to list.
 */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { diffLines } from '../catalog-document';
import { VersionAuthor } from './catalog-version';
import { PageHeading } from '../components/heading';
import { ErrorNotice, Loading, SuccessNotice } from '../components/notice';
import { Pager, usePages } from '../components/pager';
import { ActionsHeader, TableWrap } from '../components/table-wrap';
import { Time } from '../components/time';
import { roleReaches, useAdminSession } from '../session';
import type { CatalogVersion } from '../types';
import { useAction } from '../use-action';
import { useLoad } from '../use-load';

const PAGE = 20;

export function CatalogVersionsPage() {
  const session = useAdminSession();
  const canRollBack = roleReaches(session.admin_token.role, 'operator');
  const pages = usePages();
  const [done, setDone] = useState<string | null>(null);
  const served = useLoad(() => api.catalogDocument(), []);
  // One more than shown: whether there is an older page.
  const versions = useLoad(() => api.catalogVersions(pages.cursor === undefined ? undefined : Number(pages.cursor), PAGE + 1), [pages.cursor]);
  const rows = versions.data?.data.slice(0, PAGE);
  const older = versions.data !== undefined && versions.data.data.length > PAGE ? String(rows?.at(-1)?.id) : null;
  const current = served.data?.version ?? null;
  const fileMode = served.data?.source === 'file';
  const rolledBack = (message: string): void => {
    setDone(message);
    pages.reset();
    versions.reload();
    served.reload();
  };
  return (
    <>
      <p class="breadcrumb">
        <a href="/console/catalog">Models</a> / <a href="/console/catalog/edit">{canRollBack ? 'Edit catalog' : 'Catalog document'}</a> /
      </p>
      <PageHeading title="Catalog versions" />
      <p class="help">
        Every change to the catalog is a version. Rolling back makes a new version equal to the one chosen: it is itself a change, served by every
        instance within a second, and can be rolled back in turn.
      </p>
      {fileMode ? (
        <p class="notice" role="note">
          <strong>Managed by the config file</strong> (<code>catalog.source: file</code>): the catalog has no versions here.
        </p>
      ) : null}
      {done === null ? null : <SuccessNotice>{done}</SuccessNotice>}
      <ErrorNotice error={versions.error ?? served.error} />
      {rows === undefined ? (
        versions.loading ? <Loading what="the versions" /> : null
      ) : rows.length === 0 ? (
        fileMode ? null : <p>No versions yet.</p>
      ) : (
        <TableWrap label="Catalog versions">
          <table>
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Made</th>
                <th scope="col">Note</th>
                <th scope="col">Changes</th>
                <ActionsHeader />
              </tr>
            </thead>
            <tbody>
              {rows.map((version) => (
                <VersionRow key={version.id} version={version} current={version.id === current} canRollBack={canRollBack && !fileMode} onRolledBack={rolledBack} />
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <Pager pages={pages} nextCursor={older} label="Catalog versions" />
    </>
  );
}

function VersionRow({ version, current, canRollBack, onRolledBack }: { version: CatalogVersion; current: boolean; canRollBack: boolean; onRolledBack: (message: string) => void }) {
  const [confirming, setConfirming] = useState(false);
  const { busy, error, attempt } = useAction();
  const lines = diffLines(version.diff);
  const rollBack = (): Promise<void> =>
    attempt(async () => {
      const change = await api.rollbackCatalog(version.id);
      setConfirming(false);
      onRolledBack(`Rolled back to version ${version.id}: version ${change.version} is served now.`);
    });
  return (
    <tr>
      <td data-label="Version">
        <span>
          <a href={`/console/catalog/versions/${version.id}`}>Version {version.id}</a>
          {current ? <span class="tag">served now</span> : null}
        </span>
      </td>
      <td data-label="Made">
        <span>
          <Time iso={version.created_at} />
          <span class="made-by">
            by <VersionAuthor version={version} />
          </span>
        </span>
      </td>
      <td data-label="Note" class="wrap">
        {version.note ?? <span class="muted">(none)</span>}
      </td>
      <td data-label="Changes" class="wrap">
        <ul class="changes">{lines.length === 0 ? <li class="muted">{version.id === 1 ? 'First version' : 'No change'}</li> : lines.map((line) => <li key={line}>{line}</li>)}</ul>
      </td>
      <td data-label="Actions" class="actions">
        {canRollBack && !current ? (
          <div class="row-actions">
            {confirming ? (
              <>
                <button type="button" class="button-danger button-small" disabled={busy} onClick={() => void rollBack()}>
                  Yes, roll back to version {version.id}
                </button>
                <button type="button" class="button-secondary button-small" onClick={() => setConfirming(false)}>
                  Cancel
                </button>
              </>
            ) : (
              <button type="button" class="button-secondary button-small" onClick={() => setConfirming(true)}>
                Roll back to this version…<span class="visually-hidden"> ({version.id})</span>
              </button>
            )}
          </div>
        ) : null}
        <ErrorNotice error={error} />
      </td>
    </tr>
  );
}
