/**
 * The shapes the console reads: those of the admin API (its OpenAPI document at
 * /admin/v1/openapi.json names them Account, LedgerEntry, AdminToken, AuditEntry) and of the
 * console's own routes (/console/api/session, /console/api/self). Money is a decimal USD string,
 * times are ISO 8601 strings in UTC.
 */

import type {
  AccountActivityView,
  AccountUsageView,
  AccountView,
  AdminTokenView,
  AuditEntryView,
  KeyBudgetView,
  KeyDetailsView,
  KeyView,
  LedgerEntryView,
  RequestLogView,
  UsageReportView,
  UsageTotalsView,
} from '../../src/admin/view-shapes.js';

import type { BudgetPeriod } from '../../src/store/store.js';

export type { AdminRole, BudgetPeriod, KeyStatus, UsageGrouping } from '../../src/store/store.js';
export type { Surface } from '../../src/protocol/canonical.js';

// The admin API's answers, as the server writes them (src/admin/view-shapes.ts).
export type Account = AccountView;
export type AccountActivity = AccountActivityView;
export type LedgerEntry = LedgerEntryView;
export type AdminToken = AdminTokenView;
export type AuditEntry = AuditEntryView;
export type Key = KeyView;
export type KeyBudget = KeyBudgetView;
export type KeyDetails = KeyDetailsView;
export type RequestLogEntry = RequestLogView;
export type UsageTotals = UsageTotalsView;
export type UsageReport = UsageReportView;
export type AccountUsage = AccountUsageView;

export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}



/** GET /admin/v1/keys/{key}: the key with its budget's current period. */
/** The settings a key is created with or changed through: absent keeps, null clears. */
export interface KeySettings {
  name?: string | null;
  models?: string[] | null;
  requests_per_window?: number | null;
  tokens_per_minute?: number | null;
  expires_at?: string | null;
  budget?: { limit_usd: string; period?: BudgetPeriod } | null;
}


export interface CatalogModel {
  id: string;
  enabled: boolean;
  prices: { input_usd: string; cached_input_usd: string; cache_write_usd: string; output_usd: string };
  reasoning_efforts: string[];
  max_output_tokens: number;
  hosted_tools: string;
  targets: Array<{ target: string; priority: number; weight: number }>;
}

export interface CatalogTarget {
  target: string;
  provider: string;
  provider_type: string;
  model: string;
  status: 'healthy' | 'cooling_down' | 'recovering';
  cooling_until: string | null;
  cause: 'failures' | 'credentials' | null;
  consecutive_failures: number;
}

/** The result of testing one target (POST …/catalog/models/{model}/targets/{index}/test). */
export interface TargetTest {
  model: string;
  index: number;
  target: string;
  status: 'ok' | 'failed';
  latency_ms: number;
  first_token_ms: number | null;
  upstream_status: number | null;
  error: { kind: string; message: string } | null;
  usage: { input_tokens: number; cached_input_tokens: number; output_tokens: number; reasoning_tokens: number } | null;
  text: string;
  tested_at: string;
}

/** One key of a provider's pool, by its name (never its secret). */
export interface UpstreamKey {
  provider: string;
  key: string;
  state: 'ok' | 'cooling' | 'refused';
  cooling_until: string | null;
  calls: number;
}

export interface Catalog {
  models: CatalogModel[];
  targets: CatalogTarget[];
  upstream_keys: UpstreamKey[];
  observed_at: string;
}

/** What a catalog version changed from the one before (src/admin/catalog-document.ts, `CatalogDiff`). */
export interface CatalogDiff {
  providers: { added: string[]; removed: string[]; changed: string[] };
  models: { added: string[]; removed: string[]; changed: string[] };
  /** Models in both versions whose prices differ. */
  prices_changed: string[];
}

/**
 * The catalog document as the admin API exports and takes it: `providers` and `models` written as
 * in the config file (README, "The catalog"), each entry kept whole, with fields the console does
 * not edit; an upstream secret entered through the API reads `"[stored]"`.
 */
export interface CatalogDocument {
  providers: Array<Record<string, unknown>>;
  models: Array<Record<string, unknown>>;
  [field: string]: unknown;
}

/** GET /admin/v1/catalog/document: the catalog served now. `version` is null in file mode. */
export interface CatalogExport {
  version: number | null;
  source: 'database' | 'file';
  document: Record<string, unknown>;
}

/** A change made (PUT …/catalog/document, POST …/catalog/versions/{id}/rollback): the new version. */
export interface CatalogChange {
  version: number;
  previous: number | null;
  diff: CatalogDiff;
}

/** One catalog version (GET …/catalog/versions); `admin_token_id` is null for the file's seed. */
export interface CatalogVersion {
  id: number;
  created_at: string;
  admin_token_id: string | null;
  note: string | null;
  diff: CatalogDiff;
}

export type Session =
  | { kind: 'admin'; expires_at: string; admin_token: AdminToken }
  | { kind: 'key'; expires_at: string; key: Key; account: Account };

export type AdminSession = Extract<Session, { kind: 'admin' }>;
export type KeySession = Extract<Session, { kind: 'key' }>;

export interface SelfView {
  account: Account;
  key: KeyDetails;
}

export interface SelfModel {
  id: string;
  prices_usd_per_million_tokens: { input: string; cached_input: string; cache_write: string; output: string };
  /** What the model bills each beyond tokens; a key is absent when it has no such price. */
  unit_prices_usd: { image_input_per_million?: string; per_image?: Record<string, string>; per_audio_second?: string; per_million_characters?: string };
  /** The paths of the `/v1` endpoints it serves. */
  endpoints: string[];
  reasoning_efforts: string[];
  max_output_tokens: number;
  /** What a request that sets no output cap holds for its output (max_output_tokens at the output price). */
  output_hold_usd: string;
}

/** One webhook delivery (the admin API's AlertDelivery, src/http/admin/alerts.ts). */
export interface AlertDelivery {
  id: number;
  event_id: string;
  type: string;
  webhook_id: string;
  destination: { format: string; origin: string } | null;
  state: 'pending' | 'delivered' | 'abandoned';
  attempts: number;
  next_attempt_at: string | null;
  created_at: string;
  finished_at: string | null;
  last_error: string | null;
  last_http_status: number | null;
  resend_of: string | null;
  event: unknown;
}

/** Nearest-rank percentiles and the maximum, milliseconds (GET /admin/v1/health/requests). */
export interface DurationFigures {
  p50: number;
  p95: number;
  max: number;
}

export type HealthGrouping = 'model' | 'target';

export interface HealthGroupTotals {
  group: string;
  requests: number;
  errors: number;
  error_rate: number;
}

/** GET /admin/v1/health/requests: per UTC hour or day and per model or target. */
export interface HealthReport {
  from: string;
  to: string;
  bucket: 'hour' | 'day';
  by: HealthGrouping;
  groups: HealthGroupTotals[];
  rows: Array<HealthGroupTotals & { bucket_start: string; first_byte_ms: DurationFigures | null; duration_ms: DurationFigures }>;
}

/** GET /admin/v1/health/rotations: a target taken out of rotation by one gateway process, and back. */
export interface TargetRotation {
  id: number;
  target: string;
  scope: 'target' | 'provider';
  provider: string;
  instance: string;
  out_at: string;
  back_at: string | null;
  out_ms: number | null;
  reason: string | null;
  cooling_until: string | null;
}
