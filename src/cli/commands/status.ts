import type { Command } from 'commander';
import type { ServerStatus } from '../../domain/status/server-status.service.js';
import {
  AdminKeyMissing,
  AdminKeyRefused,
  adminCall,
  adminUrl,
  CliError,
  serverUrl,
  unreachable,
} from '../admin-client.js';
import { printable, printableJson, text } from '../printable.js';

/** Exit status when the server answers but its admin API could not be read (no key, a wrong key). */
export const STATUS_ADMIN_UNREAD = 2;

/** Whether the server's public address answers as a Keyward server does. */
async function checkReachable(base: string): Promise<void> {
  let response: Response;
  try {
    response = await fetch(`${base}/healthz`);
  } catch {
    throw unreachable(base);
  }
  if (!response.ok) {
    throw new CliError(
      text`${base} answers, but not as a Keyward server (GET /healthz: HTTP ${response.status})`,
    );
  }
}

/**
 * The version the public API document names: known without the admin key, so a CLI outside the
 * server's folder can still tell which server answers. Undefined when it cannot be read.
 */
async function publicVersion(base: string): Promise<string | undefined> {
  try {
    const response = await fetch(`${base}/openapi.json`);
    if (!response.ok) return undefined;
    const document = (await response.json()) as { info?: { version?: unknown } };
    const version = document.info?.version;
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}

const row = (label: string, value: string) => console.log(`${label.padEnd(12)}${value}`);

async function status(options: { json?: boolean }): Promise<void> {
  const url = serverUrl();
  const admin = adminUrl();
  await checkReachable(url);
  let server: ServerStatus;
  try {
    server = await adminCall<ServerStatus>('GET', '/status');
  } catch (error) {
    // The server answers: say so and what it is, then why the rest is unknown.
    if (!(error instanceof AdminKeyMissing || error instanceof AdminKeyRefused)) throw error;
    const version = await publicVersion(url);
    if (options.json === true) {
      console.log(printableJson({ url, adminUrl: admin, version: version ?? null, error: error.message }));
    } else {
      row('server', text`${url} (reachable)`);
      row('version', version === undefined ? 'unknown' : printable(version));
      row('admin API', text`${admin}: not read`);
      console.error(`keyward: ${error.message}`);
    }
    process.exitCode = STATUS_ADMIN_UNREAD;
    return;
  }
  if (options.json === true) {
    console.log(printableJson({ url, adminUrl: admin, ...server }));
    return;
  }
  const { applied, pending } = server.migrations;
  row('server', text`${url} (reachable)`);
  if (admin !== url) row('admin API', text`${admin} (reachable)`);
  row('version', text`${server.version}`);
  row('database', server.database === 'embedded' ? 'embedded' : 'PostgreSQL');
  row(
    'migrations',
    pending.length === 0
      ? `${applied} applied, none pending`
      : text`${applied} applied, ${pending.length} pending: ${pending.join(', ')}`,
  );
  // Until an owner exists the admin key is the only way in: say so, and what to do about it.
  const { owners, adminKeyEnabled } = server.signIn;
  row(
    'sign-in',
    owners === 0
      ? 'admin key only: no owner yet (keyward operator add --role owner)'
      : `${owners} owner${owners === 1 ? '' : 's'}, personal tokens; admin key ${adminKeyEnabled ? 'on' : 'off'}`,
  );
}

/** `keyward status`: is the server there, and what it runs on. */
export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description(
      'check that the server answers (KEYWARD_URL, KEYWARD_ADMIN_URL) and print its version, its database and its migrations; ' +
        `exit 1 when it does not answer, ${STATUS_ADMIN_UNREAD} when it answers but the admin key is missing or refused`,
    )
    .option(
      '--json',
      'print one JSON object: url, adminUrl, version, database, migrations {applied, pending}; without a working admin key: url, adminUrl, version, error',
    )
    .action(status);
}
