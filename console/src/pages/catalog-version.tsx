/**
 * One catalog version: when, who, its note, what it changed from the one before, and its whole
 * document (stored keys read "[stored]"). Rolling back is done from the versions list.
 */
import { useRoute } from 'preact-iso';
import { api } from '../api';
import { diffLines } from '../catalog-document';
import { PageHeading } from '../components/heading';
import { ErrorNotice, Loading } from '../components/notice';
import { Time } from '../components/time';
import type { CatalogVersion } from '../types';
import { useLoad } from '../use-load';

/** Who made a version: an admin token's id, or the config file for the seed. */
export function VersionAuthor({ version }: { version: CatalogVersion }) {
  return version.admin_token_id === null ? <span>config file</span> : <code>{version.admin_token_id}</code>;
}

export function CatalogVersionPage() {
  const { params } = useRoute();
  const id = Number(params.id ?? '');
  const version = useLoad(() => api.catalogVersion(id), [id]);
  const data = version.data;
  const lines = data === undefined ? [] : diffLines(data.diff);
  return (
    <>
      <p class="breadcrumb">
        <a href="/console/catalog">Models</a> / <a href="/console/catalog/versions">Catalog versions</a> /
      </p>
      <PageHeading title={`Catalog version ${params.id ?? ''}`} />
      <ErrorNotice error={version.error} />
      {data === undefined ? (
        version.loading ? <Loading what="the version" /> : null
      ) : (
        <>
          <dl class="details card">
            <dt>Made</dt>
            <dd>
              <Time iso={data.created_at} />
            </dd>
            <dt>By</dt>
            <dd>
              <VersionAuthor version={data} />
            </dd>
            <dt>Note</dt>
            <dd>{data.note ?? <span class="muted">(none)</span>}</dd>
            <dt>Changes</dt>
            <dd>
              <ul class="changes">{lines.length === 0 ? <li class="muted">No change</li> : lines.map((line) => <li key={line}>{line}</li>)}</ul>
            </dd>
          </dl>
          <h2>Document</h2>
          <pre class="document" tabIndex={0} aria-label={`Document of version ${data.id}`}>
            {JSON.stringify(data.document, null, 2)}
          </pre>
        </>
      )}
    </>
  );
}
