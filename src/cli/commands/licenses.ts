import { InvalidArgumentError, type Command } from 'commander';
import { adminCall } from '../admin-client.js';
import { printableJson, text } from '../printable.js';
import { examples } from '../program.js';
import type { ExpiringLicense } from '../../domain/licenses/expiring-licenses.repository.js';

interface ExpiringOptions {
  days?: number;
  enterprise?: string;
  limit: string;
  json?: boolean;
}

const DAY_MS = 86_400_000;

function daysOf(value: string): number {
  if (!/^[0-9]{1,4}$/.test(value) || Number(value) < 1 || Number(value) > 3650) {
    throw new InvalidArgumentError('expected whole days from 1 to 3650');
  }
  return Number(value);
}

/** An end as a person reads it, to the minute; UTC, as the header says once. */
function endLabel(at: number): string {
  const iso = new Date(at).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}

/** Days left to the nearest day, as the console says them (a license ending in 10 days: 10, not 9). */
function daysLeft(endsAt: number): number {
  return Math.max(0, Math.round((endsAt - Date.now()) / DAY_MS));
}

async function expiring(options: ExpiringOptions): Promise<void> {
  const query = new URLSearchParams({ limit: options.limit });
  if (options.days !== undefined) query.set('days', String(options.days));
  if (options.enterprise !== undefined) query.set('enterprise', options.enterprise);
  const answer = await adminCall<{ days: number; licenses: ExpiringLicense[] }>(
    'GET',
    `/licenses/expiring?${query.toString()}`,
  );
  if (options.json === true) {
    console.log(printableJson(answer.licenses));
    return;
  }
  console.log('ends (UTC)\tdaysLeft\tasset\tproduct\tseatsUsed\tseatsLicensed\tenterprise\tchannel');
  for (const l of answer.licenses) {
    const product = l.crmProductId ?? l.productUri ?? '-';
    const licensed = l.seatsLicensed === null ? '-' : String(l.seatsLicensed);
    const enterprise = l.enterpriseName ?? l.enterpriseGlobalId ?? '-';
    console.log(
      text`${endLabel(l.endsAt)}\t${daysLeft(l.endsAt)}\t${l.assetNum}\t${product}\t${l.seatsUsed}\t${licensed}\t${enterprise}\t${l.channelCode ?? '-'}`,
    );
  }
}

/** `keyward licenses expiring`: the renewals coming up. */
export function registerLicensesCommands(program: Command): void {
  const licenses = program
    .command('licenses')
    .description('look at licenses (a product on an asset) across every enterprise')
    .addHelpText('after', examples(['keyward licenses expiring', 'keyward licenses expiring --days 90']));
  licenses
    .command('expiring')
    .description(
      'print licenses ending within --days (default: the server’s LICENSE_EXPIRING_DAYS, 30), soonest first, with their seats in use (tab-separated, with a header)',
    )
    .option('--days <N>', 'licenses ending within this many days from now (1 to 3650)', daysOf)
    .option('--enterprise <ENTERPRISE_GLOBAL_ID>', "only this enterprise's licenses")
    .option('--limit <N>', 'at most this many licenses', '100')
    .option('--json', 'print one JSON array')
    .addHelpText(
      'after',
      examples([
        'keyward licenses expiring',
        'keyward licenses expiring --days 7',
        'keyward licenses expiring --enterprise ENTERPRISE_GLOBAL_ID --json',
      ]),
    )
    .action(expiring);
}
