/**
 * One key: its status, limits and what its budget has spent and left; for operators, a change of
 * its settings, rotate (the new secret shown once), disable or enable, and delete (a second press).
 */
import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api } from '../api';
import { PageHeading } from '../components/heading';
import { KeyFields } from '../components/key-fields';
import { NewSecret } from '../components/new-secret';
import { ErrorNotice, Loading, SuccessNotice } from '../components/notice';
import { Status } from '../components/status';
import { Time } from '../components/time';
import { Usd } from '../components/usd';
import { keyFields, keySettings } from '../key-settings';
import { roleReaches, useAdminSession } from '../session';
import type { KeyDetails } from '../types';
import { useLoad } from '../use-load';
import { useAction } from '../use-action';

export function KeyPage() {
  const { params } = useRoute();
  const id = params.id ?? '';
  const session = useAdminSession();
  const key = useLoad(() => api.key(id), [id]);
  const [done, setDone] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const canChange = roleReaches(session.admin_token.role, 'operator');
  if (key.data === undefined) {
    return (
      <>
        <PageHeading title="Key" />
        <ErrorNotice error={key.error} />
        {key.loading ? <Loading what="the key" /> : null}
      </>
    );
  }
  const current = key.data;
  const changed = (message: string): void => {
    setDone(message);
    key.reload();
  };
  return (
    <>
      <p class="breadcrumb">
        <a href="/console/accounts">Accounts</a> / <a href={`/console/accounts/${encodeURIComponent(current.account_id)}`}>Account</a> /
      </p>
      <PageHeading title={`Key ${current.name ?? current.prefix}`}>
        <Status state={current.status} />
      </PageHeading>
      <KeyFigures keyDetails={current} />
      <p class="help">
        Key id <code>{current.id}</code> · prefix <code>{current.prefix}…</code> · <a href={`/console/requests?key=${encodeURIComponent(current.id)}`}>its requests</a>
      </p>
      {done === null ? null : <SuccessNotice>{done}</SuccessNotice>}
      {secret === null ? null : <NewSecret secret={secret} model={current.models?.[0] ?? 'MODEL'} onDismiss={() => setSecret(null)} />}
      {canChange && current.status !== 'deleted' ? (
        <div class="panels">
          <SettingsForm keyDetails={current} onDone={changed} onStart={() => setDone(null)} />
          <KeyActions
            keyDetails={current}
            onStart={() => setDone(null)}
            onDone={changed}
            onRotated={(newSecret) => {
              setSecret(newSecret);
              changed('Rotated: the old secret is refused from now on.');
            }}
          />
        </div>
      ) : null}
    </>
  );
}

function KeyFigures({ keyDetails }: { keyDetails: KeyDetails }) {
  const { budget } = keyDetails;
  return (
    <>
      {budget === null ? null : (
        <dl class="stats">
          <div class="stat">
            <dt>Budget per {budget.period === 'total' ? 'all time' : budget.period}</dt>
            <dd>
              <Usd value={budget.limit_usd} />
            </dd>
          </div>
          <div class="stat">
            <dt>Spent this period</dt>
            <dd>
              <Usd value={budget.spent_usd} />
            </dd>
          </div>
          <div class="stat">
            <dt>Left</dt>
            <dd>
              <Usd value={budget.remaining_usd} />
            </dd>
          </div>
        </dl>
      )}
      <dl class="details">
        <dt>Budget</dt>
        <dd>{budget === null ? 'None' : budget.resets_at === null ? 'Never resets' : <>Resets <Time iso={budget.resets_at} /></>}</dd>
        <dt>Models</dt>
        <dd>{keyDetails.models === null ? 'Every model' : keyDetails.models.join(', ')}</dd>
        <dt>Requests per window</dt>
        <dd>{keyDetails.requests_per_window ?? 'The gateway default'}</dd>
        <dt>Tokens per minute</dt>
        <dd>{keyDetails.tokens_per_minute ?? 'The gateway default'}</dd>
        <dt>Expires</dt>
        <dd>{keyDetails.expires_at === null ? 'Never' : <Time iso={keyDetails.expires_at} />}</dd>
        <dt>Created</dt>
        <dd>
          <Time iso={keyDetails.created_at} />
        </dd>
      </dl>
    </>
  );
}

interface ChangeProps {
  keyDetails: KeyDetails;
  onStart: () => void;
  onDone: (message: string) => void;
}

function SettingsForm({ keyDetails, onStart, onDone }: ChangeProps) {
  const [fields, setFields] = useState(() => keyFields(keyDetails));
  const { busy, error, attempt } = useAction();
  async function submit(event: Event): Promise<void> {
    event.preventDefault();
    onStart();
    await attempt(async () => {
      await api.updateKey(keyDetails.id, keySettings(fields));
      onDone('Key settings saved.');
    });
  }
  return (
    <section class="card" aria-labelledby="settings-heading">
      <h2 id="settings-heading">Limits and budget</h2>
      <form class="stack" onSubmit={(event) => void submit(event)}>
        <KeyFields fields={fields} onChange={setFields} idPrefix="key" />
        <ErrorNotice error={error} />
        <div class="form-actions">
          <button type="submit" disabled={busy}>
            Save settings
          </button>
        </div>
      </form>
    </section>
  );
}

function KeyActions({ keyDetails, onStart, onDone, onRotated }: ChangeProps & { onRotated: (secret: string) => void }) {
  const location = useLocation();
  const [confirming, setConfirming] = useState<'rotate' | 'delete' | null>(null);
  const { busy, error, attempt } = useAction();
  async function run(action: () => Promise<void>): Promise<void> {
    onStart();
    await attempt(async () => {
      await action();
      setConfirming(null);
    });
  }
  const name = keyDetails.name ?? keyDetails.prefix;
  return (
    <section class="card" aria-labelledby="key-status-heading">
      <h2 id="key-status-heading">Status</h2>
      <p>
        This key is <strong>{keyDetails.status}</strong>. Disabling it refuses it on every instance within a second.
      </p>
      <ErrorNotice error={error} />
      <div class="form-actions">
        <button
          type="button"
          class={keyDetails.disabled ? undefined : 'button-danger'}
          disabled={busy}
          onClick={() =>
            void run(async () => {
              await api.setKeyDisabled(keyDetails.id, !keyDetails.disabled);
              onDone(keyDetails.disabled ? 'Key enabled.' : 'Key disabled: it is refused.');
            })
          }
        >
          {keyDetails.disabled ? 'Enable key' : 'Disable key'}
        </button>
        {confirming === 'rotate' ? (
          <button type="button" class="button-danger" disabled={busy} onClick={() => void run(async () => onRotated((await api.rotateKey(keyDetails.id)).key))}>
            Yes, give {name} a new secret
          </button>
        ) : (
          <button type="button" class="button-secondary" onClick={() => setConfirming('rotate')}>
            Rotate…
          </button>
        )}
        {confirming === 'delete' ? (
          <button
            type="button"
            class="button-danger"
            disabled={busy}
            onClick={() =>
              void run(async () => {
                await api.deleteKey(keyDetails.id);
                location.route(`/console/accounts/${encodeURIComponent(keyDetails.account_id)}`);
              })
            }
          >
            Yes, delete {name}
          </button>
        ) : (
          <button type="button" class="button-danger" onClick={() => setConfirming('delete')}>
            Delete…
          </button>
        )}
        {confirming === null ? null : (
          <button type="button" class="button-secondary" onClick={() => setConfirming(null)}>
            Cancel
          </button>
        )}
      </div>
    </section>
  );
}
