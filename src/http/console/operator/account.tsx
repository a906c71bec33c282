import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  OperatorNotFoundError,
  type OperatorTokenView,
} from '../../../domain/operators/operators.service.js';
import {
  isOperatorRole,
  OPERATOR_ROLES,
  permissionsOf,
  type OperatorRole,
} from '../../../domain/operators/roles.js';
import type { ConsoleOperator } from '../../../domain/console/console-sessions.service.js';
import { operatorMay } from '../../access/access.js';
import type { App } from '../../app-type.js';
import { operatorContext, type ConsoleContext } from '../context.js';
import { sendErrorPage } from '../error-page.js';
import { formText } from '../form-fields.js';
import { Layout } from '../layout.js';
import { redirectTo, sendPage } from '../render.js';
import { clearSessionCookie } from '../session.js';
import {
  ActionButton,
  Csrf,
  DataTable,
  Empty,
  Field,
  Notice,
  SelectField,
  type ConsoleError,
} from '../ui.js';
import { consoleRequest } from './form.js';
import { operatorRefusal } from './operator-errors.js';

export const ACCOUNT = '/console/operator/account';

const DONE = {
  'password-changed': 'operators.passwordChanged',
  'two-factor-on': 'operators.twoFactorOnDone',
  'two-factor-off': 'operators.twoFactorOffDone',
  revoked: 'operators.tokenRevoked',
} as const;

/** How the session was opened: a password names the second factor that followed it, if any. */
function signedInWith(operator: ConsoleOperator) {
  if (operator.method !== 'password' || operator.secondFactor === null) {
    return `operators.method.${operator.method}` as const;
  }
  return `operators.method.password-${operator.secondFactor}` as const;
}

type Shown = { error?: ConsoleError; created?: { token: string; name: string }; status?: number };

/** The roles a token of `role` may have: its own and every narrower one. */
const rolesWithin = (role: OperatorRole) => {
  const held = new Set(permissionsOf(role));
  return OPERATOR_ROLES.filter((r) => permissionsOf(r).every((p) => held.has(p)));
};

function TokensTable(props: { context: ConsoleContext; tokens: OperatorTokenView[] }) {
  const { context, tokens } = props;
  const { t } = context;
  if (tokens.length === 0) return <Empty>{t('operators.noTokens')}</Empty>;
  return (
    <DataTable
      context={context}
      className="tokens"
      rows={tokens}
      columns={[
        { kind: 'text', header: t('operators.tokenName'), render: (token) => token.name },
        { kind: 'text', header: t('operators.role'), render: (token) => t(`operators.role.${token.role}`) },
        { kind: 'time', header: t('common.created'), value: (token) => token.createdAt },
        { kind: 'time', header: t('operators.expires'), value: (token) => token.expiresAt },
        { kind: 'time', header: t('operators.lastUsed'), value: (token) => token.lastUsedAt },
        {
          kind: 'text',
          header: '',
          className: 'actions',
          render: (token) =>
            token.revokedAt === null ? (
              <ActionButton
                context={context}
                action={`${ACCOUNT}/tokens/${encodeURIComponent(token.id)}/revoke`}
                label={t('operators.revoke')}
                confirm={t('operators.revokeConfirm', { name: token.name })}
                danger
              />
            ) : (
              <span class="badge">{t('operators.revoked')}</span>
            ),
        },
      ]}
    />
  );
}

