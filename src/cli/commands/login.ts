import type { Command } from 'commander';
import { adminCall, adminUrl, CliError } from '../admin-client.js';
import { storeToken } from '../credentials.js';
import { text } from '../printable.js';
import { examples } from '../program.js';

/** The token from standard input: piped, or pasted at a terminal (it is not echoed to the command line). */
async function readToken(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('personal token (kwp_…): ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) {
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    if (process.stdin.isTTY && Buffer.concat(chunks).includes(10)) break;
  }
  return Buffer.concat(chunks).toString('utf8').trim();
}

/**
 * `keyward login`: checks a personal token with the server and keeps it in the user's config
 * directory (0600), so later commands sign in with it rather than with the project's admin key.
 */
export function registerLoginCommands(program: Command): void {
  program
    .command('login')
    .description(
      "sign the CLI in with a personal token (read from standard input), kept in the user's config directory",
    )
    .addHelpText(
      'after',
      examples([
        'keyward login < token.txt',
        'keyward operator token create --name laptop --json | jq -r .token | keyward login',
      ]),
    )
    .action(async () => {
      const token = await readToken();
      if (!token.startsWith('kwp_')) throw new CliError('not a personal token: it starts with kwp_');
      const me = await adminCall<{ operatorId: string | null; name: string; roles: string[] }>(
        'GET',
        '/operators/me',
        undefined,
        token,
      );
      const file = storeToken(adminUrl(), token);
      console.log(
        text`signed in to ${adminUrl()} as ${me.name} (${me.roles.join(' and ')}); token kept in ${file}`,
      );
    });
  program
    .command('logout')
    .description('forget the personal token kept for this server (it stays valid: revoke it to end it)')
    .action(() => {
      const file = storeToken(adminUrl(), undefined);
      console.log(text`signed out of ${adminUrl()} (${file})`);
    });
}
