import type { FastifyReply, FastifyRequest } from 'fastify';
import { requestIdsOf } from '../audit-actor.js';
import type { App } from '../app-type.js';
import { contextOf, type ConsoleContext } from './context.js';
import { formText } from './form-fields.js';
import type { MessageKey } from './i18n/index.js';
import { Layout } from './layout.js';
import { redirectTo, sendPage } from './render.js';
import { clearSessionCookie, sessionSecretOf, setSessionCookie } from './session.js';
import { judgeAdminKey } from '../guards/admin-key-guard.js';
import { Field, Notice, type ConsoleError } from './ui.js';
import { ACCESS } from '../access/access.js';

function EnterpriseSignIn(props: {
  context: ConsoleContext;
  userName?: string;
  error?: ConsoleError;
  note?: MessageKey;
}) {
  const { context, error, note } = props;
  const { t } = context;
  return (
    <Layout context={context} title={t('signIn.enterprise')}>
      <Notice context={context} error={error} done={note === undefined ? undefined : t(note)} />
      <p>{t('signIn.enterpriseHint')}</p>
      <form method="post" action="/console/sign-in">
        <Field
          name="userName"
          label={t('signIn.userName')}
          value={props.userName}
          required
          autocomplete="username"
          maxLength={200}
          error={error}
        />
        <Field
          name="password"
          label={t('signIn.password')}
          type="password"
          required
          autocomplete="current-password"
          maxLength={200}
          error={error}
        />
        <button type="submit">{t('signIn.submit')}</button>
      </form>
      <p>
        <a href="/console/operator/sign-in">{t('signIn.operator')}</a>
      </p>
    </Layout>
  );
}

function OperatorSignIn(props: { context: ConsoleContext; error?: ConsoleError; note?: MessageKey }) {
  const { context, error, note } = props;
  const { t } = context;
  return (
    <Layout context={context} title={t('signIn.operator')}>
      <Notice context={context} error={error} done={note === undefined ? undefined : t(note)} />
      <p>{t('signIn.operatorHint')}</p>
      <form method="post" action="/console/operator/sign-in">
        <Field
          name="adminKey"
          label={t('signIn.adminKey')}
          type="password"
          required
          autocomplete="off"
          maxLength={200}
          error={error}
        />
        <button type="submit">{t('signIn.submit')}</button>
      </form>
      <p>
        <a href="/console/sign-in">{t('signIn.enterprise')}</a>
      </p>
    </Layout>
  );
}

const NOTES: Record<string, MessageKey> = { expired: 'signIn.expired', 'signed-out': 'signIn.signedOut' };
const noteOf = (request: FastifyRequest) =>
  NOTES[String((request.query as Record<string, unknown>).note ?? '')];

/** GET and POST /console/sign-in: an enterprise administrator, by account and password. */
export function enterpriseSignInRoutes(app: App): void {
  app.get('/sign-in', { config: { access: ACCESS.consolePublic } }, async (request, reply) =>
    sendPage(reply, <EnterpriseSignIn context={contextOf(request)} note={noteOf(request)} />),
  );
  app.post('/sign-in', { config: { access: ACCESS.consolePublic } }, async (request, reply) => {
    const context = contextOf(request);
    const userName = formText(request, 'userName').trim();
    const password = formText(request, 'password');
    const refuse = (error: ConsoleError, status = 200) =>
      sendPage(reply, <EnterpriseSignIn context={context} userName={userName} error={error} />, status);
    if (userName === '') return refuse({ message: context.t('signIn.refused'), field: 'userName' });
    if (password === '') return refuse({ message: context.t('signIn.refused'), field: 'password' });
    const outcome = await app.services.consoleSessions.signInEnterprise(userName, password, {
      ip: request.ip,
      ...requestIdsOf(request),
    });
    switch (outcome.status) {
      case 'ok':
        setSessionCookie(request, reply, app.config, outcome.secret);
        return redirectTo(reply, '/console/enterprise');
      case 'limited':
        reply.header('retry-after', String(outcome.retryAfterSeconds));
        return refuse({ message: context.t('signIn.limited', { seconds: outcome.retryAfterSeconds }) }, 429);
      case 'refused':
        return refuse({ message: context.t('signIn.refused'), field: 'password' });
      case 'locked':
        return refuse({ message: context.t('signIn.locked') });
      case 'not_admin':
        return refuse({ message: context.t('signIn.notAdmin') }, 403);
      case 'unavailable':
        return refuse({ message: context.t('signIn.unavailable') }, 503);
    }
  });
}

/** GET and POST /console/operator/sign-in: the operator, by the admin key. */
export function operatorSignInRoutes(app: App, adminKey: string): void {
  app.get('/operator/sign-in', { config: { access: ACCESS.operatorSignIn } }, async (request, reply) =>
    sendPage(reply, <OperatorSignIn context={contextOf(request)} note={noteOf(request)} />),
  );
  app.post('/operator/sign-in', { config: { access: ACCESS.operatorSignIn } }, async (request, reply) => {
    const context = contextOf(request);
    // ADMIN_KEY_ENABLED=0: the key opens nothing, here as on the admin API; a guess is not counted.
    const verdict = app.config.adminKeyEnabled
      ? await judgeAdminKey(app.services, request, formText(request, 'adminKey'), adminKey)
      : ({ status: 'wrong' } as const);
    if (verdict.status === 'limited') {
      reply.header('retry-after', String(verdict.retryAfterSeconds));
      const error = { message: context.t('signIn.limited', { seconds: verdict.retryAfterSeconds }) };
      return sendPage(reply, <OperatorSignIn context={context} error={error} />, 429);
    }
    if (verdict.status === 'wrong') {
      const error = { message: context.t('signIn.wrongKey'), field: 'adminKey' };
      return sendPage(reply, <OperatorSignIn context={context} error={error} />, 401);
    }
    const secret = await app.services.consoleSessions.openOperator(requestIdsOf(request));
    setSessionCookie(request, reply, app.config, secret);
    return redirectTo(reply, '/console/operator');
  });
}

/** POST /console/sign-out: ends the session (and its user token) and forgets the cookie. */
export function signOutRoute(app: App): void {
  app.post(
    '/sign-out',
    { config: { access: ACCESS.consoleSession } },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const { session } = contextOf(request);
      const secret = sessionSecretOf(request);
      const area = session?.kind === 'operator' ? '/console/operator/sign-in' : '/console/sign-in';
      if (session !== undefined && secret !== undefined) {
        await app.services.consoleSessions.close(secret, session, requestIdsOf(request));
      }
      clearSessionCookie(request, reply, app.config);
      return redirectTo(reply, `${area}?note=signed-out`);
    },
  );
}
