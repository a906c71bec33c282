import { parseArgs } from 'node:util';
import type { EnterpriseView } from '../../domain/enterprises/enterprises.repository.js';
import type { MemberLimitView } from '../../domain/members/member-admin.repository.js';
import { adminCall, CliError } from '../admin-client.js';
import { printableJson, text } from '../printable.js';

const USAGE = `usage:
  keyward enterprise show ENTERPRISE_GLOBAL_ID [--json]
  keyward enterprise set-member-limit ENTERPRISE_GLOBAL_ID N|none [--json]`;

async function show(enterpriseGlobalId: string | undefined, json: boolean): Promise<void> {
  if (enterpriseGlobalId === undefined) throw new CliError(USAGE);
  const view = await adminCall<EnterpriseView>(
    'GET',
    `/enterprises/${encodeURIComponent(enterpriseGlobalId)}`,
  );
  if (json) {
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
async function setMemberLimit(
  enterpriseGlobalId: string | undefined,
  limit: string | undefined,
  json: boolean,
): Promise<void> {
  if (enterpriseGlobalId === undefined || limit === undefined) throw new CliError(USAGE);
  if (limit !== 'none' && !/^[1-9][0-9]{0,6}$/.test(limit)) {
    throw new CliError(text`the limit must be a whole number from 1 or none, got "${limit}"`);
  }
  const view = await adminCall<MemberLimitView>(
    'POST',
    `/enterprises/${encodeURIComponent(enterpriseGlobalId)}/member-limit`,
    { memberLimit: limit === 'none' ? null : Number(limit) },
  );
  if (json) {
    console.log(printableJson(view));
    return;
  }
  const cap = view.memberLimit === null ? 'no member limit' : `at most ${view.memberLimit} members`;
  console.log(text`${view.enterpriseGlobalId}: ${cap} (${view.memberCount} now)`);
}

/** `keyward enterprise <subcommand>`: one case per subcommand. */
export async function enterpriseCommand(args: string[]): Promise<void> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false } },
  });
  switch (action) {
    case 'show':
      return show(positionals[0], values.json);
    case 'set-member-limit':
      return setMemberLimit(positionals[0], positionals[1], values.json);
    default:
      throw new CliError(USAGE);
  }
}
