/**
 * The catalog document's providers and models as tables, for the editor page: where each
 * provider's key comes from (a stored key reads "stored", never its value), each model's prices
 * and targets; for operators, per row, the changes that need no form: disable or enable a model,
 * remove a model or a provider (a second press confirms). Each is a new version.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { changeCatalog, keySource, providerAddress, removeModel, removeProvider, setModelEnabled, type Entry } from '../catalog-document';
import { ErrorNotice } from '../components/notice';
import { PriceCells, PriceHeaders } from '../components/prices';
import { ActionsHeader, TableWrap } from '../components/table-wrap';
import type { CatalogChange, CatalogDocument } from '../types';
import { useAction } from '../use-action';

type Saved = (change: CatalogChange, message: string) => void;

function name(entry: Entry, field: 'name' | 'id'): string {
  return typeof entry[field] === 'string' ? entry[field] : '';
}

/**
 * A change from a row: busy while it runs, its error beside the row, confirmed by a second press
 * when `confirm` names it. `subject` (what the row is) completes the button's name for screen readers.
 */
function RowAction({ label, subject, confirm, danger = false, run }: { label: string; subject: string; confirm?: string; danger?: boolean; run: () => Promise<void> }) {
  const [confirming, setConfirming] = useState(false);
  const { busy, error, attempt } = useAction();
  const go = (): Promise<void> =>
    attempt(async () => {
      await run();
      setConfirming(false);
    });
  return (
    <>
      {confirm !== undefined && !confirming ? (
        <button type="button" class={`button-small ${danger ? 'button-danger' : 'button-secondary'}`} onClick={() => setConfirming(true)}>
          {label}
          <span class="visually-hidden"> {subject}</span>
        </button>
      ) : (
        <button type="button" class={`button-small ${danger ? 'button-danger' : 'button-secondary'}`} disabled={busy} onClick={() => void go()}>
          {confirm ?? label}
          {confirm === undefined ? <span class="visually-hidden"> {subject}</span> : null}
        </button>
      )}
      {confirming ? (
        <button type="button" class="button-secondary button-small" onClick={() => setConfirming(false)}>
          Cancel
        </button>
      ) : null}
      <ErrorNotice error={error} />
    </>
  );
}

/** The cell of a row's actions. */
function ActionsCell({ children }: { children: ComponentChildren }) {
  return (
    <td data-label="Actions" class="actions">
      <div class="row-actions">{children}</div>
    </td>
  );
}

/** Removes the provider or model `subject` from the document, after a second press: a new version. */
function RemoveAction({ kind, subject, remove, onSaved }: { kind: 'Provider' | 'Model'; subject: string; remove: (document: CatalogDocument, subject: string) => CatalogDocument; onSaved: Saved }) {
  return (
    <RowAction
      label="Remove…"
      subject={subject}
      confirm={`Yes, remove ${subject}`}
      danger
      run={async () => {
        const change = await changeCatalog(`remove ${kind.toLowerCase()} ${subject}`, (current) => remove(current, subject));
        onSaved(change, `${kind} “${subject}” removed: version ${change.version}.`);
      }}
    />
  );
}

export function ProvidersTable({ document, editable, onSaved }: { document: CatalogDocument; editable: boolean; onSaved: Saved }) {
  return (
    <TableWrap label="Providers">
      <table>
        <thead>
          <tr>
            <th scope="col">Provider</th>
            <th scope="col">Type</th>
            <th scope="col">Address</th>
            <th scope="col">Key</th>
            {editable ? <ActionsHeader /> : null}
          </tr>
        </thead>
        <tbody>
          {document.providers.map((provider) => {
            const provided = name(provider, 'name');
            return (
              <tr key={provided}>
                <td data-label="Provider">{provided}</td>
                <td data-label="Type">{String(provider.type)}</td>
                <td data-label="Address" class="wrap breakable">
                  {providerAddress(provider)}
                </td>
                <td data-label="Key">
                  {keySource(provider)}
                </td>
                {editable ? (
                  <ActionsCell>
                    <RemoveAction kind="Provider" subject={provided} remove={removeProvider} onSaved={onSaved} />
                  </ActionsCell>
                ) : null}
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableWrap>
  );
}

function priceOf(model: Entry, field: string): string {
  const value = (model.prices as Entry | undefined)?.[field];
  return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
}

function targetsOf(model: Entry): string[] {
  const targets = Array.isArray(model.targets) ? (model.targets as Entry[]) : [];
  return targets.map((target) => `${String(target.provider)}/${String(target.model)} (${String(target.priority ?? 0)}, ${String(target.weight ?? 1)})`);
}

export function ModelsTable({ document, editable, onEdit, onSaved }: { document: CatalogDocument; editable: boolean; onEdit: (id: string) => void; onSaved: Saved }) {
  return (
    <TableWrap label="Models in the document">
      <table>
        <thead>
          <tr>
            <th scope="col">Model</th>
            <PriceHeaders />
            <th scope="col">Targets (priority, weight)</th>
            {editable ? <ActionsHeader /> : null}
          </tr>
        </thead>
        <tbody>
          {document.models.map((model) => {
            const id = name(model, 'id');
            const enabled = model.enabled !== false;
            return (
              <tr key={id}>
                <td data-label="Model">
                  {id}
                  {enabled ? null : <span class="tag">disabled</span>}
                </td>
                <PriceCells input={priceOf(model, 'input')} cached={priceOf(model, 'cached_input')} output={priceOf(model, 'output')} />
                <td data-label="Targets" class="wrap breakable">
                  <ul class="plain">
                    {targetsOf(model).map((target) => (
                      <li key={target}>{target}</li>
                    ))}
                  </ul>
                </td>
                {editable ? (
                  <ActionsCell>
                    <button type="button" class="button-small" onClick={() => onEdit(id)}>
                      Edit<span class="visually-hidden"> {id}</span>
                    </button>
                    <RowAction
                      label={enabled ? 'Disable' : 'Enable'}
                      subject={id}
                      run={async () => {
                        const change = await changeCatalog(`${enabled ? 'disable' : 'enable'} model ${id}`, (current) => setModelEnabled(current, id, !enabled));
                        onSaved(change, `Model “${id}” ${enabled ? 'disabled' : 'enabled'}: version ${change.version}.`);
                      }}
                    />
                    <RemoveAction kind="Model" subject={id} remove={removeModel} onSaved={onSaved} />
                  </ActionsCell>
                ) : null}
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableWrap>
  );
}
