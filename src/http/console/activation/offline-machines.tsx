import type { FastifyReply, FastifyRequest } from 'fastify';
import QRCode from 'qrcode';
import type { ActivationAnswer, ActivationBy } from '../../../domain/activation/activation.service.js';
import type { OfflineMachine } from '../../../domain/activation/activation.repository.js';
import { operatorActor } from '../../../domain/audit/audit-actions.js';
import { KeywardError } from '../../../errors/keyward-error.js';
import { ACCESS, operatorMay } from '../../access/access.js';
import type { App } from '../../app-type.js';
import { requestIdsOf } from '../../audit-actor.js';
import { enterpriseContext, operatorContext, type ConsoleContext } from '../context.js';
import { formText } from '../form-fields.js';
import type { MessageKey } from '../i18n/index.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { Csrf, DataTable, Empty, Notice, type ConsoleError } from '../ui.js';
import { operatorLinks } from '../operator/links.js';
import { Can } from '../can.js';
import { consoleRequest } from '../operator/form.js';

type Area = 'enterprise' | 'operator';

/** What the page shows besides the list: an answer just made, or what was refused, or a return. */
interface Outcome {
  answer?: ActivationAnswer & { qr: string };
  error?: ConsoleError;
  done?: string;
  request?: string;
}

const base = (area: Area) => `/console/${area}/offline-machines`;

function AnswerView(props: { context: ConsoleContext; answer: ActivationAnswer & { qr: string } }) {
  const { context, answer } = props;
  const { t } = context;
  const file = `data:application/json;base64,${Buffer.from(JSON.stringify(answer.file, null, 2)).toString('base64')}`;
  return (
    <section class="activation-answer" aria-labelledby="answer-title">
      <h2 id="answer-title">{t('offline.answer')}</h2>
      <p>
        {t('offline.activated', {
          leaseId: answer.leaseId,
          product: answer.crmProductId,
          asset: answer.assetNum,
          days: answer.days,
          // Said in UTC, as every time in the console is: the machine may be in any time zone.
          until: `${new Date(answer.expiresAt).toISOString().slice(0, 16).replace('T', ' ')} UTC`,
        })}
      </p>
      <p>{t('offline.answerHint')}</p>
      <div class="answer-code-row">
        {/* An image made on the server from the code alone, as a data: URL (the policy's img-src). */}
        <img class="qr" src={answer.qr} alt={t('offline.qr')} width={220} height={220} />
        <div>
          <label for="answer-code">{t('offline.answerCode')}</label>
          <textarea id="answer-code" class="typed-code" readonly rows={6}>
            {answer.code}
          </textarea>
          <p>
            <a href={file} download={`keyward-answer-${answer.leaseId}.json`}>
              {t('offline.download')}
            </a>
          </p>
        </div>
      </div>
    </section>
  );
}

/** Characters of a lease id and of a machine's fingerprint on screen; the whole one on hover. */
const ID_CHARS = 14;

function MachinesTable(props: { context: ConsoleContext; area: Area; machines: OfflineMachine[] }) {
  const { context, area, machines } = props;
  const { t } = context;
  const operator = area === 'operator';
  if (machines.length === 0) return <Empty>{t('offline.empty')}</Empty>;
  return (
    <DataTable
      context={context}
      className="offline-machines"
      rows={machines}
      row={(m) => ({ 'data-lease': m.leaseId })}
      columns={[
        operator && { kind: 'text', header: t('offline.enterprise'), render: (m) => m.enterpriseName ?? '—' },
        operator && {
          kind: 'id',
          header: t('offline.lease'),
          value: (m) => m.leaseId,
          href: (m) => operatorLinks.lease(m.leaseId),
          max: ID_CHARS,
        },
        {
          kind: 'id',
          header: t('offline.asset'),
          value: (m) => m.assetNum,
          href: operator ? (m) => operatorLinks.asset(m.assetNum) : undefined,
        },
        { kind: 'text', header: t('offline.product'), render: (m) => m.productName ?? m.crmProductId ?? '—' },
        {
          kind: 'id',
          header: t('offline.machine'),
          className: 'machine',
          value: (m) => m.fingerprint,
          max: ID_CHARS,
        },
        { kind: 'time', header: t('offline.since'), value: (m) => m.createdAt },
        { kind: 'time', header: t('offline.until'), value: (m) => m.expiresAt },
        {
          kind: 'text',
          header: t('offline.how'),
          render: (m) => (
            <>
              {t(`offline.via.${m.via ?? 'online'}` as MessageKey)}
              {m.returnedAt !== null && ` (${t('offline.returnedAt')})`}
            </>
          ),
        },
      ]}
    />
  );
}

