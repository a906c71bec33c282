import type { Command } from 'commander';
import type {
  AppSettingsChange,
  AppView,
  AppWithSecret,
  RotatedSecret,
} from '../../domain/apps/apps.service.js';
import { OFFLINE_LEASE_MAX_DAYS } from '../../domain/apps/offline-lease.js';
import { adminCall, CliError } from '../admin-client.js';
import { printableJson, text } from '../printable.js';
import { examples } from '../program.js';

interface JsonOption {
  json?: boolean;
}

/** `--force`: the console's own client (keyward-console) is changed only with it. */
interface ForceOption {
  force?: boolean;
}

interface SetOptions extends JsonOption, ForceOption {
  offlineEarlyReturn?: boolean;
  restrictToChannels?: boolean;
  rateLimit?: string;
}

/** `--rate-limit N|default`: calls a minute, or null for the server's RATE_LIMIT_PER_MINUTE. */
function rateLimitOf(value: string): number | null {
  if (value === 'default') return null;
  if (!/^[1-9][0-9]{0,9}$/.test(value))
    throw new CliError(
      `--rate-limit: a whole number of calls a minute, or "default" (got ${JSON.stringify(value)})`,
    );
  return Number(value);
}

const FORCE_HELP =
  "needed to change keyward-console, the console's own sign-in client: every enterprise signs in through it";

