import type { App } from '../app-type.js';
import { createEndpointRoute } from './create-endpoint.js';
import { deleteEndpointRoute } from './delete-endpoint.js';
import { getEndpointRoute } from './get-endpoint.js';
import { listEndpointsRoute } from './list-endpoints.js';
import { rotateSecretRoute } from './rotate-secret.js';
import { updateEndpointRoute } from './update-endpoint.js';

/** The webhooks API, `/v1/webhooks`: an app's own endpoints; each route declares its callers (config.access). */
export async function webhooksSurface(app: App): Promise<void> {
  createEndpointRoute(app);
  listEndpointsRoute(app);
  getEndpointRoute(app);
  updateEndpointRoute(app);
  deleteEndpointRoute(app);
  rotateSecretRoute(app);
}
