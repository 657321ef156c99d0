/**
 * The console: finds out who the session cookie stands for (GET /console/api/session), then shows
 * the operator's pages or the key holder's, or the sign-in page when there is no session.
 */
import { useEffect, useState } from 'preact/hooks';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { api, ApiError, whenSessionEnds } from './api';
import { Layout } from './components/layout';
import { ErrorNotice, Loading } from './components/notice';
import { AccountPage } from './pages/account';
import { AccountsPage } from './pages/accounts';
import { AdminTokensPage } from './pages/admin-tokens';
import { AlertDeliveriesPage } from './pages/alert-deliveries';
import { AuditPage } from './pages/audit';
import { CatalogPage } from './pages/catalog';
import { CatalogEditorPage } from './pages/catalog-editor';
import { CatalogVersionPage } from './pages/catalog-version';
import { CatalogVersionsPage } from './pages/catalog-versions';
import { HealthPage } from './pages/health';
import { ConnectPage } from './pages/connect';
import { HolderHomePage } from './pages/holder-home';
import { KeyPage } from './pages/key';
import { ModelsPage } from './pages/models';
import { NotFoundPage } from './pages/not-found';
import { OverviewPage } from './pages/overview';
import { RequestsPage } from './pages/requests';
import { SignInPage } from './pages/sign-in';
import { SessionContext } from './session';
import type { Session } from './types';

type SessionState = { state: 'loading' } | { state: 'signed-out'; ended: boolean } | { state: 'signed-in'; session: Session } | { state: 'failed'; error: unknown };

function Console() {
  const [current, setCurrent] = useState<SessionState>({ state: 'loading' });
  const location = useLocation();

  useEffect(() => {
    // One address for the start page: /console/ (the routes below name it so).
    if (location.path === '/console') location.route('/console/', true);
    whenSessionEnds(() => setCurrent({ state: 'signed-out', ended: true }));
    api.session().then(
      (session) => setCurrent({ state: 'signed-in', session }),
      (error: unknown) => setCurrent(error instanceof ApiError && error.status === 401 ? { state: 'signed-out', ended: false } : { state: 'failed', error }),
    );
  }, []);

  if (current.state === 'loading') return <Loading what="the console" />;
  if (current.state === 'failed') return <main id="content" class="centered"><ErrorNotice error={current.error} /></main>;
  if (current.state === 'signed-out') {
    return (
      <SignInPage
        ended={current.ended}
        onSignedIn={(session) => {
          setCurrent({ state: 'signed-in', session });
          if (location.path === '/console/login') location.route('/console/', true);
        }}
      />
    );
  }

  const signOut = (): void => {
    api.signOut().finally(() => {
      setCurrent({ state: 'signed-out', ended: false });
      location.route('/console/', true);
    });
  };
  const { session } = current;
  return (
    <SessionContext.Provider value={{ session, signOut }}>
      <Layout>
        {session.kind === 'admin' ? (
          <Router>
            <Route path="/console/" component={OverviewPage} />
            <Route path="/console/accounts" component={AccountsPage} />
            <Route path="/console/accounts/:id" component={AccountPage} />
            <Route path="/console/keys/:id" component={KeyPage} />
            <Route path="/console/requests" component={RequestsPage} />
            <Route path="/console/catalog" component={CatalogPage} />
            <Route path="/console/catalog/edit" component={CatalogEditorPage} />
            <Route path="/console/catalog/versions" component={CatalogVersionsPage} />
            <Route path="/console/catalog/versions/:id" component={CatalogVersionPage} />
            <Route path="/console/health" component={HealthPage} />
            <Route path="/console/admin-tokens" component={AdminTokensPage} />
            <Route path="/console/alerts" component={AlertDeliveriesPage} />
            <Route path="/console/audit" component={AuditPage} />
            <Route default component={NotFoundPage} />
          </Router>
        ) : (
          <Router>
            <Route path="/console/" component={HolderHomePage} />
            <Route path="/console/models" component={ModelsPage} />
            <Route path="/console/connect" component={ConnectPage} />
            <Route default component={NotFoundPage} />
          </Router>
        )}
      </Layout>
    </SessionContext.Provider>
  );
}

export function App() {
  return (
    <LocationProvider scope="/console">
      <Console />
    </LocationProvider>
  );
}
