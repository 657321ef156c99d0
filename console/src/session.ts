import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { AdminRole, AdminSession, KeySession, Session } from './types';

export interface SessionState {
  session: Session;
  signOut(): void;
}

export const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (state === null) throw new Error('useSession outside a signed-in page');
  return state;
}

export function useAdminSession(): AdminSession {
  const { session } = useSession();
  if (session.kind !== 'admin') throw new Error('an operator page rendered for a key holder');
  return session;
}

export function useKeySession(): KeySession {
  const { session } = useSession();
  if (session.kind !== 'key') throw new Error("a key holder's page rendered for an operator");
  return session;
}

const RANK: Readonly<Record<AdminRole, number>> = { viewer: 0, operator: 1, owner: 2 };

/** Whether the admin API lets this role do what needs `needed` (it refuses otherwise; the console only hides the form). */
export function roleReaches(role: AdminRole, needed: AdminRole): boolean {
  return RANK[role] >= RANK[needed];
}
