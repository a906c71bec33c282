import type { App } from '../../app-type.js';
import { operatorMay } from '../../access/access.js';
import { operatorContext } from '../context.js';
import { sendErrorPage } from '../error-page.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { Badge, Ident, Time } from '../ui.js';
import { LicensesTable, MachinesTable } from './drilldown-tables.js';
import { operatorLinks } from './links.js';

/**
 * GET /console/operator/assets/:assetNum: one asset (a lock, a certificate, a cloud account), whose
 * it is, its licenses with their seats, and the machines that ran them, each a link to its lease.
 */
export function assetRoute(app: App): void {
  app.get<{ Params: { assetNum: string } }>(
    '/operator/assets/:assetNum',
    { config: { access: operatorMay('read') } },
    async (request, reply) => {
      const context = operatorContext(request);
      const { t } = context;
      const found = await app.services.licenseViews.asset(request.params.assetNum);
      if (found === undefined) return sendErrorPage(request, reply, 404, 'error.notFound');
      const { asset, machines } = found;
      const states = [
        asset.revoked && ['bad', t('drill.revoked')],
        asset.locked && ['bad', t('drill.locked')],
        asset.freezing && ['warn', t('drill.frozen')],
      ].filter((s): s is ['bad' | 'warn', string] => s !== false);
      return sendPage(
        reply,
        <Layout context={context} title={t('drill.assetTitle', { assetNum: asset.assetNum })}>
          <dl class="facts" data-asset-facts>
            <dt>{t('leases.assetNum')}</dt>
            <dd>
              <Ident context={context} value={asset.assetNum} max={40} />
            </dd>
            <dt>{t('drill.type')}</dt>
            <dd>{asset.licenseType}</dd>
            <dt>{t('renew.enterprise')}</dt>
            <dd>
              {asset.enterpriseGlobalId === null ? (
                (asset.customerName ?? '—')
              ) : (
                <a href={operatorLinks.enterprise(asset.enterpriseGlobalId)}>{asset.enterpriseName}</a>
              )}
            </dd>
            <dt>{t('drill.channel')}</dt>
            <dd>{asset.channelCode === null ? '—' : <code>{asset.channelCode}</code>}</dd>
            <dt>{t('common.status')}</dt>
            <dd>
              {states.length === 0 ? (
                <Badge tone="ok">{t('drill.inUse')}</Badge>
              ) : (
                states.map(([tone, word]) => <Badge tone={tone}>{word}</Badge>)
              )}
            </dd>
            <dt>{t('drill.starts')}</dt>
            <dd>
              <Time at={asset.startsAt} />
            </dd>
            <dt>{t('renew.ends')}</dt>
            <dd>
              <Time at={asset.endsAt} />
            </dd>
            <dt>{t('drill.assignedTo')}</dt>
            <dd data-assigned>
              {asset.assignedTo.length === 0
                ? '—'
                : asset.assignedTo.map((m, i) => (
                    <>
                      {i > 0 && ', '}
                      <a href={operatorLinks.member(m.globalId)}>{m.account}</a>
                    </>
                  ))}
            </dd>
          </dl>
          <section data-licenses>
            <h2>{t('drill.licenses')}</h2>
            <LicensesTable context={context} licenses={asset.licenses} showAsset={false} />
          </section>
          <section data-machines>
            <h2>{t('drill.machines')}</h2>
            <p class="hint">{t('drill.machinesHint', { count: machines.length })}</p>
            <MachinesTable context={context} machines={machines} />
          </section>
        </Layout>,
      );
    },
  );
}
