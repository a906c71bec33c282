import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OperatorView } from '../../../domain/operators/operators.service.js';
import { OPERATOR_ROLES } from '../../../domain/operators/roles.js';
import { operatorMay } from '../../access/access.js';
import type { App } from '../../app-type.js';
import { mayChangeOperator } from '../can.js';
import { operatorContext, type ConsoleContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { ActionButton, Csrf, DataTable, Field, Notice, SelectField, type ConsoleError } from '../ui.js';
import { operatorLinks } from './links.js';

export const OPERATORS = '/console/operator/operators';
export const operatorHref = (id: string, act: string) => `${OPERATORS}/${encodeURIComponent(id)}/${act}`;

/** What the last action left to show: a one-time password is shown here once, never stored. */
export interface OperatorsShown {
  error?: ConsoleError;
  done?: string;
  password?: { email: string; password: string };
  status?: number;
}

/** An operator's role: a choice that applies at once, where it may be changed. */
function RoleCell(props: { context: ConsoleContext; operator: OperatorView }) {
  const { context, operator } = props;
  const { t } = context;
  if (!mayChangeOperator(context, operator.id)) return <>{t(`operators.role.${operator.role}`)}</>;
  return (
    <form method="post" action={operatorHref(operator.id, 'role')} class="inline">
      <Csrf context={context} />
      <select name="role" aria-label={t('operators.role')} data-autosubmit>
        {OPERATOR_ROLES.map((role) => (
          <option value={role} selected={role === operator.role}>
            {t(`operators.role.${role}`)}
          </option>
        ))}
      </select>
      <noscript>
        <button type="submit">OK</button>
      </noscript>
    </form>
  );
}

/** Disable or enable (not on the operator's own row), reset the password or the second factor. */
function OperatorActions(props: { context: ConsoleContext; operator: OperatorView }) {
  const { context, operator } = props;
  const { t } = context;
  const active = operator.status === 'active';
  return (
    <>
      {mayChangeOperator(context, operator.id) && (
        <ActionButton
          context={context}
          action={operatorHref(operator.id, active ? 'disable' : 'enable')}
          label={t(active ? 'operators.disable' : 'operators.enable')}
          {...(active
            ? { confirm: t('operators.disableConfirm', { email: operator.email }), danger: true }
            : {})}
        />
      )}
      <ActionButton
        context={context}
        action={operatorHref(operator.id, 'reset')}
        label={t('operators.resetPassword')}
        confirm={t('operators.resetConfirm', { email: operator.email })}
      />
      <ActionButton
        context={context}
        action={operatorHref(operator.id, 'reset-two-factor')}
        label={t('operators.resetTwoFactor')}
        confirm={t('operators.resetTwoFactorConfirm', { email: operator.email })}
      />
    </>
  );
}

function OperatorsTable(props: { context: ConsoleContext; operators: OperatorView[]; self: string | null }) {
  const { context, self } = props;
  const { t } = context;
  return (
    <DataTable
      context={context}
      className="operators"
      rows={props.operators}
      row={(o) => ({ 'data-operator': o.email })}
      columns={[
        {
          kind: 'text',
          header: t('operators.name'),
          className: 'name',
          render: (o) => (
            <>
              <a href={operatorLinks.operator(o.id)}>{o.name}</a>
              {o.id === self && ` (${t('operators.you')})`}
            </>
          ),
          sub: (o) => o.email,
        },
        {
          kind: 'text',
          header: t('operators.role'),
          render: (o) => <RoleCell context={context} operator={o} />,
        },
        {
          kind: 'text',
          header: t('operators.status'),
          className: 'status',
          render: (o) => (
            <span class={`badge ${o.status === 'active' ? 'ok' : 'off'}`}>
              {t(o.status === 'active' ? 'operators.active' : 'operators.disabled')}
            </span>
          ),
        },
        { kind: 'time', header: t('operators.lastSignIn'), value: (o) => o.lastSignInAt },
        {
          kind: 'text',
          header: '',
          className: 'actions',
          render: (o) => <OperatorActions context={context} operator={o} />,
        },
      ]}
    />
  );
}

/** The operators page, with what the last action left to show. */
export async function showOperators(
  app: App,
  request: FastifyRequest,
  reply: FastifyReply,
  shown: OperatorsShown = {},
): Promise<FastifyReply> {
  const context = operatorContext(request);
  const { t } = context;
  const [operators, required] = await Promise.all([
    app.services.operators.list(),
    app.services.twoFactor.required(),
  ]);
  return sendPage(
    reply,
    <Layout context={context} title={t('nav.operators')}>
      <Notice context={context} error={shown.error} done={shown.done} />
      {shown.password !== undefined && (
        <div class="notice done" role="status">
          <p>{t('operators.oneTimePassword', { email: shown.password.email })}</p>
          <pre class="secret">{shown.password.password}</pre>
        </div>
      )}
      <OperatorsTable context={context} operators={operators} self={context.session.operator.id} />
      <section>
        <h2>{t('operators.add')}</h2>
        <form method="post" action={OPERATORS}>
          <Csrf context={context} />
          <Field name="name" label={t('operators.name')} required maxLength={100} error={shown.error} />
          <Field
            name="email"
            label={t('operators.email')}
            type="email"
            required
            maxLength={254}
            error={shown.error}
          />
          <SelectField
            name="role"
            label={t('operators.role')}
            options={OPERATOR_ROLES.map((role) => [role, t(`operators.role.${role}`)] as const)}
            selected="support"
            error={shown.error}
          />
          <button type="submit">{t('operators.add')}</button>
        </form>
      </section>
      <section>
        <h2>{t('operators.twoFactor')}</h2>
        <p>{t(required ? 'operators.requiredOn' : 'operators.requiredOff')}</p>
        <ActionButton
          context={context}
          action={`${OPERATORS}/two-factor-rule`}
          label={t(required ? 'operators.requireOff' : 'operators.requireOn')}
          fields={{ required: required ? 'off' : 'on' }}
        />
      </section>
    </Layout>,
    shown.status ?? 200,
  );
}

/** GET /console/operator/operators: the platform's operators, for an owner. */
export function operatorsRoute(app: App): void {
  app.get('/operator/operators', { config: { access: operatorMay('operators') } }, async (request, reply) =>
    showOperators(app, request, reply),
  );
}
