import type { FastifyRequest } from 'fastify';
import { requestIdsOf } from '../audit-actor.js';
import { ACCESS, operatorSignInStep } from '../access/access.js';
import type { App } from '../app-type.js';
import { judgeAdminKey } from '../guards/admin-key-guard.js';
import { contextOf, operatorContext, type ConsoleContext } from './context.js';
import { formText } from './form-fields.js';
import type { MessageKey } from './i18n/index.js';
import { Layout } from './layout.js';
import { redirectTo, sendPage } from './render.js';
import { clearSessionCookie, sessionSecretOf, setSessionCookie } from './session.js';
import { noteOf } from './sign-in.js';
import { Csrf, Field, Notice, type ConsoleError } from './ui.js';

const OPERATOR_HOME = '/console/operator';
/** The longest code the field takes: a recovery code typed with spaces fits. */
const CODE_MAX = 20;
const SIGN_IN = '/console/operator/sign-in';

function OperatorSignIn(props: {
  context: ConsoleContext;
  email?: string;
  error?: ConsoleError;
  note?: MessageKey | undefined;
  /** The admin key's form: open when no owner exists yet, folded once one does, gone when off. */
  adminKey: 'open' | 'folded' | 'off';
  /** Single sign-on is configured (OIDC_*): its link is shown. */
  sso?: boolean;
}) {
  const { context, error, note, adminKey } = props;
  const { t } = context;
  const keyForm = (
    <form method="post" action={SIGN_IN}>
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
  );
  return (
    <Layout context={context} title={t('signIn.operator')}>
      <Notice context={context} error={error} done={note === undefined ? undefined : t(note)} />
      <p>{t('operators.signInHint')}</p>
      <form method="post" action={SIGN_IN}>
        <Field
          name="email"
          label={t('operators.email')}
          type="email"
          value={props.email}
          required
          autocomplete="username"
          maxLength={254}
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
      {props.sso === true && (
        <p class="sso">
          <a href="/console/operator/sso">{t('sso.signIn')}</a>
        </p>
      )}
      {adminKey === 'open' && (
        <section class="admin-key">
          <p>{t('signIn.operatorHint')}</p>
          {keyForm}
        </section>
      )}
      {adminKey === 'folded' && (
        <details class="admin-key">
          <summary>{t('operators.adminKeyFallback')}</summary>
          {keyForm}
        </details>
      )}
      <p>
        <a href="/console/sign-in">{t('signIn.enterprise')}</a>
      </p>
    </Layout>
  );
}

function SecondFactor(props: { context: ConsoleContext; error?: ConsoleError }) {
  const { context, error } = props;
  const { t } = context;
  return (
    <Layout context={context} title={t('operators.codeTitle')}>
      <Notice context={context} error={error} />
      <p>{t('operators.codeHint')}</p>
      <form method="post" action="/console/operator/sign-in/code">
        <Csrf context={context} />
        <Field
          name="code"
          label={t('operators.code')}
          required
          autocomplete="one-time-code"
          maxLength={CODE_MAX}
          error={error}
        />
        <button type="submit">{t('operators.verify')}</button>
      </form>
    </Layout>
  );
}

async function adminKeyForm(app: App): Promise<'open' | 'folded' | 'off'> {
  if (!app.config.adminKeyEnabled) return 'off';
  return (await app.services.operators.hasActiveOwner()) ? 'folded' : 'open';
}

/**
 * GET and POST /console/operator/sign-in: a named operator by email and password (then the
 * second factor, when enrolled), or the admin key, the fallback for the first start and
 * emergencies.
 */
