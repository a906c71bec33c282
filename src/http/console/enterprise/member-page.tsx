import type { FastifyReply, FastifyRequest } from 'fastify';
import type { MemberRecord } from '../../../domain/members/members.repository.js';
import type { App } from '../../app-type.js';
import { sendErrorPage } from '../error-page.js';
import { enterpriseContext, type ConsoleContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { ActionButton, Csrf, DataTable, Empty, Field, Notice, type ConsoleError } from '../ui.js';
import { enterpriseLinks } from '../operator/links.js';
import { enterpriseAssets, type EnterpriseAssets } from './enterprise-assets.js';
import { doneOf, memberPath } from './forms.js';
import { ACCESS } from '../../access/access.js';

/** Free asset numbers offered as suggestions on the assign field; the field takes any number. */
const SUGGESTIONS = 100;

interface MemberView {
  member: MemberRecord;
  holdings: EnterpriseAssets;
}

/** The member of this enterprise, or undefined: another enterprise's id finds nothing. */
export async function findMember(app: App, request: FastifyRequest, globalId: string) {
  const enterpriseId = enterpriseContext(request).session.member.enterpriseId;
  return (await app.services.members.findByGlobalIds(enterpriseId, [globalId])).get(globalId);
}

function ProfileForm(props: { context: ConsoleContext; member: MemberRecord; error?: ConsoleError }) {
  const { context, member: m, error } = props;
  const { t } = context;
  return (
    <section id="profile" class="panel">
      <h2>{t('member.profile')}</h2>
      <form method="post" action={`${memberPath(m.globalId)}/edit`}>
        <Csrf context={context} />
        <Field
          name="name"
          label={t('member.name')}
          value={m.name ?? ''}
          required
          maxLength={30}
          error={error}
        />
        <Field
          name="departmentId"
          label={t('member.departmentId')}
          type="number"
          value={m.departmentId ?? ''}
          error={error}
        />
        <Field
          name="passwordMobile"
          label={t('member.mobile')}
          type="tel"
          value={m.passwordMobile ?? ''}
          error={error}
        />
        <Field
          name="remark"
          label={t('member.remark')}
          value={m.remark ?? ''}
          maxLength={200}
          error={error}
        />
        <button type="submit">{t('common.save')}</button>
      </form>
    </section>
  );
}

function PasswordForm(props: { context: ConsoleContext; member: MemberRecord; error?: ConsoleError }) {
  const { context, member: m, error } = props;
  const { t } = context;
  return (
    <section id="password" class="panel">
      <h2>{t('member.resetPassword')}</h2>
      <p>{t('member.resetHint')}</p>
      <form method="post" action={`${memberPath(m.globalId)}/password`}>
        <Csrf context={context} />
        <Field
          name="password"
          label={t('member.newPassword')}
          type="password"
          required
          maxLength={16}
          autocomplete="new-password"
          error={error}
        />
        <button type="submit">{t('member.resetPassword')}</button>
      </form>
    </section>
  );
}

function AssetsSection(props: { context: ConsoleContext; view: MemberView; error?: ConsoleError }) {
  const { context, view, error } = props;
  const { t } = context;
  const id = view.member.globalId;
  const { assets, lockNums } = view.holdings;
  const held = assets.filter((a) => a.cloudAccountGlobalId === id);
  const free = assets.filter((a) => a.cloudAccountGlobalId === null && !lockNums.has(a.assetNum));
  return (
    <section id="assets" class="panel wide">
      <h2>{t('member.assetsHeld')}</h2>
      {held.length === 0 ? (
        <Empty>{t('member.noAssets')}</Empty>
      ) : (
        <DataTable
          context={context}
          bare
          rows={held}
          row={(a) => ({ 'data-asset': a.assetNum })}
          columns={[
            {
              kind: 'id',
              header: t('asset.number'),
              value: (a) => a.assetNum,
              href: (a) => enterpriseLinks.asset(a.assetId),
            },
            {
              kind: 'text',
              header: t('asset.lent'),
              render: (a) => (a.borrowedFlag ? t('common.yes') : t('common.no')),
            },
            {
              kind: 'text',
              header: t('common.actions'),
              className: 'actions',
              render: (a) => (
                <ActionButton
                  context={context}
                  action={`${memberPath(id)}/unassign`}
                  label={t('asset.unassign')}
                  confirm={t('asset.unassignConfirm', { asset: a.assetNum })}
                  fields={{ assetNum: a.assetNum }}
                />
              ),
            },
          ]}
        />
      )}
      <form method="post" action={`${memberPath(id)}/assign`} class="filters">
        <Csrf context={context} />
        <Field
          name="assetNum"
          label={t('asset.assignNumber')}
          required
          maxLength={64}
          error={error}
          placeholder={free[0]?.assetNum ?? ''}
        />
        <button type="submit">{t('asset.assign')}</button>
      </form>
      {free.length === 0 ? (
        <Empty>{t('asset.noneFree')}</Empty>
      ) : (
        <p class="hint">
          {t('asset.freeList')}{' '}
          {free
            .slice(0, SUGGESTIONS)
            .map((a) => a.assetNum)
            .join(', ')}
          {free.length > SUGGESTIONS && ' …'}
        </p>
      )}
    </section>
  );
}

function LendingSection(props: { context: ConsoleContext; view: MemberView; error?: ConsoleError }) {
  const { context, view, error } = props;
  const { t } = context;
  const id = view.member.globalId;
  const { assets, locks, lockNums } = view.holdings;
  const heldLock = locks.find((l) => l.cloudAccountGlobalId === id);
  const usable = locks.filter((l) => !l.borrowedFlag || l.cloudAccountGlobalId === id);
  const lendable = assets.filter(
    (a) => a.cloudAccountGlobalId === id && !a.borrowedFlag && !lockNums.has(a.assetNum),
  );
  const lockError = error?.field === 'lock' || error?.field === 'assetIds' ? error : undefined;
  return (
    <section id="lending" class="panel">
      <h2>{t('lent.title')}</h2>
      {heldLock === undefined ? (
        <p>{t('lent.holdsNone')}</p>
      ) : (
        <p>
          {t('lent.holds', { lock: heldLock.assetNum })}{' '}
          <ActionButton
            context={context}
            action={`${memberPath(id)}/return`}
            label={t('lent.return')}
            confirm={t('lent.returnConfirm', { lock: heldLock.assetNum })}
            fields={{ lock: heldLock.assetNum }}
          />
        </p>
      )}
      {usable.length === 0 || lendable.length === 0 ? (
        <Empty>{usable.length === 0 ? t('lent.noFreeLock') : t('lent.nothingToLend')}</Empty>
      ) : (
        <form method="post" action={`${memberPath(id)}/lend`}>
          <Csrf context={context} />
          <p class="field">
            <label for="field-lock">{t('lent.lock')}</label>
            <select
              id="field-lock"
              name="lock"
              aria-invalid={lockError?.field === 'lock' ? 'true' : undefined}
            >
              {usable.map((l) => (
                <option value={l.assetNum}>{l.assetNum}</option>
              ))}
            </select>
            {lockError?.field === 'lock' && <FieldError error={lockError} />}
          </p>
          <fieldset>
            <legend>{t('lent.assets')}</legend>
            {lendable.map((a) => (
              <label class="check">
                {/* Nothing ticked: the administrator chooses what goes on the lock. */}
                <input type="checkbox" name="assetIds" value={a.assetId} /> {a.assetNum}
              </label>
            ))}
            {lockError?.field === 'assetIds' && <FieldError error={lockError} />}
          </fieldset>
          <button type="submit">{t('lent.lend')}</button>
        </form>
      )}
    </section>
  );
}

/** The sentence only: the notice at the top of the page keeps the code (ui.tsx). */
function FieldError(props: { error: ConsoleError }) {
  const { error } = props;
  return (
    <small class="field-error" data-code={error.code}>
      {error.message}
    </small>
  );
}

function MemberPage(props: {
  context: ConsoleContext;
  view: MemberView;
  error?: ConsoleError;
  done?: string;
}) {
  const { context, view, error, done } = props;
  const { t } = context;
  const m = view.member;
  return (
    <Layout context={context} title={m.account}>
      <Notice context={context} error={error} done={done} />
      <p>
        <a href="/console/enterprise">{t('member.back')}</a>
      </p>
      {/* Sections a person can scan: their names first, each a link to its panel. */}
      <nav class="sections" aria-label={m.account}>
        <a href="#profile">{t('member.profile')}</a>
        <a href="#assets">{t('member.assetsHeld')}</a>
        <a href="#lending">{t('lent.title')}</a>
        <a href="#password">{t('member.resetPassword')}</a>
        {m.identity !== 'admin' && <a href="#delete">{t('member.delete')}</a>}
      </nav>
      <div class="panels">
        <ProfileForm context={context} member={m} error={error} />
        <PasswordForm context={context} member={m} error={error} />
        <AssetsSection context={context} view={view} error={error} />
        <LendingSection context={context} view={view} error={error} />
        {m.identity === 'admin' ? (
          <p class="hint">{t('member.adminNoDelete')}</p>
        ) : (
          <section id="delete" class="panel">
            <h2>{t('member.delete')}</h2>
            <p>{t('member.deleteHint')}</p>
            <ActionButton
              context={context}
              action={`${memberPath(m.globalId)}/delete`}
              label={t('member.delete')}
              confirm={t('member.deleteConfirm', { account: m.account })}
              danger
            />
          </section>
        )}
      </div>
    </Layout>
  );
}

/** The employee's page, with the outcome of the last action; 404 for anyone not of this enterprise. */
export async function sendMemberPage(
  app: App,
  request: FastifyRequest,
  reply: FastifyReply,
  globalId: string,
  outcome: { error?: ConsoleError; done?: string; status?: number } = {},
) {
  const context = enterpriseContext(request);
  const member = await findMember(app, request, globalId);
  if (member === undefined) return sendErrorPage(request, reply, 404, 'error.notFound');
  const holdings = await enterpriseAssets(app.services, context.session.member.enterpriseId);
  return sendPage(
    reply,
    <MemberPage context={context} view={{ member, holdings }} error={outcome.error} done={outcome.done} />,
    outcome.status ?? 200,
  );
}

/** GET /console/enterprise/members/:memberGlobalId */
export function memberPageRoute(app: App): void {
  app.get<{ Params: { memberGlobalId: string } }>(
    '/enterprise/members/:memberGlobalId',
    { config: { access: ACCESS.enterpriseSession } },
    async (request, reply) => {
      const done = doneOf(request);
      const { t } = enterpriseContext(request);
      return sendMemberPage(app, request, reply, request.params.memberGlobalId, {
        ...(done === undefined ? {} : { done: t(done) }),
      });
    },
  );
}
