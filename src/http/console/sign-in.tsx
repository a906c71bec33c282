import type { FastifyReply, FastifyRequest } from 'fastify';
import { requestIdsOf } from '../audit-actor.js';
import type { App } from '../app-type.js';
import { contextOf, type ConsoleContext } from './context.js';
import { formText } from './form-fields.js';
import type { MessageKey } from './i18n/index.js';
import { Layout } from './layout.js';
import { redirectTo, sendPage } from './render.js';
import { clearSessionCookie, sessionSecretOf, setSessionCookie } from './session.js';
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

export const NOTES: Record<string, MessageKey> = {
  expired: 'signIn.expired',
  'signed-out': 'signIn.signedOut',
  'code-ended': 'operators.codeEnded',
  'code-locked': 'operators.codeLocked',
  'password-changed': 'operators.passwordChangedSignIn',
};
export const noteOf = (request: FastifyRequest) =>
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
