import { parseArgs } from 'node:util';
import type { PasswordSet } from '../../domain/members/member-admin.service.js';
import { adminCall, CliError } from '../admin-client.js';
import { printableJson, text } from '../printable.js';

const USAGE = `usage:
  keyward member set-password --account ACCOUNT --password PW [--json]`;

/** `keyward member <subcommand>`: one case per subcommand. */
export async function memberCommand(args: string[]): Promise<void> {
  const [action, ...rest] = args;
  const { values } = parseArgs({
    args: rest,
    options: {
      account: { type: 'string' },
      password: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  switch (action) {
    case 'set-password': {
      if (values.account === undefined || values.password === undefined) throw new CliError(USAGE);
      const done = await adminCall<PasswordSet>('POST', '/members/password', {
        account: values.account,
        password: values.password,
      });
      console.log(
        values.json ? printableJson(done) : text`password set for ${done.account}; its sessions were ended`,
      );
      return;
    }
    default:
      throw new CliError(USAGE);
  }
}
