import type { ExpiringLicense } from '../../../domain/licenses/licenses.service.js';
import type { ConsoleContext } from '../context.js';
import { Badge, DataTable, Empty } from '../ui.js';
import { operatorLinks } from './links.js';

const DAY_MS = 86_400_000;

/** Characters of a product's id on screen; the whole one on hover. */
const PRODUCT_CHARS = 24;

/** A week or less is a renewal to chase now; more is one to plan. */
const URGENT_DAYS = 7;

/**
 * Time left to the nearest day, as people count it (a license ending in 10 days reads "10 days",
 * not "9 days" a moment later); under a day said so.
 */
function left(context: ConsoleContext, endsAt: number, now: number): string {
  if (endsAt - now < DAY_MS) return context.t('renew.underADay');
  const days = Math.round((endsAt - now) / DAY_MS);
  return days === 1 ? context.t('renew.oneDayLeft') : context.t('renew.daysLeft', { n: days });
}

/**
 * Licenses ending within the horizon (LICENSE_EXPIRING_DAYS), soonest first, with their seats in
 * use: on the operator's dashboard (every enterprise, `showEnterprise`) and on one enterprise's
 * page. `shown` licenses at most; `more` when the list was cut there.
 */
export function ExpiringLicenses(props: {
  context: ConsoleContext;
  licenses: readonly ExpiringLicense[];
  days: number;
  now: number;
  shown: number;
  showEnterprise: boolean;
}) {
  const { context, days, now, shown, showEnterprise } = props;
  const { t } = context;
  const licenses = props.licenses.slice(0, shown);
  return (
    <section class="renewals" data-expiring-licenses>
      <h2>{t('renew.title', { days })}</h2>
      {licenses.length === 0 ? (
        <Empty>{t('renew.none', { days })}</Empty>
      ) : (
        <DataTable
          context={context}
          rows={licenses}
          row={(l) => ({ 'data-asset': l.assetNum })}
          columns={[
            { kind: 'time', header: t('renew.ends'), value: (l) => l.endsAt },
            {
              kind: 'text',
              header: t('renew.left'),
              render: (l) => (
                <Badge tone={l.endsAt - now <= URGENT_DAYS * DAY_MS ? 'bad' : 'warn'}>
                  {left(context, l.endsAt, now)}
                </Badge>
              ),
            },
            showEnterprise && {
              kind: 'text',
              header: t('renew.enterprise'),
              render: (l) =>
                l.enterpriseGlobalId === null ? (
                  '—'
                ) : (
                  <a href={operatorLinks.enterprise(l.enterpriseGlobalId)}>
                    {l.enterpriseName ?? l.enterpriseGlobalId}
                  </a>
                ),
            },
            {
              kind: 'id',
              header: t('renew.asset'),
              value: (l) => l.assetNum,
              href: (l) => operatorLinks.asset(l.assetNum),
            },
            {
              kind: 'code',
              header: t('renew.product'),
              value: (l) => l.crmProductId ?? l.productUri,
              max: PRODUCT_CHARS,
              sub: (l) => l.productName,
            },
            {
              kind: 'number',
              header: t('renew.seats'),
              cell: () => ({ 'data-seats': true }),
              value: (l) =>
                l.seatsLicensed === null
                  ? t('renew.unlimited', { used: l.seatsUsed })
                  : t('renew.seatsOf', { used: l.seatsUsed, licensed: l.seatsLicensed }),
            },
          ]}
        />
      )}
      <p>
        <small>
          {props.licenses.length > shown && `${t('renew.soonest', { shown })} `}
          {t('renew.horizon')}
        </small>
      </p>
    </section>
  );
}
