import type { FastifyReply, FastifyRequest } from 'fastify';
import { ACCESS, operatorMay } from '../../access/access.js';
import type { App } from '../../app-type.js';
import { formText } from '../form-fields.js';
import { sendPage } from '../render.js';
import {
  actingAs,
  postedFile,
  postedTerms,
  refusalOf,
  refusalStatus,
  relayFormOptions,
  shownAgain,
  tooLongOf,
  type Area,
  type PostedFile,
  type RelayActing,
  type RelayFile,
} from './relay-forms.js';
import { RelaysPage, utcMinute, type RelaysOutcome } from './relays-page.js';
import { heldLine } from './relay-grants-table.js';

/**
 * GET /console/{area}/relays, and its three forms (docs/relay.md): answer a relay's request with
 * a pool grant, import a relay's usage report, import its return. The same services as
 * `keyward relay grant`, `import-report` and `import-return`; the administrator's page is held to
 * his enterprise by the services' scope, the operator's sees every enterprise's relays.
 */
export function relaysRoutes(app: App, area: Area): void {
  const reads = area === 'operator' ? operatorMay('read') : ACCESS.enterpriseSession;
  const writes = area === 'operator' ? operatorMay('write') : ACCESS.enterpriseSession;

  const show = async (request: FastifyRequest, reply: FastifyReply, outcome: RelaysOutcome, status = 200) => {
    const { context, scope } = actingAs(area, request);
    const grants = await app.services.relayGrants.list(scope);
    return sendPage(
      reply,
      <RelaysPage context={context} area={area} grants={grants} outcome={outcome} />,
      status,
    );
  };

  /**
   * A form's file read and acted on: its outcome shown on the page, or its refusal next to the
   * field with the text posted (the page is the answer: a grant is shown once, as it is made).
   */
  const post =
    (
      name: RelayFile,
      act: (acting: RelayActing, posted: PostedFile, request: FastifyRequest) => Promise<RelaysOutcome>,
    ) =>
    async (request: FastifyRequest, reply: FastifyReply) => {
      const acting = actingAs(area, request);
      const posted = postedFile(request, name);
      const again = shownAgain(posted);
      const kept = {
        ...(again === undefined ? {} : { posted: { field: name, text: again } }),
        ...(name === 'request'
          ? { terms: { machines: formText(request, 'machines'), overage: formText(request, 'overage') } }
          : {}),
      };
      if (posted.tooLong) return show(request, reply, { error: tooLongOf(acting.context, name) }, 413);
      try {
        return await show(request, reply, await act(acting, posted, request));
      } catch (error) {
        return show(
          request,
          reply,
          { error: refusalOf(acting.context, error, name), ...kept },
          refusalStatus(error),
        );
      }
    };

  app.get(`/${area}/relays`, { config: { access: reads } }, async (request, reply) =>
    show(request, reply, {}),
  );

  app.post(
    `/${area}/relays/grant`,
    relayFormOptions('request', writes),
    post('request', async ({ actor, scope }, posted, request) => ({
      answer: await app.services.relayGrants.grant(posted.text, actor, scope, postedTerms(request)),
    })),
  );

  app.post(
    `/${area}/relays/report`,
    relayFormOptions('report', writes),
    post('report', async ({ context, actor, scope }, posted) => {
      const r = await app.services.relayReports.importReport(posted.text, actor, scope);
      return {
        done: context.t('relays.reported', {
          reportId: r.reportId,
          relayId: r.relayId,
          hours: r.hours,
          peak: r.peakSeats,
          seatHours: r.seatHours,
          refused: r.refused,
        }),
      };
    }),
  );

  app.post(
    `/${area}/relays/return`,
    relayFormOptions('return', writes),
    post('return', async ({ context, actor, scope }, posted) => {
      const r = await app.services.relayGrants.acceptReturn(posted.text, actor, scope);
      const said = { grantId: r.grantId, relayId: r.relayId, at: utcMinute(r.returnedAt) };
      // What went back of each share of a usage limit, said after the seats.
      const back = r.givenBack.map((share) =>
        context.t('relays.givenBack', {
          license: `${share.assetNum}/${share.crmProductId}`,
          what: heldLine(context, share),
        }),
      );
      const done = context.t(r.made ? 'relays.returned' : 'relays.returnedBefore', said);
      return { done: [done, ...back].join(' ') };
    }),
  );
}
