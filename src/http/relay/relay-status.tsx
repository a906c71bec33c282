import type { App } from '../app-type.js';
import { ACCESS } from '../access/access.js';
import type { ConsoleContext } from '../console/context.js';
import { localeOf, translator } from '../console/i18n/index.js';
import { Layout } from '../console/layout.js';
import { shareLine } from '../console/relays/relay-grants-table.js';
import { CONSOLE_POLICY, sendPage } from '../console/render.js';

export const RELAY_PAGE_PATH = '/relay';
export const RELAY_STATUS_PATH = '/relay/status';

/**
 * On a relay only: its small status page and the same facts as JSON. Public inside the closed
 * network, as /healthz is: seats and the grant's end, never a machine's fingerprint or a key.
 */
export function relayStatusRoutes(app: App): void {
  const serving = () => {
    const service = app.services.relayServing;
    if (service === undefined) throw new Error('relay routes registered on a server that is not a relay');
    return service;
  };
  app.get(
    RELAY_STATUS_PATH,
    { config: { access: ACCESS.public }, schema: { hide: true } as object },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return serving().status();
    },
  );
  app.get(
    RELAY_PAGE_PATH,
    {
      config: { access: ACCESS.public },
      schema: { hide: true } as object,
      // A console page: the console's content policy, which lets its own stylesheet load (the
      // API's, set on every answer before this hook, would leave the page unstyled).
      onSend: async (_request, reply) => {
        reply.header('content-security-policy', CONSOLE_POLICY);
      },
    },
    async (request, reply) => {
      const status = await serving().status();
      const locale = localeOf(request);
      const context: ConsoleContext = {
        locale,
        t: translator(locale),
        path: request.url,
        session: undefined,
      };
      const { t } = context;
      // A column for the shares of usage limits only where the grant holds any.
      const shares = status.licenses.some((l) => l.share !== null);
      const endsAt = new Date(status.endsAt).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
      return sendPage(
        reply,
        <Layout context={context} title={t('relay.title', { relayId: status.relayId })}>
          {status.ended ? (
            <p class="notice error" role="alert">
              {t('relay.ended', { endsAt })}
            </p>
          ) : (
            <p>{t('relay.grant', { grantId: status.grantId, endsAt })}</p>
          )}
          <table>
            <thead>
              <tr>
                <th scope="col">{t('relay.license')}</th>
                <th scope="col">{t('relay.product')}</th>
                <th scope="col" class="num">
                  {t('relay.granted')}
                </th>
                <th scope="col" class="num">
                  {t('relay.inUse')}
                </th>
                {shares && <th scope="col">{t('relay.shares')}</th>}
              </tr>
            </thead>
            <tbody>
              {status.licenses.map((l) => (
                <tr>
                  <td>{l.assetNum}</td>
                  <td>{l.crmProductId ?? ''}</td>
                  <td class="num">{l.granted}</td>
                  <td class="num">{l.inUse}</td>
                  {shares && <td>{l.share === null ? '' : shareLine(context, l.share)}</td>}
                </tr>
              ))}
            </tbody>
          </table>
          <p class="relay-seats">{t('relay.machines', { n: status.seatsInUse })}</p>
          <p>
            {t('relay.terms', {
              machines:
                status.machines === null
                  ? t('relay.anyMachine')
                  : t('relay.listedMachines', { n: status.machines }),
              overage:
                status.overage === 0 ? t('relay.noOverage') : t('relay.allowOverage', { n: status.overage }),
            })}
          </p>
          <p class="hint">{t('relay.verify')}</p>
        </Layout>,
      );
    },
  );
}
