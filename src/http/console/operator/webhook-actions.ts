import {
  MAX_REPLAY_EVENTS,
  WebhookAdminInputError,
  WebhookAdminNotFoundError,
} from '../../../domain/webhooks/webhook-admin.service.js';
import type { App } from '../../app-type.js';
import { operatorContext } from '../context.js';
import { sendErrorPage } from '../error-page.js';
import { formText } from '../form-fields.js';
import { redirectTo } from '../render.js';
import type { ConsoleError } from '../ui.js';
import { consoleRequest } from './form.js';
import { showEndpoint } from './webhook-endpoint.js';
import { endpointHref, isDeliveryId, isEndpointId, parseReplayForm } from './webhooks-filter.js';
import { operatorMay } from '../../access/access.js';

/** The service's refusal in the console's language; the admin API answers its English sentence. */
function refusalText(
  t: ReturnType<typeof operatorContext>['t'],
  error: WebhookAdminInputError,
  deliveryId?: string,
): string {
  switch (error.reason) {
    case 'delivered':
      return t('webhooks.refused.delivered', { id: deliveryId ?? '' });
    case 'reversed':
      return t('webhooks.refused.reversed');
    case 'tooMany':
      return t('webhooks.refused.tooMany', { max: MAX_REPLAY_EVENTS.toLocaleString('en') });
    case 'badTime':
      return t('webhooks.badTime', { field: t(`webhooks.${error.field ?? 'from'}`) });
  }
}

/**
 * POST /console/operator/webhooks/deliveries/:id/retry and /webhooks/:endpointId/replay: the admin
 * API's retry and replay, through the same service, audited as the console.
 */
export function webhookActionRoutes(app: App): void {
  app.post<{ Params: { deliveryId: string } }>(
    '/operator/webhooks/deliveries/:deliveryId/retry',
    { config: { access: operatorMay('retry') } },
    async (request, reply) => {
      const { deliveryId } = request.params;
      if (!isDeliveryId(deliveryId)) return sendErrorPage(request, reply, 404, 'error.notFound');
      try {
        const retried = await app.services.webhookAdmin.retry(Number(deliveryId), consoleRequest(request));
        const query = new URLSearchParams({ done: 'retried', delivery: String(retried.id) });
        return await redirectTo(reply, `${endpointHref(retried.endpointId)}?${query}`);
      } catch (error) {
        if (error instanceof WebhookAdminNotFoundError)
          return sendErrorPage(request, reply, 404, 'error.notFound');
        if (!(error instanceof WebhookAdminInputError)) throw error;
        // A delivered one: said on the page the form came from (its endpoint's), else on its own.
        const message = refusalText(operatorContext(request).t, error, deliveryId);
        const endpointId = formText(request, 'endpoint');
        if (!isEndpointId(endpointId)) {
          return sendErrorPage(request, reply, 400, 'error.input', { message });
        }
        return showEndpoint(app, request, reply, endpointId, {}, { error: { message }, status: 400 });
      }
    },
  );

  app.post<{ Params: { endpointId: string } }>(
    '/operator/webhooks/:endpointId/replay',
    { config: { access: operatorMay('write') } },
    async (request, reply) => {
      const { t } = operatorContext(request);
      const { endpointId } = request.params;
      if (!isEndpointId(endpointId)) return sendErrorPage(request, reply, 404, 'error.notFound');
      const form = { from: formText(request, 'from').slice(0, 40), to: formText(request, 'to').slice(0, 40) };
      const refuse = (error: ConsoleError) =>
        showEndpoint(app, request, reply, endpointId, {}, { error, replay: form, status: 400 });
      const { range, bad } = parseReplayForm(form);
      if (range === undefined) {
        const field = bad ?? 'from';
        return refuse({ message: t('webhooks.badTime', { field: t(`webhooks.${field}`) }), field });
      }
      try {
        const replayed = await app.services.webhookAdmin.replay(
          endpointId,
          range.from,
          range.to,
          consoleRequest(request),
        );
        const query = new URLSearchParams({ done: 'replayed', queued: String(replayed.queued) });
        return await redirectTo(reply, `${endpointHref(endpointId)}?${query}`);
      } catch (error) {
        if (error instanceof WebhookAdminNotFoundError)
          return sendErrorPage(request, reply, 404, 'error.notFound');
        if (error instanceof WebhookAdminInputError) {
          return refuse({
            message: refusalText(t, error),
            ...(error.field === undefined ? {} : { field: error.field }),
          });
        }
        throw error;
      }
    },
  );
}
