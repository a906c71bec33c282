import { Type } from 'typebox';
import { operatorActor } from '../../domain/audit/audit-actions.js';
import { RELAY_REPORT_MAX_CHARS } from '../../domain/relay/relay-report.js';
import type { App } from '../app-type.js';
import { adminMay } from '../access/access.js';
import { operatorRequestOf } from '../audit-actor.js';

const ReportBody = Type.Object({
  report: Type.String({
    minLength: 1,
    maxLength: RELAY_REPORT_MAX_CHARS,
    description: 'the usage report file’s text, as `keyward relay report` wrote it (docs/relay.md)',
  }),
});

/**
 * `keyward relay import-report FILE`: a relay's signed usage report imported; its hours join the
 * usage pages and charts, marked as via relay (docs/relay.md).
 */
export function importRelayReportRoute(app: App): void {
  app.post(
    '/relays/reports',
    { config: { access: adminMay('write') }, schema: { body: ReportBody } },
    async (request) =>
      app.services.relayReports.importReport(request.body.report, operatorActor(operatorRequestOf(request))),
  );
}
