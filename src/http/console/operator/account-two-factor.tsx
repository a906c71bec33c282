import QRCode from 'qrcode';
import { operatorSignInStep } from '../../access/access.js';
import type { App } from '../../app-type.js';
import { operatorContext, type ConsoleContext } from '../context.js';
import { sendErrorPage } from '../error-page.js';
import { formText } from '../form-fields.js';
import { Layout } from '../layout.js';
import { redirectTo, sendPage } from '../render.js';
import { Csrf, Field, Notice, type ConsoleError } from '../ui.js';
import { ACCOUNT } from './account.js';
import { consoleRequest } from './form.js';
import { operatorRefusal } from './operator-errors.js';

function Enrol(props: {
  context: ConsoleContext;
  secret: string;
  qr: string;
  owed: boolean;
  error?: ConsoleError;
}) {
  const { context, secret, qr, owed, error } = props;
  const { t } = context;
  return (
    <Layout context={context} title={t('operators.twoFactorTurnOn')}>
      <Notice context={context} error={error} />
      {owed && <p>{t('operators.twoFactorOwed')}</p>}
      <ol class="steps">
        <li>{t('operators.enrolScan')}</li>
        <li>{t('operators.enrolType')}</li>
      </ol>
      {/* An SVG data URI: the content policy allows images from data:, and no markup is inlined. */}
      <img
        class="qr"
        src={`data:image/svg+xml;base64,${Buffer.from(qr).toString('base64')}`}
        alt={t('operators.qrAlt')}
        width={200}
        height={200}
      />
      <details>
        <summary>{t('operators.enrolManual')}</summary>
        <code class="secret" data-secret>
          {secret}
        </code>
      </details>
      <form method="post" action={`${ACCOUNT}/two-factor`}>
        <Csrf context={context} />
        <Field
          name="code"
          label={t('operators.code')}
          required
          autocomplete="one-time-code"
          maxLength={6}
          error={error}
        />
        <button type="submit">{t('operators.verify')}</button>
      </form>
    </Layout>
  );
}

function RecoveryCodes(props: { context: ConsoleContext; codes: string[] }) {
  const { context, codes } = props;
  const { t } = context;
  return (
    <Layout context={context} title={t('operators.recoveryCodes')}>
      <p class="notice done" role="status">
        {t('operators.twoFactorOnDone')}
      </p>
      <p>{t('operators.recoveryHint', { count: codes.length })}</p>
      <ul class="recovery-codes">
        {codes.map((code) => (
          <li>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <p>
        <a href="/console/operator" class="button">
          {t('operators.recoverySaved')}
        </a>
      </p>
    </Layout>
  );
}

/**
 * GET and POST /console/operator/account/two-factor: enrols a TOTP authenticator. The page shows
 * the secret as a QR code (and as text); a code from the app confirms it, and ten recovery codes
 * are shown once. An operator whom the owner's rule requires to enrol is sent here at sign-in.
 */
export function accountTwoFactorRoutes(app: App): void {
  const step = { config: { access: operatorSignInStep() } };
  const page = async (
    context: ReturnType<typeof operatorContext>,
    operatorId: string,
    error?: ConsoleError,
  ) => {
    const { secret, uri } = await app.services.twoFactor.pending(operatorId);
    const qr = await QRCode.toString(uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
    const owed = context.session.step === 'enrol';
    return (
      <Enrol
        context={context}
        secret={secret}
        qr={qr}
        owed={owed}
        {...(error === undefined ? {} : { error })}
      />
    );
  };
  app.get('/operator/account/two-factor', step, async (request, reply) => {
    const context = operatorContext(request);
    const id = context.session.operator.id;
    if (id === null) return sendErrorPage(request, reply, 404, 'error.notFound');
    if (context.session.step !== 'ready' && context.session.step !== 'enrol')
      return redirectTo(reply, '/console/operator');
    if ((await app.services.twoFactor.status(id)).enabled) return redirectTo(reply, ACCOUNT);
    return sendPage(reply, await page(context, id));
  });
  app.post('/operator/account/two-factor', step, async (request, reply) => {
    const context = operatorContext(request);
    const id = context.session.operator.id;
    if (id === null) return sendErrorPage(request, reply, 404, 'error.notFound');
    if (context.session.step !== 'ready' && context.session.step !== 'enrol')
      return redirectTo(reply, '/console/operator');
    try {
      const { recoveryCodes } = await app.services.twoFactor.confirm(
        id,
        formText(request, 'code'),
        consoleRequest(request),
      );
      return await sendPage(reply, <RecoveryCodes context={context} codes={recoveryCodes} />);
    } catch (error) {
      return sendPage(reply, await page(context, id, operatorRefusal(context.t, error)), 400);
    }
  });
}
