/**
 * The ESLint rule that keeps docs/architecture.md's import direction
 * (server → http → auth | billing | ratelimit | routing → providers → protocol, with request-log
 * and observability beside http) really fires.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint();

async function violations(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((message) => message.ruleId === 'no-restricted-imports').map((message) => message.message);
}

describe('import direction', () => {
  it.each([
    ['src/protocol/example.ts', "import { GatewayError } from '../errors/gateway-error.js';\nexport const x = GatewayError;"],
    ['src/protocol/responses/example.ts', "import type { Store } from '../../store/store.js';\nexport type X = Store;"],
    ['src/providers/openai/example.ts', "import type { Store } from '../../store/store.js';\nexport type X = Store;"],
    ['src/providers/example.ts', "import { BillingService } from '../billing/billing-service.js';\nexport const x = BillingService;"],
    ['src/providers/example.ts', "import { buildApp } from '../http/app.js';\nexport const x = buildApp;"],
    ['src/routing/example.ts', "import { Authenticator } from '../auth/authenticator.js';\nexport const x = Authenticator;"],
    ['src/store/example.ts', "import { Router } from '../routing/router.js';\nexport const x = Router;"],
    ['src/http/example.ts', "import { runServe } from '../server/serve.js';\nexport const x = runServe;"],
    ['src/admin/example.ts', "import { setUpLimits } from '../server/limits-setup.js';\nexport const x = setUpLimits;"],
    ['src/billing/example.ts', "import { buildApp } from '../http/app.js';\nexport const x = buildApp;"],
    ['src/alerts/example.ts', "import { buildApp } from '../http/app.js';\nexport const x = buildApp;"],
    ['src/store/example.ts', "import { createAlerts } from '../alerts/alerts.js';\nexport const x = createAlerts;"],
    ['src/request-log/example.ts', "import { buildApp } from '../http/app.js';\nexport const x = buildApp;"],
    ['src/request-log/example.ts', "import { Router } from '../routing/router.js';\nexport const x = Router;"],
    ['src/store/example.ts', "import { createRequestLog } from '../request-log/request-log.js';\nexport const x = createRequestLog;"],
    ['src/billing/example.ts', "import { createRequestLog } from '../request-log/request-log.js';\nexport const x = createRequestLog;"],
    ['src/observability/example.ts', "import { buildApp } from '../http/app.js';\nexport const x = buildApp;"],
    ['src/observability/example.ts', "import { createRequestLog } from '../request-log/request-log.js';\nexport const x = createRequestLog;"],
    ['src/routing/example.ts', "import { createMetrics } from '../observability/metrics.js';\nexport const x = createMetrics;"],
    ['src/billing/example.ts', "import type { RequestOutcome } from '../observability/request-outcome.js';\nexport type X = RequestOutcome;"],
  ])('%s may not import upward', async (filePath, code) => {
    expect(await violations(filePath, code)).toHaveLength(1);
  });

  it.each([
    ['src/http/example.ts', "import { Router } from '../routing/router.js';\nexport const x = Router;"],
    ['src/server/example.ts', "import { buildApp } from '../http/app.js';\nexport const x = buildApp;"],
    ['src/cli/example.ts', "import { runServe } from '../server/serve.js';\nexport const x = runServe;"],
    ['src/routing/example.ts', "import type { Provider } from '../providers/provider.js';\nexport type X = Provider;"],
    ['src/providers/example.ts', "import type { Usage } from '../protocol/canonical.js';\nexport type X = Usage;"],
    ['src/http/example.ts', "import { createAlerts } from '../alerts/alerts.js';\nexport const x = createAlerts;"],
    ['src/alerts/example.ts', "import type { Store } from '../store/store.js';\nexport type X = Store;"],
    ['src/http/example.ts', "import { createRequestLog } from '../request-log/request-log.js';\nexport const x = createRequestLog;"],
    ['src/server/example.ts', "import { createRequestLog } from '../request-log/request-log.js';\nexport const x = createRequestLog;"],
    ['src/request-log/example.ts', "import type { Store } from '../store/store.js';\nexport type X = Store;"],
    ['src/request-log/example.ts', "import { clientErrorCode } from '../errors/error-shapes.js';\nexport const x = clientErrorCode;"],
    ['src/http/example.ts', "import { observeApiRequests } from '../observability/observe-requests.js';\nexport const x = observeApiRequests;"],
    ['src/server/example.ts', "import { createMetrics } from '../observability/metrics.js';\nexport const x = createMetrics;"],
    ['src/request-log/example.ts', "import type { RequestOutcome } from '../observability/request-outcome.js';\nexport type X = RequestOutcome;"],
    ['src/observability/example.ts', "import type { AttemptObserver } from '../routing/router.js';\nexport type X = AttemptObserver;"],
  ])('%s may import downward', async (filePath, code) => {
    expect(await violations(filePath, code)).toHaveLength(0);
  });
});
