import type { Command } from 'commander';
import type { AppView, AppWithSecret, RotatedSecret } from '../../domain/apps/apps.service.js';
import { OFFLINE_LEASE_MAX_DAYS } from '../../domain/apps/offline-lease.js';
import { adminCall, CliError } from '../admin-client.js';
import { printableJson, text } from '../printable.js';
import { examples } from '../program.js';

interface JsonOption {
  json?: boolean;
}

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
  console.log('appKey\tstatus\tscopes\tchannels\tofflineLeaseMaxDays\tname');
  for (const a of apps) {
    console.log(
      text`${a.appKey}\t${a.status}\t${a.scopes.join(',')}\t${a.channels.join(',') || '-'}\t${a.offlineLeaseMaxDays}\t${a.name}`,
    );
  }
}

async function changeStatus(action: 'approve' | 'disable', key: string, options: JsonOption): Promise<void> {
  const app = await adminCall<AppView>('POST', `/apps/${encodeURIComponent(key)}/${action}`);
  console.log(options.json === true ? printableJson(app) : text`${app.appKey} is ${app.status}`);
}

async function rotateSecret(key: string, options: JsonOption & { revokeTokens?: boolean }): Promise<void> {
  const rotated = await adminCall<RotatedSecret>('POST', `/apps/${encodeURIComponent(key)}/rotate-secret`, {
    revokeTokens: options.revokeTokens === true,
  });
  printSecret(rotated, options.json === true);
}

/** The longest offline lease the license runtime may hand out for the app's programs. */
async function setOfflineDays(key: string, days: string, options: JsonOption): Promise<void> {
  if (!/^[0-9]{1,3}$/.test(days) || Number(days) > OFFLINE_LEASE_MAX_DAYS) {
    throw new CliError(text`days must be a whole number from 0 to ${OFFLINE_LEASE_MAX_DAYS}, got "${days}"`);
  }
  const app = await adminCall<AppView>('POST', `/apps/${encodeURIComponent(key)}/offline-lease-days`, {
    days: Number(days),
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

const APP_KEY = ['<APP_KEY>', "the application's appKey (kw_…)"] as const;

/** `keyward app create|list|approve|disable|rotate-secret|set-offline-days`: an application's life. */
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
    app
      .command(action)
      .description(description)
      .argument(...APP_KEY)
      .option('--json', 'print the application as one JSON object')
      .action((key: string, options: JsonOption) => changeStatus(action, key, options));
  }
  app
    .command('rotate-secret')
    .description('give an application a new secret, printed once')
    .argument(...APP_KEY)
    .option(
      '--revoke-tokens',
      'also revoke every token issued before (app and user tokens); without it they stay valid until they expire',
    )
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
    .option('--json', 'print the application as one JSON object')
    .addHelpText(
      'after',
      examples([
        'keyward app set-offline-days kw_2Rvtk2-S_0UTQEdM 30',
        'keyward app set-offline-days kw_2Rvtk2-S_0UTQEdM 0',
      ]),
    )
    .action(setOfflineDays);
}
