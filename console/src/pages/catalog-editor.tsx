/**
 * The catalog editor (docs/architecture.md, "The catalog at runtime"): the document served now,
 * its providers and models; for operators, adding a provider (its key typed in or named by an
 * environment variable), adding or editing a model (its prices, its targets), disabling, enabling
 * and removing, and an import. Each change reads the document, changes it and puts it back with a
 * note: a new version, served by every instance within a second. Viewers read it; in file mode
 * (`catalog.source: file`) the config file manages it and nothing here changes it.
 */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { documentOf } from '../catalog-document';
import { PageHeading } from '../components/heading';
import { ErrorNotice, Loading, SuccessNotice } from '../components/notice';
import { roleReaches, useAdminSession } from '../session';
import type { CatalogChange } from '../types';
import { useLoad } from '../use-load';
import { ImportExport } from './catalog-import-export';
import { ModelForm } from './catalog-model-form';
import { ProviderForm } from './catalog-provider-form';
import { ModelsTable, ProvidersTable } from './catalog-tables';

type OpenForm = { form: 'provider' } | { form: 'model'; editing: string | null } | null;

export function CatalogEditorPage() {
  const session = useAdminSession();
  const canEdit = roleReaches(session.admin_token.role, 'operator');
  const current = useLoad(() => api.catalogDocument(), []);
  const [open, setOpen] = useState<OpenForm>(null);
  const [done, setDone] = useState<string | null>(null);
  const data = current.data;
  const editable = canEdit && data?.source === 'database';
  const saved = (_change: CatalogChange, message: string): void => {
    setOpen(null);
    setDone(message);
    current.reload();
  };
  const opening = (form: OpenForm): void => {
    setDone(null);
    setOpen(form);
  };
  return (
    <>
      <p class="breadcrumb">
        <a href="/console/catalog">Models</a> /
      </p>
      <PageHeading title={canEdit ? 'Edit catalog' : 'Catalog document'}>{data === undefined || data.version === null ? null : <span class="tag">version {data.version}</span>}</PageHeading>
      <p class="help">
        Providers and models as the config file writes them. Each change is a new version, served by every instance within a second; a request
        already running finishes at the prices it started with. <a href="/console/catalog/versions">{canEdit ? 'Versions and rollback' : 'Versions'}</a>
      </p>
      <ErrorNotice error={current.error} />
      {data === undefined ? (
        current.loading ? <Loading what="the catalog document" /> : null
      ) : (
        <>
          {data.source === 'file' ? (
            <p class="notice" role="note">
              <strong>Managed by the config file</strong> (<code>catalog.source: file</code>): change the file and restart to change the catalog. It is shown
              here as served.
            </p>
          ) : canEdit ? null : (
            <p class="notice" role="note">
              Your role reads the catalog; an operator changes it.
            </p>
          )}
          {done === null ? null : <SuccessNotice>{done}</SuccessNotice>}
          <Editor document={data.document} editable={editable} open={open} opening={opening} saved={saved} />
        </>
      )}
    </>
  );
}

function Editor({ document: raw, editable, open, opening, saved }: { document: Record<string, unknown>; editable: boolean; open: OpenForm; opening: (form: OpenForm) => void; saved: (change: CatalogChange, message: string) => void }) {
  const document = documentOf(raw);
  const close = (): void => opening(null);
  return (
    <>
      <div class="section-heading">
        <h2>Providers</h2>
        {editable && open?.form !== 'provider' ? (
          <button type="button" class="button-small" onClick={() => opening({ form: 'provider' })}>
            Add provider
          </button>
        ) : null}
      </div>
      {editable && open?.form === 'provider' ? <ProviderForm onSaved={saved} onCancel={close} /> : null}
      <ProvidersTable document={document} editable={editable} onSaved={saved} />
      <div class="section-heading">
        <h2>Models</h2>
        {editable && !(open?.form === 'model' && open.editing === null) ? (
          <button type="button" class="button-small" onClick={() => opening({ form: 'model', editing: null })}>
            Add model
          </button>
        ) : null}
      </div>
      {editable && open?.form === 'model' ? <ModelForm key={open.editing ?? ''} document={document} editing={open.editing} onSaved={saved} onCancel={close} /> : null}
      <ModelsTable document={document} editable={editable} onEdit={(id) => opening({ form: 'model', editing: id })} onSaved={saved} />
      <ImportExport document={raw} editable={editable} onSaved={saved} />
    </>
  );
}
