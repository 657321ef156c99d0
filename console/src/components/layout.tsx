import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { roleReaches, useSession } from '../session';

interface NavItem {
  href: string;
  label: string;
}

function navItems(session: ReturnType<typeof useSession>['session']): NavItem[] {
  if (session.kind === 'key') {
    return [
      { href: '/console/', label: 'Balance and key' },
      { href: '/console/models', label: 'Models' },
      { href: '/console/connect', label: 'Connect' },
    ];
  }
  const items = [
    { href: '/console/', label: 'Overview' },
    { href: '/console/accounts', label: 'Accounts' },
    { href: '/console/requests', label: 'Requests' },
    { href: '/console/catalog', label: 'Models' },
    { href: '/console/health', label: 'Health' },
    { href: '/console/alerts', label: 'Alerts' },
  ];
  if (roleReaches(session.admin_token.role, 'owner')) items.push({ href: '/console/admin-tokens', label: 'Admin tokens' }, { href: '/console/audit', label: 'Audit log' });
  return items;
}

function isCurrent(href: string, path: string): boolean {
  return href === '/console/' ? path === '/console/' || path === '/console' : path === href || path.startsWith(`${href}/`);
}

function whoAmI(session: ReturnType<typeof useSession>['session']): string {
  if (session.kind === 'key') return `Key ${session.key.name ?? session.key.prefix} · ${session.account.name}`;
  return `${session.admin_token.role} · ${session.admin_token.name ?? session.admin_token.prefix}`;
}

export function Layout({ children }: { children: ComponentChildren }) {
  const { session, signOut } = useSession();
  const { path } = useLocation();
  return (
    <>
      <a class="skip-link" href="#content">
        Skip to content
      </a>
      <header class="top">
        <div class="top-inner">
          <a class="brand" href="/console/">
            Tollgate
          </a>
          <nav class="nav" aria-label="Console">
            <ul>
              {navItems(session).map((item) => (
                <li key={item.href}>
                  <a href={item.href} aria-current={isCurrent(item.href, path) ? 'page' : undefined}>
                    {item.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <div class="who">
            <span class="who-name">{whoAmI(session)}</span>
            <button type="button" class="button-secondary button-small" onClick={signOut}>
              Sign out
            </button>
          </div>
        </div>
      </header>
      <main id="content" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
