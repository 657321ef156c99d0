/**
 * The shapes the console reads: those of the admin API (its OpenAPI document at
 * /admin/v1/openapi.json names them Account, LedgerEntry, AdminToken, AuditEntry) and of the
 * console's own routes (/console/api/session, /console/api/self). Money is a decimal USD string,
 * times are ISO 8601 strings in UTC.
 */

export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface Account {
  id: string;
  name: string;
  balance_usd: string;
  reserved_usd: string;
  disabled: boolean;
  created_at: string;
}

export interface LedgerEntry {
  id: number;
  kind: 'credit' | 'charge' | 'excess' | 'debit';
  amount_usd: string;
  request_id: string | null;
  key_id: string | null;
  model: string | null;
  note: string | null;
  created_at: string;
}

export type AdminRole = 'owner' | 'operator' | 'viewer';

export interface AdminToken {
  id: string;
  name: string | null;
  role: AdminRole;
  prefix: string;
  disabled: boolean;
  created_at: string;
}

export interface AuditEntry {
  id: number;
  at: string;
  admin_token_id: string | null;
  action: string;
  target_type: string;
  target_id: string;
  before: unknown;
  after: unknown;
}

export interface Key {
  id: string;
  account_id: string;
  name: string | null;
  prefix: string;
  models: string[] | null;
  requests_per_window: number | null;
  tokens_per_minute: number | null;
  expires_at: string | null;
  disabled: boolean;
  status: 'active' | 'disabled' | 'expired';
  created_at: string;
}

export type Session =
  | { kind: 'admin'; expires_at: string; admin_token: AdminToken }
  | { kind: 'key'; expires_at: string; key: Key; account: Account };

export type AdminSession = Extract<Session, { kind: 'admin' }>;
export type KeySession = Extract<Session, { kind: 'key' }>;

export interface SelfView {
  account: Account;
  key: Key;
}

export interface SelfModel {
  id: string;
  prices_usd_per_million_tokens: { input: string; cached_input: string; cache_write: string; output: string };
  reasoning_efforts: string[];
  max_output_tokens: number;
}