function OfflineMachinesPage(props: {
  context: ConsoleContext;
  area: Area;
  machines: OfflineMachine[];
  outcome: Outcome;
}) {
  const { context, area, machines, outcome } = props;
  const { t } = context;
  const requestInvalid = outcome.error?.field === 'request';
  const codeInvalid = outcome.error?.field === 'code';
  return (
    <Layout context={context} title={t('nav.offlineMachines')}>
      <Notice context={context} error={outcome.error} done={outcome.done} />
      <p>{t('offline.hint')}</p>
      {outcome.answer !== undefined && <AnswerView context={context} answer={outcome.answer} />}
      <Can context={context} permission="write">
        <div class="cards forms">
          <form method="post" action={`${base(area)}/activate`} enctype="multipart/form-data" class="card">
            <h2>{t('offline.activate')}</h2>
            <Csrf context={context} />
            <label for="field-request">{t('offline.request')}</label>
            <textarea
              id="field-request"
              name="request"
              class="typed-code"
              rows={5}
              maxLength={4096}
              aria-invalid={requestInvalid ? 'true' : undefined}
            >
              {outcome.request ?? ''}
            </textarea>
            <label for="field-request-file">{t('offline.requestFile')}</label>
            <input
              id="field-request-file"
              name="requestFile"
              type="file"
              accept=".json,.txt,application/json,text/plain"
            />
            {requestInvalid && <small class="field-error">{outcome.error?.message}</small>}
            <button type="submit">{t('offline.submit')}</button>
          </form>
          <form method="post" action={`${base(area)}/return`} class="card">
            <h2>{t('offline.return')}</h2>
            <Csrf context={context} />
            <p>{t('offline.returnHint')}</p>
            <label for="field-code">{t('offline.returnCode')}</label>
            <input
              id="field-code"
              name="code"
              class="typed-code"
              maxLength={512}
              required
              aria-invalid={codeInvalid ? 'true' : undefined}
            />
            {codeInvalid && <small class="field-error">{outcome.error?.message}</small>}
            <button type="submit" class="secondary">
              {t('offline.returnSubmit')}
            </button>
          </form>
        </div>
      </Can>
      <h2>{t('offline.listTitle')}</h2>
      <MachinesTable context={context} area={area} machines={machines} />
    </Layout>
  );
}

/** Who acts, as the service needs it: the administrator within his enterprise, or the operator. */
function actingAs(
  area: Area,
  request: FastifyRequest,
): { context: ConsoleContext; by: ActivationBy; enterpriseId?: number } {
  if (area === 'operator') {
    const context = operatorContext(request);
    return { context, by: { via: 'operator', actor: operatorActor(consoleRequest(request)) } };
  }
  const context = enterpriseContext(request);
  const { member } = context.session;
  return {
    context,
    enterpriseId: member.enterpriseId,
    by: {
      via: 'console',
      enterpriseId: member.enterpriseId,
      actor: { appId: null, operator: member.account, ...requestIdsOf(request) },
    },
  };
}

/** The request as posted: the text box, else the uploaded file's text. */
function postedRequest(request: FastifyRequest): string {
  const typed = formText(request, 'request').trim();
  if (typed !== '') return typed;
  const upload = (request.body as Record<string, unknown> | null | undefined)?.requestFile;
  return Buffer.isBuffer(upload) ? upload.toString('utf8').slice(0, 8192) : '';
}

function refusalOf(context: ConsoleContext, error: unknown, field: 'request' | 'code'): ConsoleError {
  if (!(error instanceof KeywardError)) throw error;
  return { code: error.code, message: context.t('offline.refused', { message: error.message }), field };
}

/**
 * GET /console/{area}/offline-machines, and its two forms: activate a machine by its request
 * (docs/activation.md), and free the seat of one that returned its lease. The administrator's
 * page holds to his enterprise; the operator's sees every enterprise. The same service as
 * `keyward leases activate` and the runtime's route.
 */
export function offlineMachinesRoutes(app: App, area: Area): void {
  const reads = area === 'operator' ? operatorMay('read') : ACCESS.enterpriseSession;
  const writes = area === 'operator' ? operatorMay('write') : ACCESS.enterpriseSession;
  const show = async (request: FastifyRequest, reply: FastifyReply, outcome: Outcome, status = 200) => {
    const { context, enterpriseId } = actingAs(area, request);
    const machines = await app.services.activation.offlineMachines(
      enterpriseId === undefined ? {} : { enterpriseId },
    );
    return sendPage(
      reply,
      <OfflineMachinesPage context={context} area={area} machines={machines} outcome={outcome} />,
      status,
    );
  };

  app.get(`/${area}/offline-machines`, { config: { access: reads } }, async (request, reply) =>
    show(request, reply, {}),
  );

  // A request file's text, pasted, spans lines.
  app.post(
    `/${area}/offline-machines/activate`,
    { config: { access: writes, multilineFields: ['request'] } },
    async (request, reply) => {
      const { context, by } = actingAs(area, request);
      const text = postedRequest(request);
      try {
        const answer = await app.services.activation.activate(text, by);
        const svg = await QRCode.toString(answer.code, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
        const qr = `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
        return show(request, reply, { answer: { ...answer, qr } });
      } catch (error) {
        return show(
          request,
          reply,
          { error: refusalOf(context, error, 'request'), request: text.slice(0, 4096) },
          400,
        );
      }
    },
  );

  app.post(`/${area}/offline-machines/return`, { config: { access: writes } }, async (request, reply) => {
    const { context, by } = actingAs(area, request);
    try {
      const returned = await app.services.activation.returnEarly(formText(request, 'code'), by);
      return show(request, reply, {
        done: context.t('offline.returned', { ...returned, asset: returned.assetNum }),
      });
    } catch (error) {
      return show(request, reply, { error: refusalOf(context, error, 'code') }, 400);
    }
  });
}
