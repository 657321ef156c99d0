/**
 * Adding a model to the catalog or editing one: its id, prices in US dollars per million tokens
 * (typed as the config file writes them), its output cap and its targets (a provider of the
 * catalog, the upstream's model name, priority and weight). Editing a model's prices is how a
 * price changes: the next request is billed at the new one, on every instance within a second.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { changeCatalog, faultIn, findModel, providerNames, saveModel } from '../catalog-document';
import { emptyTarget, modelEntry, modelFields, type ModelFields, type TargetFields } from '../model-fields';
import type { CatalogChange, CatalogDocument } from '../types';
import { useAction } from '../use-action';
import { CatalogFormEnd } from './catalog-form-end';

interface Props {
  document: CatalogDocument;
  /** The id of the model edited; null for a new one. */
  editing: string | null;
  onSaved: (change: CatalogChange, message: string) => void;
  onCancel: () => void;
}

export function ModelForm({ document, editing, onSaved, onCancel }: Props) {
  const providers = providerNames(document);
  const [fields, setFields] = useState<ModelFields>(() => modelFields(editing === null ? undefined : findModel(document, editing), providers[0] ?? ''));
  const [note, setNote] = useState('');
  const { busy, error, attempt } = useAction();
  // Focus lands in the form when it opens: the id of a new model, the input price of one edited.
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  const set = (patch: Partial<ModelFields>): void => setFields({ ...fields, ...patch });
  const setTarget = (index: number, patch: Partial<TargetFields>): void => set({ targets: fields.targets.map((target, at) => (at === index ? { ...target, ...patch } : target)) });
  async function submit(event: Event): Promise<void> {
    event.preventDefault();
    await attempt(async () => {
      const id = fields.id.trim();
      const why = note.trim() !== '' ? note.trim() : editing === null ? `add model ${id}` : `edit model ${id}`;
      const change = await changeCatalog(why, (current) => saveModel(current, modelEntry(fields, editing === null ? undefined : findModel(current, editing)), editing));
      onSaved(change, `Model “${id}” ${editing === null ? 'added' : 'saved'}: version ${change.version}.`);
    });
  }
  // The field the server's refusal names is marked (its message is under the form).
  const fault = faultIn(error);
  const invalid = (field: string): true | undefined => (fault === field ? true : undefined);
  const title = editing === null ? 'Add a model' : `Edit model ${editing}`;
  return (
    <section class="card card-highlight" aria-labelledby="model-form-heading">
      <h2 id="model-form-heading">{title}</h2>
      <form class="stack" onSubmit={(event) => void submit(event)}>
        <div class="field">
          <label for="model-id">Model id</label>
          <input id="model-id" aria-invalid={invalid('id')} ref={editing === null ? first : undefined} required spellcheck={false} value={fields.id} onInput={(event) => set({ id: event.currentTarget.value })} />
        </div>
        <fieldset class="fields">
          <legend>Prices (USD per 1M tokens)</legend>
          <div class="form-grid">
            <div class="field">
              <label for="model-input">Input</label>
              <input id="model-input" aria-invalid={invalid('prices.input')} ref={editing === null ? undefined : first} inputMode="decimal" value={fields.input} onInput={(event) => set({ input: event.currentTarget.value })} />
            </div>
            <div class="field">
              <label for="model-cached-input">Cached input (optional)</label>
              <input id="model-cached-input" aria-invalid={invalid('prices.cached_input')} inputMode="decimal" placeholder="the input price" value={fields.cachedInput} onInput={(event) => set({ cachedInput: event.currentTarget.value })} />
            </div>
            <div class="field">
              <label for="model-output">Output</label>
              <input id="model-output" aria-invalid={invalid('prices.output')} inputMode="decimal" value={fields.output} onInput={(event) => set({ output: event.currentTarget.value })} />
            </div>
          </div>
        </fieldset>
        <div class="field">
          <label for="model-max-output">Max output tokens (optional)</label>
          <input id="model-max-output" aria-invalid={invalid('max_output_tokens')} inputMode="numeric" placeholder="4096" value={fields.maxOutputTokens} onInput={(event) => set({ maxOutputTokens: event.currentTarget.value })} />
          <p class="help">What a request that sets no cap may produce, and what its hold covers.</p>
        </div>
        {fields.targets.map((target, index) => (
          <TargetFieldset key={index} index={index} target={target} providers={providers} invalid={invalid} onChange={(patch) => setTarget(index, patch)} onRemove={fields.targets.length > 1 ? () => set({ targets: fields.targets.filter((_, at) => at !== index) }) : undefined} />
        ))}
        <div>
          <button type="button" class="button-secondary button-small" onClick={() => set({ targets: [...fields.targets, emptyTarget(providers[0] ?? '')] })}>
            Add a target
          </button>
        </div>
        <CatalogFormEnd idPrefix="model" note={note} onNote={setNote} error={error} busy={busy} submit={editing === null ? 'Add model' : 'Save model'} onCancel={onCancel} />
      </form>
    </section>
  );
}

/** One target: lower priority is tried first; among equals, traffic is shared by weight. */
interface TargetProps {
  index: number;
  target: TargetFields;
  providers: string[];
  invalid: (field: string) => true | undefined;
  onChange: (patch: Partial<TargetFields>) => void;
  onRemove: (() => void) | undefined;
}

function TargetFieldset({ index, target, providers, invalid, onChange, onRemove }: TargetProps) {
  const id = (name: string): string => `model-target-${index}-${name}`;
  const at = (name: string): true | undefined => invalid(`targets[${index}].${name}`);
  return (
    <fieldset class="fields">
      <legend>Target {index + 1}</legend>
      <div class="form-grid">
        <div class="field">
          <label for={id('provider')}>Provider</label>
          <select id={id('provider')} aria-invalid={at('provider')} value={target.provider} onChange={(event) => onChange({ provider: event.currentTarget.value })}>
            {providers.includes(target.provider) ? null : <option value={target.provider}>{target.provider === '' ? '(choose)' : target.provider}</option>}
            {providers.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for={id('model')}>Upstream model</label>
          <input id={id('model')} aria-invalid={at('model')} spellcheck={false} value={target.model} onInput={(event) => onChange({ model: event.currentTarget.value })} />
        </div>
        <div class="field">
          <label for={id('priority')}>Priority</label>
          <input id={id('priority')} aria-invalid={at('priority')} inputMode="numeric" value={target.priority} onInput={(event) => onChange({ priority: event.currentTarget.value })} />
        </div>
        <div class="field">
          <label for={id('weight')}>Weight</label>
          <input id={id('weight')} aria-invalid={at('weight')} inputMode="numeric" value={target.weight} onInput={(event) => onChange({ weight: event.currentTarget.value })} />
        </div>
      </div>
      {onRemove === undefined ? null : (
        <button type="button" class="button-secondary button-small" onClick={onRemove}>
          Remove target {index + 1}
        </button>
      )}
    </fieldset>
  );
}
