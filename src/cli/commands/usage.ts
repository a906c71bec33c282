import { InvalidArgumentError, type Command } from 'commander';
import { adminCall } from '../admin-client.js';
import { printableJson, text } from '../printable.js';
import { examples } from '../program.js';
import { timeFilter } from '../time-filter.js';

interface UsagePoint {
  at: number;
  peakSeats: number;
  licensedSeats: number | null;
  seatHours: number;
  utilization: number | null;
  denied: number;
  deniedByCode: Record<string, number>;
  consumed: number;
}

interface LicenseLine {
  product: string;
  assetNum: string;
  enterpriseName: string | null;
  licensedSeats: number | null;
  peakSeats: number;
  utilization: number | null;
  bucketsAtCapacity: number;
}

interface UsageReport {
  bucket: 'hour' | 'day';
  series: UsagePoint[];
  atCapacity: LicenseLine[];
  leastUsed: LicenseLine[];
}

interface UsageOptions {
  product?: string;
  enterprise?: string;
  app?: string;
  from?: string;
  to?: string;
  bucket?: string;
  json?: boolean;
}

const FILTERS = ['product', 'enterprise', 'app', 'from', 'to', 'bucket'] as const;

function bucketOf(value: string): string {
  if (value !== 'hour' && value !== 'day') throw new InvalidArgumentError('expected hour or day');
  return value;
}

/** A bucket as a person reads it: its day, or its day and hour; UTC, as the header says once. */
function bucketLabel(at: number, bucket: UsageReport['bucket']): string {
  const iso = new Date(at).toISOString();
  return bucket === 'day' ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}

function percent(value: number | null): string {
  return value === null ? '-' : `${(value * 100).toFixed(1)}%`;
}

function codes(byCode: Record<string, number>): string {
  const entries = Object.entries(byCode);
  return entries.length === 0 ? '-' : entries.map(([code, n]) => `${code}:${n}`).join(' ');
}

/**
 * A list of licenses after the series, under its own title line and header: the licenses at
 * capacity first (the ones to act on), then the least used (none of them ever at capacity).
 */
function printLicenses(title: string, lines: readonly LicenseLine[], bucket: UsageReport['bucket']): void {
  console.log('');
  console.log(title);
  if (lines.length === 0) {
    console.log('(none)');
    return;
  }
  console.log(`product\tassetNum\tenterprise\tlicensedSeats\tpeakSeats\tutilization\t${bucket}sAtCapacity`);
  for (const l of lines) {
    const licensed = l.licensedSeats === null ? '-' : String(l.licensedSeats);
    console.log(
      text`${l.product}\t${l.assetNum}\t${l.enterpriseName ?? '-'}\t${licensed}\t${l.peakSeats}\t${percent(l.utilization)}\t${l.bucketsAtCapacity}`,
    );
  }
}

async function usage(options: UsageOptions): Promise<void> {
  const query = new URLSearchParams();
  for (const name of FILTERS) {
    const value = options[name];
    if (value !== undefined) query.set(name, value);
  }
  const report = await adminCall<UsageReport>('GET', `/usage?${query.toString()}`);
  if (options.json === true) {
    console.log(printableJson(report));
    return;
  }
  console.log(
    `${report.bucket} (UTC)\tpeakSeats\tlicensedSeats\tseatHours\tutilization\tdenied\tdeniedByCode\tconsumed`,
  );
  for (const p of report.series) {
    const at = bucketLabel(p.at, report.bucket);
    const licensed = p.licensedSeats === null ? '-' : String(p.licensedSeats);
    console.log(
      text`${at}\t${p.peakSeats}\t${licensed}\t${p.seatHours}\t${percent(p.utilization)}\t${p.denied}\t${codes(p.deniedByCode)}\t${p.consumed}`,
    );
  }
  printLicenses(
    `Licenses most often at capacity (a ${report.bucket} whose peak reached the seats)`,
    report.atCapacity,
    report.bucket,
  );
  printLicenses(
    'Licenses least used, never at capacity (utilization: seat-hours used over seat-hours licensed)',
    report.leastUsed,
    report.bucket,
  );
}

/** `keyward usage`: seat use over time against the seats licensed, and refused check-outs. */
export function registerUsageCommand(program: Command): void {
  program
    .command('usage')
    .description(
      'print seat usage per hour or day: peak seats and seat-hours against seats licensed, refused check-outs by code, consumption (tab-separated, with a header); then the licenses most often at capacity and the least used',
    )
    .option(
      '--product <PRODUCT>',
      'only this product (crmProductId or productUri); one nothing names is refused',
    )
    .option('--enterprise <ENTERPRISE_GLOBAL_ID>', "only this enterprise's licenses")
    .option('--app <APP_KEY>', 'only leases checked out through this application')
    .option('--from <TIME>', 'from this time: ISO-8601, or a time ago (2h, 7d)', (value: string) =>
      timeFilter(value),
    )
    .option('--to <TIME>', 'up to this time, written as for --from', (value: string) => timeFilter(value))
    .option('--bucket <BUCKET>', 'hour or day (default day)', bucketOf)
    .option('--json', 'print the whole report as JSON')
    .addHelpText(
      'after',
      examples([
        'keyward usage',
        'keyward usage --product P-1001 --bucket hour --from 2d',
        'keyward usage --enterprise ENTERPRISE_GLOBAL_ID --from 2025-01-01 --to 2025-02-01 --json',
      ]),
    )
    .action(usage);
}
