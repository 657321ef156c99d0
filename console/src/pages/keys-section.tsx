/**
 * The account page's keys: the list (each to its key page) and, for operators, a new key, whose
 * secret is shown once with a curl line and an SDK snippet.
 */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { KeyFields } from '../components/key-fields';
import { NewSecret } from '../components/new-secret';
import { ErrorNotice, Loading } from '../components/notice';
import { Status } from '../components/status';
import { TableWrap } from '../components/table-wrap';
import { Time } from '../components/time';
import { Usd } from '../components/usd';
import { emptyKeyFields, keySettings } from '../key-settings';
import type { Key } from '../types';
import { useLoad } from '../use-load';
import { useAction } from '../use-action';

export function KeysSection({ accountId, canChange }: { accountId: string; canChange: boolean }) {
  const keys = useLoad(() => api.keys({ account: accountId }), [accountId]);
  const [created, setCreated] = useState<{ secret: string; model: string } | null>(null);
  return (
    <section aria-labelledby="keys-heading">
      <h2 id="keys-heading">Keys</h2>
      <ErrorNotice error={keys.error} />
      {keys.data === undefined ? (
        keys.loading ? <Loading what="keys" /> : null
      ) : keys.data.data.length === 0 ? (
        <p>No keys yet.</p>
      ) : (
        <KeyTable keys={keys.data.data} />
      )}
      {created === null ? null : <NewSecret secret={created.secret} model={created.model} onDismiss={() => setCreated(null)} />}
      {canChange ? (
        <NewKeyForm
          accountId={accountId}
          onCreated={(secret, model) => {
            setCreated({ secret, model });
            keys.reload();
          }}
        />
      ) : null}
    </section>
  );
}

function KeyTable({ keys }: { keys: Key[] }) {
  return (
    <TableWrap label="Key list">
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Prefix</th>
            <th scope="col">Status</th>
            <th scope="col">Models</th>
            <th scope="col" class="number">
              Budget
            </th>
            <th scope="col">Expires</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.id}>
              <td data-label="Name">
                <a href={`/console/keys/${encodeURIComponent(key.id)}`}>{key.name ?? key.prefix}</a>
              </td>
              <td data-label="Prefix">
                <code>{key.prefix}…</code>
              </td>
              <td data-label="Status">
                <Status state={key.status} />
              </td>
              <td data-label="Models" class="wrap">
                {key.models === null ? 'Every model' : key.models.join(', ')}
              </td>
              <td data-label="Budget" class="number">
                {key.budget === null || key.budget === undefined ? (
                  'None'
                ) : (
                  <>
                    <Usd value={key.budget.limit_usd} /> / {key.budget.period}
                  </>
                )}
              </td>
              <td data-label="Expires">{key.expires_at === null ? 'Never' : <Time iso={key.expires_at} />}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

function NewKeyForm({ accountId, onCreated }: { accountId: string; onCreated: (secret: string, model: string) => void }) {
  const [fields, setFields] = useState(emptyKeyFields);
  const { busy, error, attempt } = useAction();
  async function submit(event: Event): Promise<void> {
    event.preventDefault();
    await attempt(async () => {
      const settings = keySettings(fields);
      const created = await api.createKey(accountId, settings);
      const model = created.models?.[0] ?? (await api.catalog().then((catalog) => catalog.models.find((entry) => entry.enabled)?.id, () => undefined)) ?? 'MODEL';
      setFields(emptyKeyFields());
      onCreated(created.key, model);
    });
  }
  return (
    <section class="card" aria-labelledby="new-key-heading">
      <h2 id="new-key-heading">New key</h2>
      <form class="form-grid" onSubmit={(event) => void submit(event)}>
        <KeyFields fields={fields} onChange={setFields} idPrefix="new-key" />
        <div class="form-actions">
          <button type="submit" disabled={busy}>
            Create key
          </button>
        </div>
      </form>
      <ErrorNotice error={error} />
    </section>
  );
}