async function showAccount(app: App, request: FastifyRequest, reply: FastifyReply, shown: Shown = {}) {
  const context = operatorContext(request);
  const { t } = context;
  const { operator } = context.session;
  const doneKey = DONE[String((request.query as Record<string, unknown>).done ?? '') as keyof typeof DONE];
  const title = t('operators.account');
  if (operator.id === null) {
    return sendPage(
      reply,
      <Layout context={context} title={title}>
        <p>{t('operators.keyHasNoAccount')}</p>
        <p>
          <a href="/console/operator/operators">{t('nav.operators')}</a>
        </p>
      </Layout>,
    );
  }
  const [twoFactor, tokens] = await Promise.all([
    app.services.twoFactor.status(operator.id),
    app.services.operators.tokens(operator.id),
  ]);
  return sendPage(
    reply,
    <Layout context={context} title={title}>
      <Notice context={context} error={shown.error} done={doneKey === undefined ? undefined : t(doneKey)} />
      <dl class="facts">
        <dt>{t('operators.name')}</dt>
        <dd>{operator.name}</dd>
        <dt>{t('operators.email')}</dt>
        <dd>{operator.email}</dd>
        <dt>{t('operators.role')}</dt>
        <dd>{t(`operators.role.${operator.role}`)}</dd>
        <dt>{t('operators.signedInWith')}</dt>
        <dd>{t(signedInWith(operator))}</dd>
      </dl>
      <section>
        <h2>{t('operators.twoFactor')}</h2>
        {twoFactor.enabled ? (
          <>
            <p>{t('operators.twoFactorIsOn', { left: twoFactor.recoveryCodesLeft })}</p>
            {!twoFactor.required && (
              <form method="post" action={`${ACCOUNT}/two-factor/disable`} class="inline-form">
                <Csrf context={context} />
                <Field
                  name="code"
                  label={t('operators.code')}
                  required
                  autocomplete="one-time-code"
                  maxLength={20}
                  error={shown.error}
                />
                <button type="submit" class="danger">
                  {t('operators.twoFactorTurnOff')}
                </button>
              </form>
            )}
          </>
        ) : (
          <p>
            {t('operators.twoFactorIsOff')}{' '}
            <a href={`${ACCOUNT}/two-factor`}>{t('operators.twoFactorTurnOn')}</a>
          </p>
        )}
      </section>
      <section>
        <h2>{t('operators.password')}</h2>
        <p>
          <a href={`${ACCOUNT}/password`}>{t('operators.changePassword')}</a>
        </p>
      </section>
      <section>
        <h2>{t('operators.sessions')}</h2>
        <p>{t('operators.sessionsHint')}</p>
        <ActionButton
          context={context}
          action={`${ACCOUNT}/sign-out-everywhere`}
          label={t('operators.signOutEverywhere')}
          danger
        />
      </section>
      <section>
        <h2>{t('operators.tokens')}</h2>
        <p>{t('operators.tokensHint')}</p>
        {shown.created !== undefined && (
          <div class="notice done" role="status">
            <p>{t('operators.tokenCreated', { name: shown.created.name })}</p>
            <pre class="secret">{shown.created.token}</pre>
          </div>
        )}
        <TokensTable context={context} tokens={tokens} />
        <form method="post" action={`${ACCOUNT}/tokens`}>
          <Csrf context={context} />
          <Field name="name" label={t('operators.tokenName')} required maxLength={100} error={shown.error} />
          <SelectField
            name="role"
            label={t('operators.role')}
            options={rolesWithin(operator.role).map((role) => [role, t(`operators.role.${role}`)] as const)}
            selected={operator.role}
            error={shown.error}
          />
          <Field
            name="days"
            label={t('operators.days')}
            type="number"
            value={90}
            required
            error={shown.error}
          />
          <button type="submit">{t('operators.createToken')}</button>
        </form>
      </section>
    </Layout>,
    shown.status ?? 200,
  );
}

/**
 * GET /console/operator/account: the operator's own account: the second factor, the password,
 * and personal API tokens (created shown once, revoked here), through the same services as
 * `keyward operator token` and the admin API.
 */
export function accountRoutes(app: App): void {
  const self = { config: { access: operatorMay('self') } };
  app.get('/operator/account', self, async (request, reply) => showAccount(app, request, reply));
  app.post('/operator/account/tokens', self, async (request, reply) => {
    const { t, session } = operatorContext(request);
    if (session.operator.id === null) return sendErrorPage(request, reply, 404, 'error.notFound');
    const role = formText(request, 'role');
    // The form always sends one of its roles: anything else is refused, never read as the widest.
    if (!isOperatorRole(role)) {
      const error = { message: t('operators.refusal.roleUnknown'), field: 'role' };
      return showAccount(app, request, reply, { error, status: 400 });
    }
    const days = Number(formText(request, 'days'));
    try {
      const created = await app.services.operators.createToken(
        session.operator.id,
        { name: formText(request, 'name'), role, days },
        // Signed in in person: bounded by the operator's role now, not by this session's life.
        { roles: [session.operator.role], tokenId: null },
        consoleRequest(request),
      );
      return await showAccount(app, request, reply, {
        created: { token: created.token, name: created.view.name },
      });
    } catch (error) {
      return showAccount(app, request, reply, { error: operatorRefusal(t, error), status: 400 });
    }
  });
  app.post<{ Params: { tokenId: string } }>(
    '/operator/account/tokens/:tokenId/revoke',
    self,
    async (request, reply) => {
      const { session } = operatorContext(request);
      if (session.operator.id === null) return sendErrorPage(request, reply, 404, 'error.notFound');
      try {
        await app.services.operators.revokeToken(
          request.params.tokenId,
          session.operator.id,
          consoleRequest(request),
        );
      } catch (error) {
        // Another operator's token, or none: answered as a page that does not exist.
        if (error instanceof OperatorNotFoundError)
          return sendErrorPage(request, reply, 404, 'error.notFound');
        throw error;
      }
      return redirectTo(reply, `${ACCOUNT}?done=revoked`);
    },
  );
  // Every console session of the operator ends, this one too; tokens stay.
  app.post('/operator/account/sign-out-everywhere', self, async (request, reply) => {
    const { session } = operatorContext(request);
    if (session.operator.id === null) return sendErrorPage(request, reply, 404, 'error.notFound');
    await app.services.operators.signOutEverywhere(session.operator.id, consoleRequest(request));
    clearSessionCookie(request, reply, app.config);
    return redirectTo(reply, '/console/operator/sign-in?note=signed-out');
  });
  app.post('/operator/account/two-factor/disable', self, async (request, reply) => {
    const { t, session } = operatorContext(request);
    if (session.operator.id === null) return sendErrorPage(request, reply, 404, 'error.notFound');
    try {
      await app.services.twoFactor.disable(
        session.operator.id,
        formText(request, 'code'),
        consoleRequest(request),
      );
    } catch (error) {
      return showAccount(app, request, reply, { error: operatorRefusal(t, error), status: 400 });
    }
    return redirectTo(reply, `${ACCOUNT}?done=two-factor-off`);
  });
}
