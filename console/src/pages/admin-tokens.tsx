/** Admin tokens (owner only): list, create (the secret shown once), disable and enable. */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { CopyBlock } from '../components/copy-button';
import { PageHeading } from '../components/heading';
import { ErrorNotice, Loading } from '../components/notice';
import { Status } from '../components/status';
import { ActionsHeader, TableWrap } from '../components/table-wrap';
import { Time } from '../components/time';
import { useAdminSession } from '../session';
import type { AdminRole, AdminToken } from '../types';
import { useLoad } from '../use-load';
import { useAction } from '../use-action';

export function AdminTokensPage() {
  const session = useAdminSession();
  const tokens = useLoad(() => api.adminTokens(), []);
  const [created, setCreated] = useState<(AdminToken & { token: string }) | null>(null);
  return (
    <>
      <PageHeading title="Admin tokens" />
      <p class="help">
        A <strong>viewer</strong> reads; an <strong>operator</strong> also manages accounts and credit; an <strong>owner</strong> also manages admin
        tokens. Disabling a token also ends its console sessions.
      </p>
      {created === null ? null : (
        <section class="card card-highlight" aria-labelledby="created-heading">
          <h2 id="created-heading">New {created.role} token{created.name === null ? '' : ` “${created.name}”`}</h2>
          <p>
            <strong>Copy it now:</strong> this is the only time it is shown. Only its hash is kept.
          </p>
          <CopyBlock text={created.token} label="the new admin token" token />
          <button type="button" class="button-secondary" onClick={() => setCreated(null)}>
            I have stored it
          </button>
        </section>
      )}
      <ErrorNotice error={tokens.error} />
      {tokens.data === undefined ? (
        tokens.loading ? <Loading what="admin tokens" /> : null
      ) : (
        <TableWrap label="Admin tokens">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
                <th scope="col">Prefix</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <ActionsHeader />
              </tr>
            </thead>
            <tbody>
              {tokens.data.data.map((token) => (
                <TokenRow key={token.id} token={token} mine={token.id === session.admin_token.id} onChanged={tokens.reload} />
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <NewTokenForm
        onCreated={(token) => {
          setCreated(token);
          tokens.reload();
        }}
      />
    </>
  );
}

function TokenRow({ token, mine, onChanged }: { token: AdminToken; mine: boolean; onChanged: () => void }) {
  const { busy, error, attempt } = useAction();
  const label = token.name ?? token.prefix;
  async function toggle(): Promise<void> {
    await attempt(async () => {
      await api.setAdminTokenDisabled(token.id, !token.disabled);
      onChanged();
    });
  }
  return (
    <tr>
      <td data-label="Name">
        <span>
          {token.name ?? <span class="muted">(no name)</span>}
          {mine ? <span class="tag">this session</span> : null}
        </span>
      </td>
      <td data-label="Role">{token.role}</td>
      <td data-label="Prefix">
        <code>{token.prefix}…</code>
      </td>
      <td data-label="Status">
        <Status state={token.disabled ? 'disabled' : 'active'} />
      </td>
      <td data-label="Created">
        <Time iso={token.created_at} />
      </td>
      <td data-label="Actions">
        {mine ? null : (
          <button type="button" class="button-secondary button-small" disabled={busy} onClick={() => void toggle()}>
            {token.disabled ? 'Enable' : 'Disable'}
            <span class="visually-hidden"> {label}</span>
          </button>
        )}
        <ErrorNotice error={error} />
      </td>
    </tr>
  );
}

function NewTokenForm({ onCreated }: { onCreated: (token: AdminToken & { token: string }) => void }) {
  const [role, setRole] = useState<AdminRole>('viewer');
  const [name, setName] = useState('');
  const { busy, error, attempt } = useAction();
  async function submit(event: Event): Promise<void> {
    event.preventDefault();
    await attempt(async () => {
      onCreated(await api.createAdminToken(role, name.trim()));
      setName('');
    });
  }
  return (
    <section class="card" aria-labelledby="new-token-heading">
      <h2 id="new-token-heading">New admin token</h2>
      <form class="form-grid" onSubmit={(event) => void submit(event)}>
        <div class="field">
          <label for="new-token-role">Role</label>
          <select id="new-token-role" value={role} onChange={(event) => setRole(event.currentTarget.value as AdminRole)}>
            <option value="viewer">Viewer</option>
            <option value="operator">Operator</option>
            <option value="owner">Owner</option>
          </select>
        </div>
        <div class="field">
          <label for="new-token-name">Name (optional)</label>
          <input id="new-token-name" maxLength={100} value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </div>
        <div class="form-actions">
          <button type="submit" disabled={busy}>
            Create token
          </button>
        </div>
      </form>
      <ErrorNotice error={error} />
    </section>
  );
}
