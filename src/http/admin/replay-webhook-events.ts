import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { operatorRequestOf } from '../audit-actor.js';
import { EndpointId, Instant } from './webhook-schemas.js';
import { adminMay } from '../access/access.js';

const Body = Type.Object(
  {
    from: Instant('events that occurred at or after this time…'),
    to: Instant('…and before this one'),
  },
  { additionalProperties: false },
);

/** `keyward webhooks replay`: the events of a time range queued again to one endpoint; audited. */
export function replayWebhookEventsRoute(app: App): void {
  app.post(
    '/webhooks/endpoints/:endpointId/replay',
    {
      config: { access: adminMay('write') },
      schema: { params: Type.Object({ endpointId: EndpointId }), body: Body },
    },
    async (request) =>
      app.services.webhookAdmin.replay(
        request.params.endpointId,
        new Date(request.body.from),
        new Date(request.body.to),
        operatorRequestOf(request),
      ),
  );
}
