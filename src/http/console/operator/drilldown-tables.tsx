import type { LicenseView, MachineRow } from '../../../domain/licenses/license-views.service.js';
import type { ConsoleContext } from '../context.js';
import { Badge, DataTable, Empty } from '../ui.js';
import { operatorLinks } from './links.js';

/** "3 of 10", or "3 (no limit)" for a license that does not count seats. */
export function seatsText(context: ConsoleContext, used: number, licensed: number | null): string {
  return licensed === null
    ? context.t('renew.unlimited', { used })
    : context.t('renew.seatsOf', { used, licensed });
}

/**
 * Licenses (products on assets) with their seats in use: an enterprise's page lists them with the
 * asset, each asset number a link to the asset's page, where its machines are.
 */
export function LicensesTable(props: {
  context: ConsoleContext;
  licenses: readonly LicenseView[];
  showAsset: boolean;
}) {
  const { context, licenses, showAsset } = props;
  const { t } = context;
  if (licenses.length === 0) return <Empty>{t('drill.noLicenses')}</Empty>;
  return (
    <DataTable
      context={context}
      rows={licenses}
      className="licenses"
      row={(l) => ({ 'data-asset': l.assetNum, 'data-product': l.productId })}
      columns={[
        showAsset && {
          kind: 'id',
          header: t('renew.asset'),
          value: (l) => l.assetNum,
          href: (l) => operatorLinks.asset(l.assetNum),
          sub: (l) => l.licenseType,
        },
        {
          kind: 'code',
          header: t('renew.product'),
          value: (l) => l.crmProductId ?? l.productUri,
          max: 24,
          sub: (l) => l.productName,
        },
        {
          kind: 'number',
          header: t('renew.seats'),
          value: (l) => seatsText(context, l.seatsUsed, l.seatsLicensed),
          cell: (l) => ({ 'data-seats-used': l.seatsUsed }),
        },
        { kind: 'time', header: t('drill.starts'), value: (l) => l.startsAt },
        { kind: 'time', header: t('renew.ends'), value: (l) => l.endsAt },
      ]}
    />
  );
}

/**
 * The machines that ran a license: those holding a seat now first, then the newest ended. Each
 * lease id opens the lease's page with every field.
 */
export function MachinesTable(props: { context: ConsoleContext; machines: readonly MachineRow[] }) {
  const { context, machines } = props;
  const { t } = context;
  if (machines.length === 0) return <Empty>{t('drill.noMachines')}</Empty>;
  return (
    <DataTable
      context={context}
      rows={machines}
      className="machines"
      row={(m) => ({ 'data-lease': m.leaseId, 'data-holding': m.holding ? 'true' : 'false' })}
      columns={[
        {
          kind: 'id',
          header: t('drill.lease'),
          value: (m) => m.leaseId,
          href: (m) => operatorLinks.lease(m.leaseId),
        },
        {
          kind: 'text',
          header: t('common.status'),
          render: (m) =>
            m.holding ? (
              <Badge tone="ok">{m.offline ? t('drill.holdingOffline') : t('drill.holding')}</Badge>
            ) : (
              <Badge tone="neutral">{t('drill.ended')}</Badge>
            ),
        },
        {
          kind: 'code',
          header: t('leases.product'),
          value: (m) => m.crmProductId,
          max: 24,
          sub: (m) => m.productName,
        },
        { kind: 'id', header: t('leases.holder'), value: (m) => m.holder, max: 24 },
        { kind: 'id', header: t('leases.machine'), value: (m) => m.fingerprint, max: 14 },
        { kind: 'time', header: t('leases.created'), value: (m) => m.createdAt },
        { kind: 'time', header: t('drill.endsOrEnded'), value: (m) => m.endedAt ?? m.expiresAt },
      ]}
    />
  );
}
