import type { Command } from 'commander';
import type { ServerStatus } from '../../domain/status/server-status.service.js';
import { adminCall, adminUrl, CliError, serverUrl, unreachable } from '../admin-client.js';
import { printableJson, text } from '../printable.js';

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

async function status(options: { json?: boolean }): Promise<void> {
  const url = serverUrl();
  const admin = adminUrl();
  await checkReachable(url);
  const server = await adminCall<ServerStatus>('GET', '/status');
  if (options.json === true) {
    console.log(printableJson({ url, adminUrl: admin, ...server }));
    return;
  }
  const { applied, pending } = server.migrations;
  const row = (label: string, value: string) => console.log(`${label.padEnd(12)}${value}`);
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
}

/** `keyward status`: is the server there, and what it runs on. */
export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description(
      'check that the server answers (KEYWARD_URL, KEYWARD_ADMIN_URL) and print its version, its database and its migrations; exit 1 when it does not answer',
    )
    .option(
      '--json',
      'print one JSON object: url, adminUrl, version, database, migrations {applied, pending}',
    )
    .action(status);
}
