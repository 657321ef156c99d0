/**
 * The console's one way to the server: same-origin fetch with the session cookie, JSON in and out.
 * Changes carry `x-tollgate-console: 1`, which the server requires of every cookie-authenticated
 * change (its CSRF defence). A 401 means the session is over: the app goes back to the login page.
 */
import type { Account, AccountActivity, AccountUsage, AdminRole, AlertDelivery, AdminToken, AuditEntry, Catalog, CatalogChange, CatalogExport, CatalogVersion, HealthGrouping, HealthReport, Key, KeyDetails, KeySettings, LedgerEntry, Page, RequestLogEntry, SelfModel, SelfView, Session, TargetRotation, TargetTest, UsageGrouping, UsageReport } from './types';

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  /** The request field at fault, when the server names one (a 400's `param`). */
  readonly param: string | null;

  constructor(status: number, message: string, code: string, param: string | null = null) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.param = param;
  }
}

let onSessionEnded: () => void = () => undefined;

/** Called when any request answers 401 (the session expired, was ended, or its credential disabled). */
export function whenSessionEnds(callback: () => void): void {
  onSessionEnded = callback;
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') headers['x-tollgate-console'] = '1';
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  const parsed = parseJson(text);
  if (!response.ok) {
    const error = (parsed as { error?: { message?: string; code?: string; param?: string | null } } | undefined)?.error;
    if (response.status === 401 && path !== '/console/api/session') onSessionEnded();
    throw new ApiError(response.status, error?.message ?? `The server answered ${response.status}.`, error?.code ?? '', error?.param ?? null);
  }
  if (parsed === undefined && text !== '') throw new ApiError(response.status, 'The server answered something other than JSON.', '');
  return parsed as T;
}

/** The answer's JSON; undefined for an empty body or one that is not JSON (a proxy's error page). */
function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export interface RequestFilter {
  from?: string;
  to?: string;
  account?: string;
  key?: string;
  model?: string;
  /** The endpoint, by its surface name. */
  surface?: string;
  status?: string;
  request_id?: string;
  /** `true`: only the errors (a status of 400 or more, or an error code). */
  errors?: string;
}

/** A listing's time range (ISO 8601): at or after `from`, before `to`. */
export interface TimeRange {
  from?: string;
  to?: string;
}

export interface UsageFilter {
  from?: string;
  to?: string;
  account?: string;
  by: UsageGrouping;
}

