import { OPERATOR_PASSWORD } from '../../../domain/console/operator-sign-in.service.js';
import { operatorSignInStep } from '../../access/access.js';
import { requestIdsOf } from '../../audit-actor.js';
import type { App } from '../../app-type.js';
import { operatorContext, type ConsoleContext } from '../context.js';
import { sendErrorPage } from '../error-page.js';
import { formText } from '../form-fields.js';
import { Layout } from '../layout.js';
import { redirectTo, sendPage } from '../render.js';
import { sessionSecretOf } from '../session.js';
import { Csrf, Field, Notice, type ConsoleError } from '../ui.js';
import { ACCOUNT } from './account.js';
import { operatorRefusal } from './operator-errors.js';

function PasswordPage(props: { context: ConsoleContext; owed: boolean; error?: ConsoleError }) {
  const { context, owed, error } = props;
  const { t } = context;
  return (
    <Layout context={context} title={t('operators.changePassword')}>
      <Notice context={context} error={error} />
      {owed && <p>{t('operators.passwordOwed')}</p>}
      <form method="post" action={`${ACCOUNT}/password`}>
        <Csrf context={context} />
        {!owed && (
          <Field
            name="currentPassword"
            label={t('operators.currentPassword')}
            type="password"
            required
            autocomplete="current-password"
            maxLength={OPERATOR_PASSWORD.max}
            error={error}
          />
        )}
        <Field
          name="password"
          label={t('operators.newPassword', { min: OPERATOR_PASSWORD.min })}
          type="password"
          required
          autocomplete="new-password"
          maxLength={OPERATOR_PASSWORD.max}
          error={error}
        />
        <button type="submit">{t('operators.changePassword')}</button>
      </form>
    </Layout>
  );
}

/**
 * GET and POST /console/operator/account/password: the operator's own new password. A sign-in with
 * a one-time password (a new operator, a reset) comes here before anything else and is not asked
 * for the password it just gave; otherwise the current one is asked for. Other sessions end.
 */
export function accountPasswordRoutes(app: App): void {
  const step = { config: { access: operatorSignInStep() } };
  app.get('/operator/account/password', step, async (request, reply) => {
    const context = operatorContext(request);
    if (context.session.operator.id === null) return sendErrorPage(request, reply, 404, 'error.notFound');
    if (context.session.step !== 'ready' && context.session.step !== 'password') {
      return redirectTo(reply, '/console/operator');
    }
    return sendPage(reply, <PasswordPage context={context} owed={context.session.step === 'password'} />);
  });
  app.post('/operator/account/password', step, async (request, reply) => {
    const context = operatorContext(request);
    const { session } = context;
    const secret = sessionSecretOf(request);
    if (session.operator.id === null || secret === undefined)
      return sendErrorPage(request, reply, 404, 'error.notFound');
    if (session.step !== 'ready' && session.step !== 'password')
      return redirectTo(reply, '/console/operator');
    const owed = session.step === 'password';
    try {
      await app.services.operatorSignIn.changePassword(
        secret,
        session.operator,
        { current: owed ? null : formText(request, 'currentPassword'), next: formText(request, 'password') },
        requestIdsOf(request),
      );
    } catch (error) {
      return sendPage(
        reply,
        <PasswordPage context={context} owed={owed} error={operatorRefusal(context.t, error)} />,
        400,
      );
    }
    return redirectTo(reply, owed ? '/console/operator' : `${ACCOUNT}?done=password-changed`);
  });
}
