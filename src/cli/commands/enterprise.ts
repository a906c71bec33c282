import type { Command } from 'commander';
import type { EnterpriseView } from '../../domain/enterprises/enterprises.repository.js';
import type { MemberLimitView } from '../../domain/members/member-admin.repository.js';
import { adminCall, CliError } from '../admin-client.js';
import { printableJson, text } from '../printable.js';
import { examples } from '../program.js';

interface JsonOption {
  json?: boolean;
}

async function show(enterpriseGlobalId: string, options: JsonOption): Promise<void> {
  const view = await adminCall<EnterpriseView>(
    'GET',
    `/enterprises/${encodeURIComponent(enterpriseGlobalId)}`,
  );
  if (options.json === true) {
    console.log(
      printableJson({
        enterpriseGlobalId: view.enterpriseGlobalId,
        enterpriseName: view.enterpriseName,
        enterpriseCode: view.enterpriseCode,
        adminAccount: view.adminAccount,
      }),
    );
    return;
  }
  console.log(text`enterpriseGlobalId: ${view.enterpriseGlobalId}`);
  console.log(text`enterpriseName:     ${view.enterpriseName}`);
  console.log(text`enterpriseCode:     ${view.enterpriseCode}`);
  console.log(text`adminAccount:       ${view.adminAccount ?? '-'}`);
}

/** Caps the enterprise's members, the administrator included; `none` lifts the cap. */
async function setMemberLimit(enterpriseGlobalId: string, limit: string, options: JsonOption): Promise<void> {
  if (limit !== 'none' && !/^[1-9][0-9]{0,6}$/.test(limit)) {
    throw new CliError(text`the limit must be a whole number from 1 or none, got "${limit}"`);
  }
  const view = await adminCall<MemberLimitView>(
    'POST',
    `/enterprises/${encodeURIComponent(enterpriseGlobalId)}/member-limit`,
    { memberLimit: limit === 'none' ? null : Number(limit) },
  );
  if (options.json === true) {
    console.log(printableJson(view));
    return;
  }
  const cap = view.memberLimit === null ? 'no member limit' : `at most ${view.memberLimit} members`;
  console.log(text`${view.enterpriseGlobalId}: ${cap} (${view.memberCount} now)`);
}

const ENTERPRISE = ['<ENTERPRISE_GLOBAL_ID>', "the enterprise's enterpriseGlobalId"] as const;

/** `keyward enterprise show|set-member-limit`. */
export function registerEnterpriseCommands(program: Command): void {
  const enterprise = program
    .command('enterprise')
    .description('look at an enterprise and cap its members')
    .addHelpText(
      'after',
      examples([
        'keyward enterprise show ENTERPRISE_GLOBAL_ID --json',
        'keyward enterprise set-member-limit ENTERPRISE_GLOBAL_ID 20',
        'keyward enterprise set-member-limit ENTERPRISE_GLOBAL_ID none',
      ]),
    );
  enterprise
    .command('show')
    .description("print an enterprise's name, code and administrator account")
    .argument(...ENTERPRISE)
    .option(
      '--json',
      'print one JSON object: enterpriseGlobalId, enterpriseName, enterpriseCode, adminAccount',
    )
    .addHelpText('after', examples(['keyward enterprise show ENTERPRISE_GLOBAL_ID --json']))
    .action(show);
  enterprise
    .command('set-member-limit')
    .description('cap the members of an enterprise, the administrator included (past it, member op 1 fails)')
    .argument(...ENTERPRISE)
    .argument('<LIMIT>', 'a whole number from 1, or none to lift the cap')
    .option('--json', 'print one JSON object: enterpriseGlobalId, memberLimit, memberCount')
    .addHelpText(
      'after',
      examples([
        'keyward enterprise set-member-limit ENTERPRISE_GLOBAL_ID 20',
        'keyward enterprise set-member-limit ENTERPRISE_GLOBAL_ID none',
      ]),
    )
    .action(setMemberLimit);
}
