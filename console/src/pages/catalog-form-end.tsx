import { ErrorNotice } from '../components/notice';

/**
 * The end of a form that changes the catalog: the new version's note (optional, shown in the
 * versions), the server's error, and the submit button beside Cancel.
 */
export function CatalogFormEnd({ idPrefix, note, onNote, error, busy, submit, onCancel }: { idPrefix: string; note: string; onNote: (note: string) => void; error: unknown; busy: boolean; submit: string; onCancel: () => void }) {
  return (
    <>
      <div class="field">
        <label for={`${idPrefix}-note`}>Note (optional)</label>
        <input id={`${idPrefix}-note`} maxLength={500} placeholder="Why: shown in the versions" value={note} onInput={(event) => onNote(event.currentTarget.value)} />
      </div>
      <ErrorNotice error={error} />
      <div class="form-actions">
        <button type="submit" disabled={busy}>
          {submit}
        </button>
        <button type="button" class="button-secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </>
  );
}
