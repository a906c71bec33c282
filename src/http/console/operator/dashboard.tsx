import type { App } from '../../app-type.js';
import { operatorContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';

/** GET /console/operator: the platform at a glance. */
export function dashboardRoute(app: App): void {
  app.get('/operator', async (request, reply) => {
    const context = operatorContext(request);
    const status = await app.services.status.read();
    return sendPage(
      reply,
      <Layout context={context} title={context.t('nav.dashboard')}>
        <p>
          Keyward {status.version} · {status.database}
        </p>
      </Layout>,
    );
  });
}
