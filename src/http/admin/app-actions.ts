import { Type } from 'typebox';
import type { App } from '../app-type.js';

const Params = Type.Object({ appKey: Type.String({ minLength: 1, maxLength: 100 }) });

/** `keyward app approve | disable | rotate-secret KEY`. */
export function appActionRoutes(app: App): void {
  app.post('/apps/:appKey/approve', { schema: { params: Params } }, async (request) =>
    app.services.apps.approve(request.params.appKey),
  );
  app.post('/apps/:appKey/disable', { schema: { params: Params } }, async (request) =>
    app.services.apps.disable(request.params.appKey),
  );
  app.post('/apps/:appKey/rotate-secret', { schema: { params: Params } }, async (request) =>
    app.services.apps.rotateSecret(request.params.appKey),
  );
}
