/**
 * The whole catalog document as JSON: the export to read or copy (stored keys read "[stored]"),
 * and for operators an import, pasted and put as a new version. An import may be a bare document
 * (`providers`, `models`) or an export as the API answers it (`document` inside); a provider that
 * keeps "[stored]" keeps its stored key.
 */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { CopyButton } from '../components/copy-button';
import { ErrorNotice } from '../components/notice';
import type { CatalogChange } from '../types';
import { useAction } from '../use-action';

function importedDocument(text: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('The import is not JSON: paste a document, or an export as the console shows it.');
  }
  return typeof parsed === 'object' && parsed !== null && 'document' in parsed ? (parsed as { document: unknown }).document : parsed;
}

export function ImportExport({ document, editable, onSaved }: { document: Record<string, unknown>; editable: boolean; onSaved: (change: CatalogChange, message: string) => void }) {
  const text = JSON.stringify(document, null, 2);
  const [pasted, setPasted] = useState('');
  const [note, setNote] = useState('');
  const { busy, error, attempt } = useAction();
  async function submit(event: Event): Promise<void> {
    event.preventDefault();
    await attempt(async () => {
      const change = await api.putCatalogDocument(importedDocument(pasted), note.trim() === '' ? 'import' : note.trim());
      setPasted('');
      setNote('');
      onSaved(change, `Document imported: version ${change.version}.`);
    });
  }
  return (
    <section aria-labelledby="document-heading">
      <h2 id="document-heading">{editable ? 'Import and export' : 'Export'}</h2>
      <div class="panels">
        <div class="card">
          <h3>Export</h3>
          <p class="help">The document served now, as the admin API takes it back. Stored keys read “[stored]”.</p>
          <textarea id="catalog-export" class="document" aria-label="Catalog document (export)" readOnly rows={12} spellcheck={false} value={text} />
          <CopyButton text={text} label="the catalog document" />
        </div>
        {editable ? (
          <div class="card">
            <h3>Import</h3>
            <p class="help">Paste a whole document (or an export): it replaces the catalog as a new version. Keep “[stored]” where a stored key should stay.</p>
            <form class="stack" onSubmit={(event) => void submit(event)}>
              <div class="field">
                <label for="catalog-import">Document (JSON)</label>
                <textarea id="catalog-import" class="document" rows={8} spellcheck={false} required value={pasted} onInput={(event) => setPasted(event.currentTarget.value)} />
              </div>
              <div class="field">
                <label for="catalog-import-note">Import note (optional)</label>
                <input id="catalog-import-note" maxLength={500} value={note} onInput={(event) => setNote(event.currentTarget.value)} />
              </div>
              <ErrorNotice error={error} />
              <div class="form-actions">
                <button type="submit" disabled={busy}>
                  Import as a new version
                </button>
              </div>
            </form>
          </div>
        ) : null}
      </div>
    </section>
  );
}
