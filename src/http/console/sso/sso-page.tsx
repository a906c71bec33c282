import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ProviderError } from '../../../domain/sso/oidc-provider-client.js';
import type { SsoRefusal, SsoStart } from '../../../domain/sso/sso.service.js';
import { contextOf } from '../context.js';
import type { MessageKey } from '../i18n/index.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { Notice } from '../ui.js';

/** A refusal's sentence and status: 403 for who you are, 400 for a sign-in that went stale. */
const REFUSALS: Record<SsoRefusal, { key: MessageKey; status: number }> = {
  state: { key: 'sso.state', status: 400 },
  no_role: { key: 'sso.noRole', status: 403 },
  no_email: { key: 'sso.noEmail', status: 403 },
  email_unverified: { key: 'sso.emailUnverified', status: 403 },
  subject_conflict: { key: 'sso.subjectConflict', status: 403 },
  disabled: { key: 'sso.disabled', status: 403 },
  last_owner: { key: 'sso.lastOwner', status: 409 },
  taken: { key: 'sso.taken', status: 409 },
};

/** The provider's failures: 503 when it cannot be reached, 502 when its answer is unusable. */
const FAILURES: Record<ProviderError['failure'], { key: MessageKey; status: number }> = {
  unavailable: { key: 'sso.unavailable', status: 503 },
  refused: { key: 'sso.providerRefused', status: 403 },
  mismatch: { key: 'sso.mismatch', status: 400 },
  bad_answer: { key: 'sso.badAnswer', status: 502 },
};

function sendSsoProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  problem: { key: MessageKey; status: number },
  code: string,
  params: Record<string, string> = {},
) {
  const context = contextOf(request);
  const { t } = context;
  return sendPage(
    reply,
    <Layout context={context} title={t('sso.title')}>
      <Notice context={context} error={{ message: t(problem.key, params), code }} />
      <p>
        <a href="/console/operator/sso">{t('sso.tryAgain')}</a>
      </p>
      <p>
        <a href="/console/operator/sign-in">{t('sso.back')}</a>
      </p>
    </Layout>,
    problem.status,
  );
}

export function sendSsoRefusal(request: FastifyRequest, reply: FastifyReply, reason: SsoRefusal) {
  // The reason, not the provider's user: the audit log has who (when the user was known).
  request.log.info({ sso: { refused: reason } }, 'single sign-on refused');
  return sendSsoProblem(request, reply, REFUSALS[reason], reason);
}

export function sendProviderFailure(request: FastifyRequest, reply: FastifyReply, error: ProviderError) {
  // The failure's short code only: openid-client's messages and causes may quote the provider.
  request.log.warn({ sso: { failure: error.failure, code: error.code } }, 'single sign-on provider failed');
  return sendSsoProblem(request, reply, FAILURES[error.failure], error.code, { code: error.code });
}

/**
 * Too many sign-ins started: 429 for this address's, 503 when those of everyone together fill
 * what is kept. Retry-After says when to look again.
 */
export function sendSsoLimited(
  request: FastifyRequest,
  reply: FastifyReply,
  limited: Extract<SsoStart, { status: 'limited' }>,
) {
  // Info, as a refusal is: a flood would otherwise fill the log with warnings.
  request.log.info({ sso: { limited: limited.by } }, 'single sign-on start limited');
  reply.header('retry-after', String(limited.retryAfterSeconds));
  const problem =
    limited.by === 'address'
      ? { key: 'signIn.limited' as const, status: 429 }
      : { key: 'sso.busy' as const, status: 503 };
  return sendSsoProblem(request, reply, problem, 'limited', { seconds: String(limited.retryAfterSeconds) });
}

export function sendSsoNotConfigured(request: FastifyRequest, reply: FastifyReply) {
  return sendSsoProblem(request, reply, { key: 'sso.notConfigured', status: 404 }, 'sso_not_configured');
}
