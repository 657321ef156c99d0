/**
 * The key form's fields as text, and the admin API's key settings they stand for. Checks only what
 * a person can fix on the spot (a number, an amount); the API decides the rest and says why.
 */
import { isPositiveUsdAmount } from './money';
import type { BudgetPeriod, Key, KeySettings } from './types';

export interface KeyFormFields {
  name: string;
  /** Model ids, separated by commas or spaces; empty: every model. */
  models: string;
  requestsPerWindow: string;
  tokensPerMinute: string;
  /** yyyy-mm-dd (the end of that UTC day is not implied: the key expires at its start), or empty. */
  expires: string;
  budgetUsd: string;
  budgetPeriod: BudgetPeriod;
}

export function emptyKeyFields(): KeyFormFields {
  return { name: '', models: '', requestsPerWindow: '', tokensPerMinute: '', expires: '', budgetUsd: '', budgetPeriod: 'month' };
}

export function keyFields(key: Key): KeyFormFields {
  return {
    name: key.name ?? '',
    models: (key.models ?? []).join(', '),
    requestsPerWindow: key.requests_per_window === null ? '' : String(key.requests_per_window),
    tokensPerMinute: key.tokens_per_minute === null ? '' : String(key.tokens_per_minute),
    expires: key.expires_at === null ? '' : key.expires_at.slice(0, 10),
    budgetUsd: key.budget?.limit_usd ?? '',
    budgetPeriod: key.budget?.period ?? 'month',
  };
}

function whole(text: string, label: string): number | null {
  const trimmed = text.trim();
  if (trimmed === '') return null;
  if (!/^\d{1,10}$/.test(trimmed) || Number(trimmed) < 1 || Number(trimmed) > 2_147_483_647) throw new Error(`${label}: a whole number from 1, or empty for the default.`);
  return Number(trimmed);
}

/** The settings of `fields`, every one named (empty clears), so the same call creates and updates. */
export function keySettings(fields: KeyFormFields): KeySettings {
  const models = fields.models.split(/[\s,]+/).filter((model) => model !== '');
  const budget = fields.budgetUsd.trim();
  if (budget !== '' && !isPositiveUsdAmount(budget)) throw new Error('Budget: an amount in dollars above zero, with at most 9 decimals.');
  return {
    name: fields.name.trim() === '' ? null : fields.name.trim(),
    models: models.length === 0 ? null : models,
    requests_per_window: whole(fields.requestsPerWindow, 'Requests per window'),
    tokens_per_minute: whole(fields.tokensPerMinute, 'Tokens per minute'),
    expires_at: fields.expires === '' ? null : fields.expires,
    budget: budget === '' ? null : { limit_usd: budget, period: fields.budgetPeriod },
  };
}
