import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorNotice } from '../components/notice';
import { usePageTitle } from '../page-title';
import type { Session } from '../types';
import { useAction } from '../use-action';

/** Exchanges an admin token or an API key for a session cookie; the token itself is not kept. */
export function SignInPage({ ended, onSignedIn }: { ended: boolean; onSignedIn: (session: Session) => void }) {
  usePageTitle('Sign in');
  const [token, setToken] = useState('');
  const { busy, error, attempt } = useAction();

  async function submit(event: Event): Promise<void> {
    event.preventDefault();
    await attempt(async () => {
      const session = await api.signIn(token.trim());
      setToken('');
      onSignedIn(session);
    });
  }

  return (
    <main id="content" class="sign-in">
      <h1 tabIndex={-1}>Sign in to Tollgate</h1>
      {ended ? (
        <p class="notice" role="status">
          Your session has ended. Sign in again.
        </p>
      ) : null}
      <form onSubmit={(event) => void submit(event)} class="card stack">
        <label for="token">Admin token or API key</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="off"
          spellcheck={false}
          required
          value={token}
          onInput={(event) => setToken(event.currentTarget.value)}
          aria-describedby="token-help"
        />
        <p id="token-help" class="help">
          An admin token (<code>tg-admin-…</code>) opens the operator pages; an API key (<code>sk-tg-…</code>) shows its balance, limits and models. The
          token is exchanged for a session cookie that lasts 12 hours; the browser does not keep the token.
        </p>
        <ErrorNotice error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
