/**
 * The overview's usage: spend and traffic over time, the last 30 days by model, by endpoint and by
 * account, and the targets out of rotation. Usage by account is computed by the server
 * (`/admin/v1/usage/accounts`): the top accounts by spend with their names, every other account
 * summed in one row, so the table stays the same size at any number of accounts.
 */
import { api } from '../api';
import { ErrorNotice, Loading } from '../components/notice';
import { TableWrap } from '../components/table-wrap';
import { Time } from '../components/time';
import { Usd } from '../components/usd';
import { UsageSection } from '../components/usage-section';
import { endpointLabel, isEndpoint } from '../endpoints';
import { nanosToUsd, usdToNanos } from '../money';
import type { AccountUsage, UsageReport, UsageTotals } from '../types';
import { useLoad } from '../use-load';

const THIRTY_DAYS = 30 * 86_400_000;
/** The accounts the by-account table names; the rest are one row. */
const TOP_ACCOUNTS = 10;

export function OverviewUsage() {
  return <UsageSection id="overview-usage" title="Usage" load={(choice) => api.usage(choice)} />;
}

interface Totals {
  group: string;
  label: string;
  href?: string;
  requests: number;
  errors: number;
  tokens: number;
  costNanos: bigint;
}

async function loadBreakdown(): Promise<{ models: Totals[]; endpoints: Totals[]; accounts: Totals[] }> {
  const from = new Date(Date.now() - THIRTY_DAYS).toISOString();
  const [byModel, byEndpoint, byAccount] = await Promise.all([api.usage({ by: 'model', from }), api.usage({ by: 'endpoint', from }), api.usageByAccount({ from, top: TOP_ACCOUNTS })]);
  // The group "" holds the answers refused before a catalog model was named.
  const models = byModel.rows.map((row) => add({ group: row.group, label: row.group === '' ? 'No model (refused)' : row.group, requests: 0, errors: 0, tokens: 0, costNanos: 0n }, row));
  // "" holds the errors of requests to no endpoint (an unknown route's 404); `unknown`, the charges
  // billed before the ledger recorded endpoints.
  const endpoints = byEndpoint.rows.map((row) => {
    // An endpoint's row links to its requests in the log.
    const href = isEndpoint(row.group) ? `/console/requests?surface=${encodeURIComponent(row.group)}` : undefined;
    return add({ group: row.group, label: endpointLabel(row.group), ...(href === undefined ? {} : { href }), requests: 0, errors: 0, tokens: 0, costNanos: 0n }, row);
  });
  const bySpend = (left: Totals, right: Totals): number => (left.costNanos > right.costNanos ? -1 : left.costNanos < right.costNanos ? 1 : 0);
  return { models: models.sort(bySpend), endpoints: endpoints.sort(bySpend), accounts: accountRows(byAccount) };
}

/** The server's order (highest spend first), then the other accounts, then the refusals with no key. */
function accountRows(usage: AccountUsage): Totals[] {
  const rows = usage.top.map((row) =>
    add({ group: row.account_id, label: row.name, href: `/console/accounts/${encodeURIComponent(row.account_id)}`, requests: 0, errors: 0, tokens: 0, costNanos: 0n }, row),
  );
  if (usage.other_accounts > 0) {
    const label = `${usage.other_accounts} other account${usage.other_accounts === 1 ? '' : 's'}`;
    rows.push(add({ group: ' others', label, href: '/console/accounts', requests: 0, errors: 0, tokens: 0, costNanos: 0n }, usage.others));
  }
  if (usage.no_account.requests > 0 || usage.no_account.errors > 0) {
    rows.push(add({ group: ' no key', label: 'No key (refused)', requests: 0, errors: 0, tokens: 0, costNanos: 0n }, usage.no_account));
  }
  return rows;
}

function add(totals: Totals, row: UsageTotals | UsageReport['rows'][number]): Totals {
  return {
    ...totals,
    requests: totals.requests + row.requests,
    errors: totals.errors + row.errors,
    tokens: totals.tokens + row.input_tokens + row.output_tokens,
    costNanos: totals.costNanos + usdToNanos(row.cost_usd),
  };
}

export function OverviewBreakdown() {
  const breakdown = useLoad(loadBreakdown, []);
  return (
    <>
      <ErrorNotice error={breakdown.error} />
      {breakdown.data === undefined ? (
        breakdown.loading ? <Loading what="usage by model, endpoint and account" /> : null
      ) : (
        <div class="panels">
          <TotalsTable id="by-model" title="By model, last 30 days" column="Model" rows={breakdown.data.models} />
          <TotalsTable id="by-endpoint" title="By endpoint, last 30 days" column="Endpoint" rows={breakdown.data.endpoints} />
          <TotalsTable id="by-account" title="By account, last 30 days" column="Account" rows={breakdown.data.accounts} />
        </div>
      )}
    </>
  );
}

function TotalsTable({ id, title, column, rows }: { id: string; title: string; column: string; rows: Totals[] }) {
  return (
    <section aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>{title}</h2>
      {rows.length === 0 ? (
        <p>No usage yet.</p>
      ) : (
        <TableWrap label={`${column} totals`}>
          <table>
            <thead>
              <tr>
                <th scope="col">{column}</th>
                <th scope="col" class="number">Spend</th>
                <th scope="col" class="number">Requests</th>
                <th scope="col" class="number">Errors</th>
                <th scope="col" class="number">Tokens</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.group}>
                  <td data-label={column}>{row.href === undefined ? row.label : <a href={row.href}>{row.label}</a>}</td>
                  <td data-label="Spend" class="number">
                    <Usd value={nanosToUsd(row.costNanos)} />
                  </td>
                  <td data-label="Requests" class="number">{row.requests}</td>
                  <td data-label="Errors" class="number">{row.errors}</td>
                  <td data-label="Tokens" class="number">{row.tokens}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}

export function OutOfRotation() {
  const catalog = useLoad(() => api.catalog(), []);
  const out = catalog.data?.targets.filter((target) => target.status !== 'healthy') ?? [];
  return (
    <section aria-labelledby="out-heading">
      <h2 id="out-heading">Targets out of rotation</h2>
      <p>
        <a href="/console/health?by=target">Outages by target: history, errors and response times</a>
      </p>
      <ErrorNotice error={catalog.error} />
      {catalog.data === undefined ? (
        catalog.loading ? <Loading what="targets" /> : null
      ) : out.length === 0 ? (
        <p>
          Every target is in rotation (as this instance sees them, <Time iso={catalog.data.observed_at} />). <a href="/console/catalog">Models and targets</a>
        </p>
      ) : (
        <TableWrap label="Targets out of rotation">
          <table>
            <thead>
              <tr>
                <th scope="col">Target</th>
                <th scope="col">State</th>
                <th scope="col">Why</th>
                <th scope="col">Until</th>
              </tr>
            </thead>
            <tbody>
              {out.map((target) => (
                <tr key={target.target}>
                  <td data-label="Target">{target.target}</td>
                  <td data-label="State">{target.status === 'cooling_down' ? '◌ Cooling down' : '◐ Recovering'}</td>
                  <td data-label="Why">{target.cause === 'credentials' ? 'Its provider refused our key' : 'Failures in a row'}</td>
                  <td data-label="Until">{target.cooling_until === null ? '—' : <Time iso={target.cooling_until} />}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}