export function operatorSignInRoutes(app: App, adminKey: string): void {
  app.get('/operator/sign-in', { config: { access: ACCESS.operatorSignIn } }, async (request, reply) =>
    sendPage(
      reply,
      <OperatorSignIn
        context={contextOf(request)}
        note={noteOf(request)}
        adminKey={await adminKeyForm(app)}
        sso={app.config.sso !== undefined}
      />,
    ),
  );
  app.post('/operator/sign-in', { config: { access: ACCESS.operatorSignIn } }, async (request, reply) => {
    const context = contextOf(request);
    const form = await adminKeyForm(app);
    const refuse = (error: ConsoleError, status: number, email?: string) =>
      sendPage(
        reply,
        <OperatorSignIn
          context={context}
          error={error}
          adminKey={form}
          {...(email === undefined ? {} : { email })}
        />,
        status,
      );
    if (hasField(request, 'adminKey')) {
      // ADMIN_KEY_ENABLED=0: the key opens nothing, here as on the admin API; a guess is not counted.
      const verdict = app.config.adminKeyEnabled
        ? await judgeAdminKey(app.services, request, formText(request, 'adminKey'), adminKey)
        : ({ status: 'wrong' } as const);
      if (verdict.status === 'limited') {
        reply.header('retry-after', String(verdict.retryAfterSeconds));
        return refuse({ message: context.t('signIn.limited', { seconds: verdict.retryAfterSeconds }) }, 429);
      }
      if (verdict.status === 'wrong')
        return refuse({ message: context.t('signIn.wrongKey'), field: 'adminKey' }, 401);
      const secret = await app.services.consoleSessions.openOperator(requestIdsOf(request));
      setSessionCookie(request, reply, app.config, secret);
      return redirectTo(reply, OPERATOR_HOME);
    }
    const email = formText(request, 'email').trim();
    const password = formText(request, 'password');
    if (email === '') return refuse({ message: context.t('operators.refused'), field: 'email' }, 200, email);
    if (password === '')
      return refuse({ message: context.t('operators.refused'), field: 'password' }, 200, email);
    const outcome = await app.services.operatorSignIn.signIn(email, password, {
      ip: request.ip,
      ...requestIdsOf(request),
    });
    switch (outcome.status) {
      case 'ok':
        setSessionCookie(request, reply, app.config, outcome.secret);
        // The gate sends a session that still owes a step (a new password, an enrolment) on.
        return redirectTo(reply, outcome.secondFactor ? '/console/operator/sign-in/code' : OPERATOR_HOME);
      case 'limited':
        reply.header('retry-after', String(outcome.retryAfterSeconds));
        return refuse(
          { message: context.t('signIn.limited', { seconds: outcome.retryAfterSeconds }) },
          429,
          email,
        );
      case 'locked':
        return refuse({ message: context.t('signIn.locked') }, 200, email);
      case 'refused':
        return refuse({ message: context.t('operators.refused'), field: 'password' }, 200, email);
    }
  });
  secondFactorRoutes(app);
}

const hasField = (request: FastifyRequest, name: string) =>
  typeof request.body === 'object' && request.body !== null && name in request.body;

/** GET and POST /console/operator/sign-in/code: the second factor a password sign-in owes. */
function secondFactorRoutes(app: App): void {
  const path = '/operator/sign-in/code';
  app.get(path, { config: { access: operatorSignInStep() } }, async (request, reply) => {
    const context = operatorContext(request);
    if (context.session.step !== 'second-factor') return redirectTo(reply, OPERATOR_HOME);
    return sendPage(reply, <SecondFactor context={context} />);
  });
  app.post(path, { config: { access: operatorSignInStep() } }, async (request, reply) => {
    const context = operatorContext(request);
    const secret = sessionSecretOf(request);
    if (context.session.step !== 'second-factor' || secret === undefined)
      return redirectTo(reply, OPERATOR_HOME);
    const code = formText(request, 'code').trim();
    // No code, or one longer than any code (a field given twice reads as none): no guess was made,
    // so none of the session's tries is spent and nothing is audited.
    if (code === '' || code.length > CODE_MAX) {
      const error = { message: context.t('operators.refusal.codeWrong'), field: 'code' };
      return sendPage(reply, <SecondFactor context={context} error={error} />, 400);
    }
    const outcome = await app.services.operatorSignIn.giveSecondFactor(
      secret,
      context.session.operator,
      code,
      requestIdsOf(request),
    );
    switch (outcome.status) {
      case 'ok':
        return redirectTo(reply, OPERATOR_HOME);
      case 'ended':
        clearSessionCookie(request, reply, app.config);
        return redirectTo(reply, `${SIGN_IN}?note=code-ended`);
      case 'locked':
        clearSessionCookie(request, reply, app.config);
        return redirectTo(reply, `${SIGN_IN}?note=code-locked`);
      case 'reused':
      case 'wrong': {
        const key = outcome.status === 'reused' ? 'operators.codeReused' : 'operators.codeWrong';
        const error = { message: context.t(key, { tries: outcome.triesLeft }), field: 'code' };
        return sendPage(reply, <SecondFactor context={context} error={error} />, 400);
      }
    }
  });
}
