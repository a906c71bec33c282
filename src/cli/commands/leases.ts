import type { Command } from 'commander';
import { adminCall } from '../admin-client.js';
import { printableJson, text } from '../printable.js';
import { examples } from '../program.js';
import { registerActivationCommands } from './activation.js';

interface LeaseRow {
  id: string;
  appKey: string;
  assetNum: string;
  crmProductId: string | null;
  productUri: string | null;
  holderKind: 'member' | 'lock';
  holder: string;
  fingerprint: string;
  offline: boolean;
  heartbeatAt: number;
  expiresAt: number;
  endedAt: number | null;
  endReason: string | null;
  usedSeconds: number;
}

interface LeasesOptions {
  app?: string;
  asset?: string;
  product?: string;
  all?: boolean;
  limit: string;
  json?: boolean;
}

async function leases(options: LeasesOptions): Promise<void> {
  const query = new URLSearchParams({ limit: options.limit });
  if (options.app !== undefined) query.set('app', options.app);
  if (options.asset !== undefined) query.set('assetNum', options.asset);
  if (options.product !== undefined) query.set('product', options.product);
  if (options.all === true) query.set('all', '1');
  const rows = await adminCall<LeaseRow[]>('GET', `/runtime/leases?${query.toString()}`);
  if (options.json === true) {
    console.log(printableJson(rows));
    return;
  }
  console.log('lease\tproduct\tasset\tholder\tfingerprint\toffline\texpires\tended\tusedSeconds');
  for (const l of rows) {
    const product = l.crmProductId ?? l.productUri ?? '-';
    const expires = new Date(l.expiresAt).toISOString();
    const ended = l.endedAt === null ? '-' : `${new Date(l.endedAt).toISOString()} (${l.endReason ?? ''})`;
    console.log(
      text`${l.id}\t${product}\t${l.assetNum}\t${l.holderKind}:${l.holder}\t${l.fingerprint}\t${l.offline ? 'yes' : 'no'}\t${expires}\t${ended}\t${l.usedSeconds}`,
    );
  }
}

/** `keyward leases`: who runs which product right now. */
export function registerLeasesCommand(program: Command): void {
  const leasesCommand = program
    .command('leases')
    .description('print runtime leases, newest first: live ones unless --all (tab-separated, with a header)')
    .option('--app <APP_KEY>', 'only leases checked out through this application')
    .option('--asset <ASSET_NUM>', "only leases of this asset's products, or held by this lock")
    .option('--product <PRODUCT>', 'only leases of this product (crmProductId or productUri)')
    .option('--all', 'also leases that ended (checked in, expired, revoked)')
    .option('--limit <N>', 'at most this many leases', '100')
    .option('--json', 'print one JSON array')
    .addHelpText(
      'after',
      examples([
        'keyward leases',
        'keyward leases --product P-1001 --all',
        'keyward leases --asset 8000000001 --json',
      ]),
    )
    .action(leases)
    // `leases --json` and `leases offline --json` are each their own command's.
    .enablePositionalOptions()
    // A command with an action of its own gets no help command from commander: `leases help`.
    .helpCommand('help [command]', 'print the help of a command');
  registerActivationCommands(leasesCommand);
}
