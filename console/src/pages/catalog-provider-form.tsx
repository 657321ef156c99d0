/**
 * Adding a provider to the catalog: its name, type, address and upstream key, either typed in (the
 * server stores it sealed and never shows it again) or the name of an environment variable that
 * holds it. Only the common fields: the server's schema judges the rest and names what is wrong.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { addProvider, changeCatalog, faultIn, type Entry } from '../catalog-document';
import type { CatalogChange } from '../types';
import { useAction } from '../use-action';
import { CatalogFormEnd } from './catalog-form-end';

const TYPES = ['openai', 'anthropic', 'gemini', 'azure'] as const;
type ProviderType = (typeof TYPES)[number];

const ADDRESS_HINT: Readonly<Record<ProviderType, string>> = {
  openai: 'With the version segment, e.g. https://api.openai.com/v1',
  anthropic: 'With the version segment, e.g. https://api.anthropic.com/v1',
  gemini: 'With the version segment, e.g. https://generativelanguage.googleapis.com/v1beta',
  azure: "The resource's address, e.g. https://my-resource.openai.azure.com",
};

interface ProviderFields {
  name: string;
  type: ProviderType;
  address: string;
  urlForm: 'deployments' | 'v1';
  apiVersion: string;
  keySource: 'typed' | 'env';
  apiKey: string;
  envName: string;
  note: string;
}

const EMPTY: ProviderFields = { name: '', type: 'openai', address: '', urlForm: 'v1', apiVersion: '', keySource: 'typed', apiKey: '', envName: '', note: '' };

/** The provider entry as the config file writes it; an empty field is left out for the schema to name. */
function providerEntry(fields: ProviderFields): Entry {
  const entry: Entry = { name: fields.name.trim(), type: fields.type };
  const address = fields.address.trim();
  if (address !== '') entry[fields.type === 'azure' ? 'endpoint' : 'base_url'] = address;
  if (fields.type === 'azure') {
    entry.url_form = fields.urlForm;
    if (fields.apiVersion.trim() !== '') entry.api_version = fields.apiVersion.trim();
  }
  if (fields.keySource === 'typed') entry.api_key = fields.apiKey;
  else entry.api_key_env = fields.envName.trim();
  return entry;
}

export function ProviderForm({ onSaved, onCancel }: { onSaved: (change: CatalogChange, message: string) => void; onCancel: () => void }) {
  const [fields, setFields] = useState<ProviderFields>(EMPTY);
  const { busy, error, attempt } = useAction();
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  const set = (patch: Partial<ProviderFields>): void => setFields({ ...fields, ...patch });
  async function submit(event: Event): Promise<void> {
    event.preventDefault();
    await attempt(async () => {
      const entry = providerEntry(fields);
      const note = fields.note.trim() === '' ? `add provider ${String(entry.name)}` : fields.note.trim();
      const change = await changeCatalog(note, (document) => addProvider(document, entry));
      const stored = fields.keySource === 'typed' ? ' Its key is stored sealed and is not shown again.' : '';
      setFields(EMPTY);
      onSaved(change, `Provider “${String(entry.name)}” added: version ${change.version}.${stored}`);
    });
  }
  // The field the server's refusal names is marked (its message is under the form).
  const fault = faultIn(error);
  const invalid = (...fields: string[]): true | undefined => (fault !== null && fields.includes(fault) ? true : undefined);
  return (
    <section class="card card-highlight" aria-labelledby="provider-form-heading">
      <h2 id="provider-form-heading">Add a provider</h2>
      <form class="stack" onSubmit={(event) => void submit(event)}>
        <div class="form-grid">
          <div class="field">
            <label for="provider-name">Name</label>
            <input id="provider-name" aria-invalid={invalid('name')} ref={first} required value={fields.name} onInput={(event) => set({ name: event.currentTarget.value })} />
          </div>
          <div class="field">
            <label for="provider-type">Type</label>
            <select id="provider-type" value={fields.type} onChange={(event) => set({ type: event.currentTarget.value as ProviderType })}>
              {TYPES.map((type) => (
                <option key={type} value={type}>
                  {type}
                </option>
              ))}
            </select>
          </div>
        </div>
        <div class="field">
          <label for="provider-address">{fields.type === 'azure' ? 'Endpoint' : 'Base URL'}</label>
          <input id="provider-address" aria-invalid={invalid('base_url', 'endpoint')} type="url" inputMode="url" aria-describedby="provider-address-help" value={fields.address} onInput={(event) => set({ address: event.currentTarget.value })} />
          <p class="help" id="provider-address-help">
            {ADDRESS_HINT[fields.type]}
          </p>
        </div>
        {fields.type === 'azure' ? (
          <div class="form-grid">
            <div class="field">
              <label for="provider-url-form">URL form</label>
              <select id="provider-url-form" value={fields.urlForm} onChange={(event) => set({ urlForm: event.currentTarget.value as 'deployments' | 'v1' })}>
                <option value="v1">v1 (model in the body)</option>
                <option value="deployments">deployments (model in the address)</option>
              </select>
            </div>
            <div class="field">
              <label for="provider-api-version">API version{fields.urlForm === 'v1' ? ' (optional)' : ''}</label>
              <input id="provider-api-version" aria-invalid={invalid('api_version')} placeholder="2024-10-21" value={fields.apiVersion} onInput={(event) => set({ apiVersion: event.currentTarget.value })} />
            </div>
          </div>
        ) : null}
        <fieldset class="choice">
          <legend>Upstream key</legend>
          <label>
            <input type="radio" name="provider-key-source" checked={fields.keySource === 'typed'} onChange={() => set({ keySource: 'typed' })} />
            Type it in (stored sealed, never shown again)
          </label>
          <label>
            <input type="radio" name="provider-key-source" checked={fields.keySource === 'env'} onChange={() => set({ keySource: 'env' })} />
            Name an environment variable
          </label>
        </fieldset>
        {fields.keySource === 'typed' ? (
          <div class="field">
            <label for="provider-api-key">API key</label>
            <input id="provider-api-key" aria-invalid={invalid('api_key')} type="password" autoComplete="new-password" spellcheck={false} value={fields.apiKey} onInput={(event) => set({ apiKey: event.currentTarget.value })} />
          </div>
        ) : (
          <div class="field">
            <label for="provider-key-env">Environment variable</label>
            <input id="provider-key-env" aria-invalid={invalid('api_key_env')} spellcheck={false} placeholder="OPENAI_API_KEY" value={fields.envName} onInput={(event) => set({ envName: event.currentTarget.value })} />
            <p class="help">Set on every instance; the gateway reads it when this version is served.</p>
          </div>
        )}
        <CatalogFormEnd idPrefix="provider" note={fields.note} onNote={(note) => set({ note })} error={error} busy={busy} submit="Add provider" onCancel={onCancel} />
      </form>
    </section>
  );
}
