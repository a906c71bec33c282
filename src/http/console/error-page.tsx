import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ConsoleContext } from './context.js';
import { localeOf, translator, type MessageKey } from './i18n/index.js';
import { Layout } from './layout.js';
import { sendPage } from './render.js';

/** A whole page that says what went wrong, in the reader's language. */
export function sendErrorPage(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  key: MessageKey,
  params?: Record<string, string | number>,
) {
  const locale = request.consoleContext?.locale ?? localeOf(request);
  const context: ConsoleContext = request.consoleContext ?? {
    locale,
    t: translator(locale),
    path: request.url,
    session: undefined,
  };
  return sendPage(
    reply,
    <Layout context={context} title={context.t('error.title')}>
      <p class="notice error" role="alert">
        {context.t(key, params)}
      </p>
      <p>
        <a href="/console">{context.t('app.name')}</a>
      </p>
    </Layout>,
    status,
  );
}
