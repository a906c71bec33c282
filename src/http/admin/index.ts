import type { FastifyError } from 'fastify';
import { DatabaseBusyError } from '../../db/busy.js';
import { AppInputError, AppNotFoundError, AppProtectedError } from '../../domain/apps/apps.service.js';
import { BackupInputError, BackupNotAllowedError } from '../../domain/backup/backup.service.js';
import { PgToolError } from '../../domain/backup/pg-tools.js';
import {
  OperatorConflictError,
  OperatorInputError,
  OperatorNotFoundError,
} from '../../domain/operators/operators.service.js';
import { RuntimeKeyManagedError } from '../../domain/runtime-keys/runtime-keys.service.js';
import {
  WebhookAdminInputError,
  WebhookAdminNotFoundError,
} from '../../domain/webhooks/webhook-admin.service.js';
import { UsageInputError } from '../../domain/usage/usage-range.js';
import { KeywardError } from '../../errors/keyward-error.js';
import type { App } from '../app-type.js';
import { bodyErrorMessage } from '../error-handler.js';
import { overloadAnswer } from '../overload.js';
import { formatValidationError } from '../validation.js';
import { activationAdminRoutes } from './activate-offline-machine.js';
import { grantRelayRoute } from './grant-relay.js';
import { importRelayReportRoute } from './import-relay-report.js';
import { importRelayReturnRoute } from './import-relay-return.js';
import { listRelayGrantsRoute } from './list-relay-grants.js';
import { relayOwnRoutes } from './relay-own.js';
import { appActionRoutes } from './app-actions.js';
import { auditRoute } from './audit.js';
import { backupRoute } from './backup.js';
import { createAppRoute } from './create-app.js';
import { listAppsRoute } from './list-apps.js';
import { listExpiringLicensesRoute } from './list-expiring-licenses.js';
import { listLeasesRoute } from './list-leases.js';
import { listRuntimeKeysRoute } from './list-runtime-keys.js';
import { listWebhookDeliveriesRoute } from './list-webhook-deliveries.js';
import { listWebhookEndpointsRoute } from './list-webhook-endpoints.js';
import { operatorTokenRoutes } from './operator-tokens.js';
import { operatorRoutes } from './operators.js';
import { replayWebhookEventsRoute } from './replay-webhook-events.js';
import { retryWebhookDeliveryRoute } from './retry-webhook-delivery.js';
import { rotateRuntimeKeyRoute } from './rotate-runtime-key.js';
import { setMemberLimitRoute } from './set-member-limit.js';
import { setMemberPasswordRoute } from './set-member-password.js';
import { setAppSettingsRoute } from './set-app-settings.js';
import { setOfflineLeaseDaysRoute } from './set-offline-lease-days.js';
import { showEnterpriseRoute } from './show-enterprise.js';
import { statusRoute } from './status.js';
import { simulateUsageRoute } from './simulate-usage.js';
import { usageRoute } from './usage.js';

/** Errors of admin commands that are the operator's to fix, with the HTTP status they answer. */
export class AdminInputError extends Error {}
export class AdminNotFoundError extends Error {}

function statusOf(error: Error): number | undefined {
  if (error instanceof AppInputError || error instanceof AdminInputError) return 400;
  if (error instanceof WebhookAdminInputError) return 400;
  if (error instanceof OperatorInputError) return 400;
  if (error instanceof UsageInputError) return 400;
  if (error instanceof BackupInputError) return 400;
  if (error instanceof BackupNotAllowedError) return 403;
  if (error instanceof OperatorNotFoundError) return 404;
  if (error instanceof OperatorConflictError) return 409;
  if (error instanceof AppNotFoundError || error instanceof AdminNotFoundError) return 404;
  if (error instanceof WebhookAdminNotFoundError) return 404;
  // Not the server's to change: the operator's configuration decides.
  if (error instanceof RuntimeKeyManagedError) return 409;
  // The console's own client: changed only when the operator insists (force).
  if (error instanceof AppProtectedError) return 409;
  // pg_dump missing or failing on the server's machine: its message names what to install or fix.
  if (error instanceof PgToolError) return 409;
  // A KeywardError says its own status where it has one (a relay grant's seats taken: 409).
  if (error instanceof KeywardError) return error.options.httpStatus ?? 400;
  return undefined;
}

/**
 * The admin API the `keyward` CLI calls, each route declaring the permission it needs (adminMay): an
 * operator's personal token whose role holds it, or the admin key. Plain
 * JSON rather than the business envelope: its only client is the operator's command line.
 */
export function adminApi() {
  return async function registerAdmin(app: App): Promise<void> {
    app.setErrorHandler((error: FastifyError, request, reply) => {
      if (error.validation) {
        return reply.code(400).send({ error: formatValidationError(error.validation, 'body') });
      }
      if (error instanceof DatabaseBusyError)
        return reply.send(overloadAnswer(request, reply, error.message));
      const status = statusOf(error);
      if (status !== undefined) return reply.code(status).send({ error: error.message });
      // This handler stands in for the root one on these routes: a body Fastify could not read is
      // the caller's mistake here too, not a fault of ours.
      const body = bodyErrorMessage(error, app.config.limits.bodyBytes);
      if (body !== undefined) return reply.code(400).send({ error: body });
      request.log.error({ err: error }, 'admin request failed');
      return reply.code(500).send({ error: 'internal error', requestId: request.id });
    });
    createAppRoute(app);
    listAppsRoute(app);
    appActionRoutes(app);
    setOfflineLeaseDaysRoute(app);
    setAppSettingsRoute(app);
    auditRoute(app);
    setMemberPasswordRoute(app);
    setMemberLimitRoute(app);
    showEnterpriseRoute(app);
    statusRoute(app);
    listLeasesRoute(app);
    listExpiringLicensesRoute(app);
    usageRoute(app);
    simulateUsageRoute(app);
    activationAdminRoutes(app);
    grantRelayRoute(app);
    listRelayGrantsRoute(app);
    importRelayReportRoute(app);
    importRelayReturnRoute(app);
    relayOwnRoutes(app);
    listRuntimeKeysRoute(app);
    rotateRuntimeKeyRoute(app);
    listWebhookEndpointsRoute(app);
    listWebhookDeliveriesRoute(app);
    retryWebhookDeliveryRoute(app);
    replayWebhookEventsRoute(app);
    backupRoute(app);
    // '/operators/me…' before '/operators/:operator…': find-my-way prefers the static segment anyway.
    operatorTokenRoutes(app);
    operatorRoutes(app);
  };
}
