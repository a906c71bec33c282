import type { Command } from 'commander';
import type { PasswordSet } from '../../domain/members/member-admin.service.js';
import { adminCall } from '../admin-client.js';
import { printableJson, text } from '../printable.js';
import { examples } from '../program.js';

interface SetPasswordOptions {
  account: string;
  password: string;
  json?: boolean;
}

async function setPassword(options: SetPasswordOptions): Promise<void> {
  const done = await adminCall<PasswordSet>('POST', '/members/password', {
    account: options.account,
    password: options.password,
  });
  console.log(
    options.json === true
      ? printableJson(done)
      : text`password set for ${done.account}; its sessions were ended`,
  );
}

/** `keyward member set-password`. */
export function registerMemberCommands(program: Command): void {
  const member = program.command('member').description("manage an enterprise member's login");
  member
    .command('set-password')
    .description("set a member's password and end its sessions (how an administrator gets its first one)")
    .requiredOption('--account <ACCOUNT>', 'the member account, user@enterpriseCode')
    .requiredOption('--password <PASSWORD>', 'the new password, as member op 1 requires it')
    .option('--json', 'print one JSON object: account, memberGlobalId')
    .addHelpText(
      'after',
      examples(["keyward member set-password --account admin@abc123 --password 'S3cret-pass'"]),
    )
    .action(setPassword);
}
