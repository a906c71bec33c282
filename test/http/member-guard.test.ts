import Fastify from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import type { App } from '../../src/http/app-type.js';
import { installErrorHandler } from '../../src/http/error-handler.js';
import { memberGuard } from '../../src/http/guards/member-guard.js';
import { memberOf } from '../../src/http/guards/principal.js';
import { tokenRoute } from '../../src/http/oauth/token.js';
import { ME_PREFIX } from '../../src/http/surface.js';
import { memberGuardSuite } from '../support/guard-suite.js';
import { startHarness, type Harness } from '../support/harness.js';

// The member-center guard on a probe route of its own, so it is proven before any operation uses
// it; every member operation's tests run the same suite again against the real route.
let base: Harness;
let probe: Harness;

beforeAll(async () => {
  base = await startHarness();
  const app = Fastify() as unknown as App;
  app.decorate('services', base.app.services);
  installErrorHandler(app, 1024);
  tokenRoute(app);
  await app.register(
    async (surface: App) => {
      surface.addHook('onRequest', memberGuard(base.app.services));
      surface.get('/enterprise/:enterpriseGlobalId/probe', async (request) => ({
        code: 0,
        data: memberOf(request).account,
      }));
      surface.get('/enterprise/probe', async (request) => ({ code: 0, data: memberOf(request).account }));
    },
    { prefix: ME_PREFIX },
  );
  await app.ready();
  probe = { ...base, app: app as Harness['app'] };
});
afterAll(async () => {
  await probe.app.close();
  await base.close();
});

memberGuardSuite(() => probe, {
  method: 'GET',
  path: ({ enterprise }) => `${ME_PREFIX}/enterprise/${enterprise.globalId}/probe`,
});
