/** The fields of a key's settings, shared by the create form and the key page's update form. */
import type { KeyFormFields } from '../key-settings';
import type { BudgetPeriod } from '../types';

export function KeyFields({ fields, onChange, idPrefix }: { fields: KeyFormFields; onChange: (fields: KeyFormFields) => void; idPrefix: string }) {
  const set = (patch: Partial<KeyFormFields>): void => onChange({ ...fields, ...patch });
  const id = (name: string): string => `${idPrefix}-${name}`;
  return (
    <>
      <div class="field">
        <label for={id('name')}>Key name</label>
        <input id={id('name')} maxLength={200} value={fields.name} onInput={(event) => set({ name: event.currentTarget.value })} />
      </div>
      <div class="field">
        <label for={id('models')}>Models (empty: every model)</label>
        <input id={id('models')} value={fields.models} placeholder="model-a, model-b" onInput={(event) => set({ models: event.currentTarget.value })} />
      </div>
      <div class="field">
        <label for={id('rpm')}>Requests per window</label>
        <input id={id('rpm')} inputMode="numeric" placeholder="default" value={fields.requestsPerWindow} onInput={(event) => set({ requestsPerWindow: event.currentTarget.value })} />
      </div>
      <div class="field">
        <label for={id('tpm')}>Tokens per minute</label>
        <input id={id('tpm')} inputMode="numeric" placeholder="default" value={fields.tokensPerMinute} onInput={(event) => set({ tokensPerMinute: event.currentTarget.value })} />
      </div>
      <div class="field">
        <label for={id('expires')}>Expires on (UTC, empty: never)</label>
        <input id={id('expires')} type="date" value={fields.expires} onInput={(event) => set({ expires: event.currentTarget.value })} />
      </div>
      <div class="field">
        <label for={id('budget')}>Budget (USD, empty: none)</label>
        <input id={id('budget')} inputMode="decimal" value={fields.budgetUsd} onInput={(event) => set({ budgetUsd: event.currentTarget.value })} />
      </div>
      <div class="field">
        <label for={id('period')}>Budget period</label>
        <select id={id('period')} value={fields.budgetPeriod} onChange={(event) => set({ budgetPeriod: event.currentTarget.value as BudgetPeriod })}>
          <option value="total">Total (never resets)</option>
          <option value="day">Day (UTC)</option>
          <option value="week">Week (from Monday, UTC)</option>
          <option value="month">Month (UTC)</option>
        </select>
      </div>
    </>
  );
}
