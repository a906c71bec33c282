import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OperatorView } from '../../../domain/operators/operators.service.js';
import { OPERATOR_ROLES } from '../../../domain/operators/roles.js';
import { operatorMay } from '../../access/access.js';
import type { App } from '../../app-type.js';
import { mayChangeOperator } from '../can.js';
import { operatorContext, type ConsoleContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { ActionButton, Csrf, Field, Notice, SelectField, Time, type ConsoleError } from '../ui.js';

export const OPERATORS = '/console/operator/operators';
export const operatorHref = (id: string, act: string) => `${OPERATORS}/${encodeURIComponent(id)}/${act}`;

/** What the last action left to show: a one-time password is shown here once, never stored. */
export interface OperatorsShown {
  error?: ConsoleError;
  done?: string;
  password?: { email: string; password: string };
  status?: number;
}

function OperatorRow(props: { context: ConsoleContext; operator: OperatorView; self: string | null }) {
  const { context, operator, self } = props;
  const { t } = context;
  const active = operator.status === 'active';
  // Not on the operator's own row: their own role and status are another owner's to change.
  const changeable = mayChangeOperator(context, operator.id);
  return (
    <tr data-operator={operator.email}>
      <td>
        {operator.name}
        {operator.id === self && ` (${t('operators.you')})`}
        <br />
        <small>{operator.email}</small>
      </td>
      <td>
        {changeable ? (
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
        ) : (
          t(`operators.role.${operator.role}`)
        )}
      </td>
      <td>
        <span class={`badge ${active ? 'ok' : 'off'}`}>
          {t(active ? 'operators.active' : 'operators.disabled')}
        </span>
      </td>
      <td>
        <Time at={operator.lastSignInAt} />
      </td>
      <td class="actions">
        {changeable && (
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
      </td>
    </tr>
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
      <div class="table-wrap">
        <table class="operators">
          <thead>
            <tr>
              <th>{t('operators.name')}</th>
              <th>{t('operators.role')}</th>
              <th>{t('operators.status')}</th>
              <th>{t('operators.lastSignIn')}</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {operators.map((operator) => (
              <OperatorRow context={context} operator={operator} self={context.session.operator.id} />
            ))}
          </tbody>
        </table>
      </div>
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
