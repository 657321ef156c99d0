/**
 * The catalog for operators (/admin/v1/catalog): every model with its prices per million tokens,
 * reasoning efforts and targets, and every target's live health as the answering instance sees it;
 * then each pooled upstream key's state, by its name. Operators can test each target ("Say OK"
 * through it alone, billed to nobody) and read the result beside it. The catalog's editor
 * (catalog-editor.tsx) and its versions (catalog-versions.tsx) are a link away.
 */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { PageHeading } from '../components/heading';
import { ErrorNotice, Loading } from '../components/notice';
import { PriceCells, PriceHeaders } from '../components/prices';
import { TableWrap } from '../components/table-wrap';
import { Time } from '../components/time';
import { roleReaches, useAdminSession } from '../session';
import type { CatalogTarget, TargetTest, UpstreamKey } from '../types';
import { useAction } from '../use-action';
import { useLoad } from '../use-load';

function Health({ target }: { target: CatalogTarget | undefined }) {
  if (target === undefined) return <span>unknown</span>;
  if (target.status === 'healthy') return <span class="status status-active"><span aria-hidden="true">●</span> Healthy</span>;
  if (target.status === 'recovering') return <span class="status status-expired"><span aria-hidden="true">◐</span> Recovering</span>;
  return (
    <span class="status status-disabled">
      <span aria-hidden="true">◌</span> Cooling down{target.cooling_until === null ? '' : ' until '}
      {target.cooling_until === null ? null : <Time iso={target.cooling_until} />} ({target.cause === 'credentials' ? 'provider refused our key' : 'failures in a row'})
    </span>
  );
}

function TestResult({ result }: { result: TargetTest }) {
  const usage = result.usage;
  return (
    <div class={`target-test ${result.status === 'ok' ? 'target-test-ok' : 'target-test-failed'}`} role="status">
      <strong>{result.status === 'ok' ? '✓ OK' : '✕ Failed'}</strong> in {result.latency_ms.toLocaleString('en-US')} ms
      {result.first_token_ms === null ? '' : `, first token ${result.first_token_ms.toLocaleString('en-US')} ms`}
      {result.upstream_status === null ? ', no HTTP answer' : `, HTTP ${result.upstream_status}`}
      {usage === null ? '' : `, ${usage.input_tokens} in / ${usage.output_tokens} out tokens`}
      {result.error === null ? null : (
        <span class="target-test-error">
          {' '}
          {result.error.kind}: {result.error.message}
        </span>
      )}
    </div>
  );
}

/** One target of a model: its health, and for operators a Test button with the last result. */
function TargetRow({ model, index, target, health, canTest }: { model: string; index: number; target: { target: string; priority: number; weight: number }; health: CatalogTarget | undefined; canTest: boolean }) {
  const action = useAction();
  const [result, setResult] = useState<TargetTest | null>(null);
  const test = () =>
    action.attempt(async () => {
      setResult(null);
      setResult(await api.testTarget(model, index));
    });
  return (
    <li>
      {target.target} ({target.priority}, {target.weight}): <Health target={health} />
      {canTest ? (
        <>
          {' '}
          <button type="button" class="button-small" onClick={() => void test()} disabled={action.busy} aria-label={`Test ${target.target} of ${model}`}>
            {action.busy ? 'Testing…' : 'Test'}
          </button>
        </>
      ) : null}
      {result === null ? null : <TestResult result={result} />}
      <ErrorNotice error={action.error} />
    </li>
  );
}

function KeyState({ upstreamKey }: { upstreamKey: UpstreamKey }) {
  if (upstreamKey.state === 'ok') return <span class="status status-active"><span aria-hidden="true">●</span> Serving</span>;
  if (upstreamKey.state === 'refused') return <span class="status status-disabled"><span aria-hidden="true">✕</span> Refused: out until restart</span>;
  return (
    <span class="status status-expired">
      <span aria-hidden="true">◌</span> Rate limited{upstreamKey.cooling_until === null ? '' : ' until '}
      {upstreamKey.cooling_until === null ? null : <Time iso={upstreamKey.cooling_until} />}
    </span>
  );
}

/** The pools of upstream keys (`api_keys`): each key by name, its state and its calls. */
function UpstreamKeys({ keys }: { keys: UpstreamKey[] }) {
  if (keys.length === 0) return null;
  return (
    <>
      <h2>Upstream keys</h2>
      <p class="help">Providers with several keys use them in turn. A key the upstream refuses leaves the pool; a rate-limited key rests for as long as the upstream asks.</p>
      <TableWrap label="Upstream keys">
        <table>
          <thead>
            <tr>
              <th scope="col">Provider</th>
              <th scope="col">Key</th>
              <th scope="col">State</th>
              <th scope="col" class="number">Calls</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((key) => (
              <tr key={`${key.provider}/${key.key}`}>
                <td data-label="Provider">{key.provider}</td>
                <td data-label="Key">{key.key}</td>
                <td data-label="State" class="wrap">
                  <KeyState upstreamKey={key} />
                </td>
                <td data-label="Calls" class="number">
                  {key.calls.toLocaleString('en-US')}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </>
  );
}

export function CatalogPage() {
  const session = useAdminSession();
  const isOperator = roleReaches(session.admin_token.role, 'operator');
  const catalog = useLoad(() => api.catalog(), []);
  const data = catalog.data;
  const health = new Map(data?.targets.map((target) => [target.target, target]) ?? []);
  return (
    <>
      <PageHeading title="Models">
        <nav class="page-links" aria-label="Catalog">
          <a href="/console/catalog/edit">{isOperator ? 'Edit catalog' : 'Catalog document'}</a>
          <a href="/console/catalog/versions">Versions</a>
        </nav>
      </PageHeading>
      <p class="help">
        Prices in US dollars per million tokens. Target health is what this gateway instance sees
        {data === undefined ? '' : ', read '}
        {data === undefined ? null : <Time iso={data.observed_at} />}.
        {isOperator ? ' Test sends "Say OK" through that target alone: nobody is billed, and its health is left as it is.' : ''}
      </p>
      <ErrorNotice error={catalog.error} />
      {data === undefined ? (
        catalog.loading ? <Loading what="the catalog" /> : null
      ) : (
        <>
          <TableWrap label="Models">
            <table>
              <thead>
                <tr>
                  <th scope="col">Model</th>
                  <PriceHeaders />
                  <th scope="col">Reasoning efforts</th>
                  <th scope="col">Targets (priority, weight): health</th>
                </tr>
              </thead>
              <tbody>
                {data.models.map((model) => (
                  <tr key={model.id}>
                    <td data-label="Model">
                      {model.id}
                      {model.enabled ? '' : ' (disabled)'}
                    </td>
                    <PriceCells input={model.prices.input_usd} cached={model.prices.cached_input_usd} output={model.prices.output_usd} />
                    <td data-label="Efforts">{model.reasoning_efforts.length === 0 ? '—' : model.reasoning_efforts.join(', ')}</td>
                    <td data-label="Targets" class="wrap">
                      <ul class="plain">
                        {model.targets.map((target, index) => (
                          <TargetRow key={target.target} model={model.id} index={index} target={target} health={health.get(target.target)} canTest={isOperator} />
                        ))}
                      </ul>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
          <UpstreamKeys keys={data.upstream_keys} />
        </>
      )}
    </>
  );
}