interface CreateOptions extends JsonOption {
  name: string;
  scopes: string;
  channels?: string;
  pending?: boolean;
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function printSecret(app: AppWithSecret | RotatedSecret, json: boolean): void {
  if (json) {
    console.log(printableJson(app));
    return;
  }
  console.log(text`appKey:    ${app.appKey}`);
  console.log(text`appSecret: ${app.appSecret}   (shown once: store it now)`);
  console.log(text`scopes:    ${app.scopes.join(',')}`);
  console.log(text`channels:  ${app.channels.join(',') || '-'}`);
  console.log(text`status:    ${app.status}`);
  if ('tokensRevoked' in app) {
    console.log(
      app.tokensRevoked
        ? 'tokens:    revoked (every token issued before is refused from its next call)'
        : 'tokens:    kept (tokens issued before stay valid until they expire; --revoke-tokens ends them)',
    );
  }
}

async function create(options: CreateOptions): Promise<void> {
  const app = await adminCall<AppWithSecret>('POST', '/apps', {
    name: options.name,
    scopes: list(options.scopes),
    channels: list(options.channels),
    pending: options.pending === true,
  });
  printSecret(app, options.json === true);
}

async function listApps(options: JsonOption): Promise<void> {
  const apps = await adminCall<AppView[]>('GET', '/apps');
  if (options.json === true) {
    console.log(printableJson(apps));
    return;
  }
  // The name last: the one column of free text.
  console.log(
    'appKey\tstatus\tscopes\tchannels\tofflineLeaseMaxDays\tofflineEarlyReturn\trestrictToChannels\trateLimitPerMinute\tname',
  );
  for (const a of apps) {
    console.log(
      text`${a.appKey}\t${a.status}\t${a.scopes.join(',')}\t${a.channels.join(',') || '-'}\t${a.offlineLeaseMaxDays}\t${String(a.offlineEarlyReturn)}\t${String(a.restrictToChannels)}\t${a.rateLimitPerMinute ?? 'default'}\t${a.name}`,
    );
  }
}

/** Only what was asked: a body without `force` is what older servers and plain curl send. */
const forceOf = (options: ForceOption) => (options.force === true ? { force: true } : {});

async function changeStatus(
  action: 'approve' | 'disable',
  key: string,
  options: JsonOption & ForceOption,
): Promise<void> {
  const body = action === 'disable' ? forceOf(options) : undefined;
  const app = await adminCall<AppView>('POST', `/apps/${encodeURIComponent(key)}/${action}`, body);
  console.log(options.json === true ? printableJson(app) : text`${app.appKey} is ${app.status}`);
}

async function rotateSecret(
  key: string,
  options: JsonOption & ForceOption & { revokeTokens?: boolean },
): Promise<void> {
  const rotated = await adminCall<RotatedSecret>('POST', `/apps/${encodeURIComponent(key)}/rotate-secret`, {
    revokeTokens: options.revokeTokens === true,
    ...forceOf(options),
  });
  printSecret(rotated, options.json === true);
}

/** The longest offline lease the license runtime may hand out for the app's programs. */
async function setOfflineDays(key: string, days: string, options: JsonOption & ForceOption): Promise<void> {
  if (!/^[0-9]{1,3}$/.test(days) || Number(days) > OFFLINE_LEASE_MAX_DAYS) {
    throw new CliError(text`days must be a whole number from 0 to ${OFFLINE_LEASE_MAX_DAYS}, got "${days}"`);
  }
  const app = await adminCall<AppView>('POST', `/apps/${encodeURIComponent(key)}/offline-lease-days`, {
    days: Number(days),
    ...forceOf(options),
  });
  if (options.json === true) {
    console.log(printableJson(app));
    return;
  }
  console.log(
    app.offlineLeaseMaxDays === 0
      ? text`${app.appKey}: no offline leases`
      : text`${app.appKey}: offline leases of up to ${app.offlineLeaseMaxDays} days`,
  );
}

/** `keyward app set`: the settings given change, the others stay as they are. */
async function setSettings(key: string, options: SetOptions): Promise<void> {
  const settings = {
    ...(options.offlineEarlyReturn === undefined ? {} : { offlineEarlyReturn: options.offlineEarlyReturn }),
    ...(options.restrictToChannels === undefined ? {} : { restrictToChannels: options.restrictToChannels }),
    ...(options.rateLimit === undefined ? {} : { rateLimitPerMinute: rateLimitOf(options.rateLimit) }),
  };
  if (Object.keys(settings).length === 0) {
    throw new CliError(
      'nothing to set: give --offline-early-return, --no-offline-early-return, --restrict-to-channels, ' +
        '--no-restrict-to-channels or --rate-limit',
    );
  }
  const app = await adminCall<AppSettingsChange>('POST', `/apps/${encodeURIComponent(key)}/settings`, {
    ...settings,
    ...forceOf(options),
  });
  if (options.json === true) {
    console.log(printableJson(app));
    return;
  }
  // One line per setting given, saying whether it changed: one already so is not news.
  const how = (name: keyof typeof settings) => (app.changed.includes(name) ? 'changed' : 'unchanged');
  if (settings.offlineEarlyReturn !== undefined) {
    console.log(
      app.offlineEarlyReturn
        ? text`${app.appKey}: ${how('offlineEarlyReturn')}: a checked-in offline lease frees its seat at once (early return)`
        : text`${app.appKey}: ${how('offlineEarlyReturn')}: an offline lease holds its seat until it expires, checked in or not`,
    );
  }
  if (settings.restrictToChannels !== undefined) {
    console.log(
      app.restrictToChannels
        ? text`${app.appKey}: ${how('restrictToChannels')}: member logins only for the enterprises of its channels (${app.channels.join(',')})`
        : text`${app.appKey}: ${how('restrictToChannels')}: member logins for every enterprise`,
    );
  }
  if (settings.rateLimitPerMinute !== undefined) {
    console.log(
      app.rateLimitPerMinute === null
        ? text`${app.appKey}: ${how('rateLimitPerMinute')}: the server's rate limit (RATE_LIMIT_PER_MINUTE) a minute`
        : text`${app.appKey}: ${how('rateLimitPerMinute')}: at most ${app.rateLimitPerMinute} calls a minute, all instances together`,
    );
  }
}

const APP_KEY = ['<APP_KEY>', "the application's appKey (kw_…)"] as const;

/** `keyward app create|list|approve|disable|rotate-secret|set-offline-days|set`: an application's life. */
export function registerAppCommands(program: Command): void {
  const app = program
    .command('app')
    .description('register and manage the applications (channel systems) that call the API')
    .addHelpText(
      'after',
      examples([
        'keyward app create --name crm --scopes auth_order,auth_me --channels CRM --json',
        'keyward app list',
        'keyward app rotate-secret kw_2Rvtk2-S_0UTQEdM --revoke-tokens',
        'keyward app set-offline-days kw_2Rvtk2-S_0UTQEdM 30',
        'keyward app set kw_2Rvtk2-S_0UTQEdM --restrict-to-channels',
      ]),
    );
  app
    .command('create')
    .description('register an application; its secret is printed once')
    .requiredOption('--name <NAME>', 'a name people recognise it by')
    .requiredOption(
      '--scopes <SCOPES>',
      'comma-separated surfaces it may call: auth_order, auth_me, auth_runtime, auth_webhooks',
    )
    .option('--channels <CHANNELS>', 'comma-separated channel codes its customers belong to')
    .option('--pending', 'create it pending: it gets no token until `keyward app approve`')
    .option('--json', 'print one JSON object: appKey, appSecret, scopes, channels, status')
    .addHelpText(
      'after',
      examples(['keyward app create --name crm --scopes auth_order,auth_me --channels CRM,SHOP --json']),
    )
    .action(create);
  app
    .command('list')
    .description('list the applications, one a line (tab-separated, with a header)')
    .option('--json', 'print one JSON array')
    .action(listApps);
  const statusChanges = [
    ['approve', 'approve a pending application: it may get tokens from now on'],
    ['disable', 'disable an application: its tokens are refused at once'],
  ] as const;
  for (const [action, description] of statusChanges) {
    const command = app
      .command(action)
      .description(description)
      .argument(...APP_KEY)
      .option('--json', 'print the application as one JSON object');
    if (action === 'disable') command.option('--force', FORCE_HELP);
    command.action((key: string, options: JsonOption & ForceOption) => changeStatus(action, key, options));
  }
  app
    .command('rotate-secret')
    .description('give an application a new secret, printed once')
    .argument(...APP_KEY)
    .option(
      '--revoke-tokens',
      'also revoke every token issued before (app and user tokens); without it they stay valid until they expire',
    )
    .option('--force', FORCE_HELP)
    .option('--json', 'print one JSON object, with tokensRevoked')
    .action(rotateSecret);
  app
    .command('set-offline-days')
    .description(
      "set the longest offline lease the license runtime may hand out for an application's programs",
    )
    .argument(...APP_KEY)
    .argument(
      '<DAYS>',
      `a whole number of days from 0 (no offline leases, the default) to ${OFFLINE_LEASE_MAX_DAYS}`,
    )
    .option('--force', FORCE_HELP)
    .option('--json', 'print the application as one JSON object')
    .addHelpText(
      'after',
      examples([
        'keyward app set-offline-days kw_2Rvtk2-S_0UTQEdM 30',
        'keyward app set-offline-days kw_2Rvtk2-S_0UTQEdM 0',
      ]),
    )
    .action(setOfflineDays);
  app
    .command('set')
    .description("change an application's settings; those not given stay as they are")
    .argument(...APP_KEY)
    .option(
      '--offline-early-return',
      'a checked-in offline lease frees its seat at once: only for software that deletes its lease when it checks in, since the server trusts it did (default: the seat is held until the lease expires)',
    )
    .option('--no-offline-early-return', 'an offline lease holds its seat until it expires (the default)')
    .option(
      '--restrict-to-channels',
      "member logins (password grant) only for the enterprises with a customer in the app's channels",
    )
    .option('--no-restrict-to-channels', 'member logins for every enterprise (the default)')
    .option(
      '--rate-limit <N|default>',
      "the app's calls a minute, all instances together (a fleet heartbeating every minute needs about one per machine; docs/operations.md); default: the server's RATE_LIMIT_PER_MINUTE",
    )
    .option('--force', FORCE_HELP)
    .option('--json', 'print the application as one JSON object')
    .addHelpText(
      'after',
      examples([
        'keyward app set kw_2Rvtk2-S_0UTQEdM --restrict-to-channels',
        'keyward app set kw_2Rvtk2-S_0UTQEdM --offline-early-return --no-restrict-to-channels',
        'keyward app set kw_2Rvtk2-S_0UTQEdM --rate-limit 1200000',
      ]),
    )
    .action(setSettings);
}