export function query(parameters: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

const admin = (path: string): string => `/admin/v1${path}`;
const segment = encodeURIComponent;

export const api = {
  session: () => call<Session>('GET', '/console/api/session'),
  signIn: (token: string) => call<Session>('POST', '/console/api/session', { token }),
  signOut: () => call<undefined>('DELETE', '/console/api/session'),

  accounts: (filter: { name?: string; status?: string; sort?: string; order?: string; cursor?: string; limit?: number }) => call<Page<AccountActivity>>('GET', admin(`/accounts${query(filter)}`)),
  account: (id: string) => call<Account>('GET', admin(`/accounts/${segment(id)}`)),
  createAccount: (name: string, balanceUsd: string) => call<Account>('POST', admin('/accounts'), { name, balance_usd: balanceUsd === '' ? '0' : balanceUsd }),
  renameAccount: (id: string, name: string) => call<Account>('PATCH', admin(`/accounts/${segment(id)}`), { name }),
  setAccountDisabled: (id: string, disabled: boolean) => call<Account>('POST', admin(`/accounts/${segment(id)}/${disabled ? 'disable' : 'enable'}`)),
  adjustAccount: (id: string, direction: 'credit' | 'debit', amountUsd: string, reason: string) =>
    call<Account>('POST', admin(`/accounts/${segment(id)}/${direction}`), { amount_usd: amountUsd, reason }),
  ledger: (id: string, range: TimeRange, cursor?: string) => call<Page<LedgerEntry>>('GET', admin(`/accounts/${segment(id)}/ledger${query({ ...range, cursor, limit: 50 })}`)),

  setLowBalanceThreshold: (id: string, thresholdUsd: string | null) => call<Account>('PATCH', admin(`/accounts/${segment(id)}`), { low_balance_threshold_usd: thresholdUsd }),

  keys: (filter: { account?: string; status?: string; cursor?: string }) => call<Page<Key>>('GET', admin(`/keys${query({ ...filter, limit: 100 })}`)),
  key: (id: string) => call<KeyDetails>('GET', admin(`/keys/${segment(id)}`)),
  createKey: (account: string, settings: KeySettings) => call<Key & { key: string }>('POST', admin('/keys'), { account, ...settings }),
  updateKey: (id: string, settings: KeySettings) => call<Key>('PATCH', admin(`/keys/${segment(id)}`), settings),
  setKeyDisabled: (id: string, disabled: boolean) => call<Key>('POST', admin(`/keys/${segment(id)}/${disabled ? 'disable' : 'enable'}`)),
  rotateKey: (id: string) => call<Key & { key: string }>('POST', admin(`/keys/${segment(id)}/rotate`)),
  deleteKey: (id: string) => call<Key>('DELETE', admin(`/keys/${segment(id)}`)),

  requests: (filter: RequestFilter, cursor?: string) => call<Page<RequestLogEntry>>('GET', admin(`/requests${query({ ...filter, cursor, limit: 50 })}`)),
  /** The CSV export's address: a plain link, downloaded with the session cookie. */
  requestsCsvUrl: (filter: RequestFilter) => admin(`/requests${query({ ...filter, format: 'csv' })}`),
  usage: (filter: UsageFilter) => call<UsageReport>('GET', admin(`/usage${query({ ...filter })}`)),
  usageByAccount: (filter: TimeRange & { top: number }) => call<AccountUsage>('GET', admin(`/usage/accounts${query({ ...filter })}`)),
  catalog: () => call<Catalog>('GET', admin('/catalog')),
  testTarget: (model: string, index: number) => call<TargetTest>('POST', admin(`/catalog/models/${segment(model)}/targets/${index}/test`)),
  catalogDocument: () => call<CatalogExport>('GET', admin('/catalog/document')),
  putCatalogDocument: (document: unknown, note: string) => call<CatalogChange>('PUT', admin('/catalog/document'), note === '' ? { document } : { document, note }),
  catalogVersions: (before?: number, limit = 50) => call<{ data: CatalogVersion[] }>('GET', admin(`/catalog/versions${query({ before, limit })}`)),
  catalogVersion: (id: number) => call<CatalogVersion & { document: Record<string, unknown> }>('GET', admin(`/catalog/versions/${id}`)),
  rollbackCatalog: (id: number) => call<CatalogChange>('POST', admin(`/catalog/versions/${id}/rollback`)),

  adminTokens: () => call<{ data: AdminToken[] }>('GET', admin('/admin-tokens')),
  createAdminToken: (role: AdminRole, name: string) => call<AdminToken & { token: string }>('POST', admin('/admin-tokens'), name === '' ? { role } : { role, name }),
  setAdminTokenDisabled: (id: string, disabled: boolean) => call<AdminToken>('POST', admin(`/admin-tokens/${segment(id)}/${disabled ? 'disable' : 'enable'}`)),

  audit: (filter: TimeRange & { target_type?: string; target_id?: string; cursor?: string }) => call<Page<AuditEntry>>('GET', admin(`/audit${query({ ...filter, limit: 50 })}`)),
  alertDeliveries: (filter: { state?: string; cursor?: string }) => call<Page<AlertDelivery>>('GET', admin(`/alerts/deliveries${query({ ...filter, limit: 50 })}`)),
  resendAlertDelivery: (id: number) => call<AlertDelivery>('POST', admin(`/alerts/deliveries/${id}/resend`)),
  healthReport: (filter: { from?: string; bucket: 'hour' | 'day'; by: HealthGrouping }) => call<HealthReport>('GET', admin(`/health/requests${query({ ...filter })}`)),
  rotations: (filter: { from?: string; target?: string }) => call<{ from: string; to: string; data: TargetRotation[] }>('GET', admin(`/health/rotations${query({ ...filter, limit: 200 })}`)),

  self: () => call<SelfView>('GET', '/console/api/self'),
  selfModels: () => call<{ data: SelfModel[] }>('GET', '/console/api/self/models'),
  selfUsage: (filter: Omit<UsageFilter, 'account'>) => call<UsageReport>('GET', `/console/api/self/usage${query({ ...filter })}`),
  selfRequests: (filter: Omit<RequestFilter, 'account' | 'key'>, cursor?: string) => call<Page<RequestLogEntry>>('GET', `/console/api/self/requests${query({ ...filter, cursor, limit: 50 })}`),
};
