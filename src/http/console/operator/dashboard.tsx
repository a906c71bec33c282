import { ISSUE_RUNS_SCANNED } from '../../../domain/status/dashboard.repository.js';
import type { App } from '../../app-type.js';
import { operatorContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { operatorMay } from '../../access/access.js';
import { mayAct } from '../../../domain/operators/roles.js';
import { Sparkline } from '../usage/chart.js';
import { ExpiringLicenses } from './expiring-licenses.js';

/** Days the cards' trend lines cover. */
const TREND_DAYS = 14;

/** Licenses ending soon shown here at most; `keyward licenses expiring` lists the rest. */
const RENEWALS_SHOWN = 20;

function Card(props: {
  label: string;
  value: number;
  note?: string;
  href?: string;
  trend?: { label: string; values: number[]; className: string };
}) {
  const { label, value, note, href, trend } = props;
  return (
    <div class="card" data-card={label}>
      <span class="value">{value.toLocaleString('en')}</span>
      <span class="label">{href === undefined ? label : <a href={href}>{label}</a>}</span>
      {trend !== undefined && (
        <Sparkline label={trend.label} values={trend.values} className={trend.className} />
      )}
      {note !== undefined && <small class="note">{note}</small>}
    </div>
  );
}

/** GET /console/operator: the platform at a glance (counts bounded by indexes: dashboard.repository). */
export function dashboardRoute(app: App): void {
  // Every role lands here after sign-in; one that may not read the platform's data (an auditor)
  // gets the pages its role opens, in the navigation, and no counts.
  app.get('/operator', { config: { access: operatorMay('status') } }, async (request, reply) => {
    const context = operatorContext(request);
    const { t } = context;
    if (!mayAct([context.session.operator.role], 'read')) {
      return sendPage(
        reply,
        <Layout context={context} title={t('nav.dashboard')}>
          <p>{t('operators.roleHome', { role: t(`operators.role.${context.session.operator.role}`) })}</p>
        </Layout>,
      );
    }
    const now = Date.now();
    const [status, counts, trend, ending] = await Promise.all([
      app.services.status.read(),
      app.services.status.dashboard(),
      app.services.usage.trend(TREND_DAYS),
      // One more than shown: whether to say the list goes on.
      app.services.licenses.expiring({ limit: RENEWALS_SHOWN + 1 }),
    ]);
    const apps = counts.apps;
    const seats = trend.map((p) => p.peakSeats);
    const denied = trend.map((p) => p.denied);
    return sendPage(
      reply,
      <Layout context={context} title={t('nav.dashboard')}>
        <section class="cards">
          <Card
            label={t('dash.apps')}
            value={apps.active + apps.pending + apps.disabled}
            note={t('dash.appsByStatus', apps)}
            href="/console/operator/apps"
          />
          <Card
            label={t('dash.enterprises')}
            value={counts.enterprises}
            href="/console/operator/enterprises"
          />
          <Card label={t('dash.members')} value={counts.members} />
          <Card
            label={t('dash.ordersLastHour')}
            value={counts.ordersLastHour}
            href="/console/operator/orders"
          />
          <Card
            label={t('dash.ordersPending')}
            value={counts.ordersPending}
            href="/console/operator/orders?status=accepted"
          />
          <Card
            label={t('dash.ordersFailed')}
            value={counts.ordersFailedLastDay}
            href="/console/operator/orders?status=failed"
          />
          <Card
            label={t('dash.numbersIssued')}
            value={counts.numbersIssuedLastDay}
            note={
              counts.numbersIssuedCapped ? t('dash.numbersCapped', { runs: ISSUE_RUNS_SCANNED }) : undefined
            }
          />
          <Card
            label={t('dash.seatsToday')}
            value={seats[seats.length - 1] ?? 0}
            note={t('dash.trendNote')}
            href="/console/operator/usage"
            trend={{
              label: t('dash.trendSeats', { values: seats.join(', ') }),
              values: seats,
              className: 'peak',
            }}
          />
          <Card
            label={t('dash.deniedToday')}
            value={denied[denied.length - 1] ?? 0}
            note={t('dash.trendNote')}
            href="/console/operator/usage"
            trend={{
              label: t('dash.trendDenied', { values: denied.join(', ') }),
              values: denied,
              className: 'denied',
            }}
          />
        </section>
        <ExpiringLicenses
          context={context}
          licenses={ending}
          days={app.services.licenses.defaultDays}
          now={now}
          shown={RENEWALS_SHOWN}
          showEnterprise
        />
        <p class="who">
          {t('dash.server', {
            version: status.version,
            database: status.database,
            applied: status.migrations.applied,
          })}
        </p>
        {status.migrations.pending.length > 0 && (
          <p class="notice error">
            {t('dash.pendingMigrations', { names: status.migrations.pending.join(', ') })}
          </p>
        )}
      </Layout>,
    );
  });
}
