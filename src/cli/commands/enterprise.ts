import { parseArgs } from 'node:util';
import type { EnterpriseView } from '../../domain/enterprises/enterprises.repository.js';
import { adminCall, CliError } from '../admin-client.js';

const USAGE = `usage:
  keyward enterprise show ENTERPRISE_GLOBAL_ID [--json]`;

async function show(enterpriseGlobalId: string | undefined, json: boolean): Promise<void> {
  if (enterpriseGlobalId === undefined) throw new CliError(USAGE);
  const view = await adminCall<EnterpriseView>(
    'GET',
    `/enterprises/${encodeURIComponent(enterpriseGlobalId)}`,
  );
  if (json) {
    console.log(
      JSON.stringify({
        enterpriseGlobalId: view.enterpriseGlobalId,
        enterpriseName: view.enterpriseName,
        enterpriseCode: view.enterpriseCode,
        adminAccount: view.adminAccount,
      }),
    );
    return;
  }
  console.log(`enterpriseGlobalId: ${view.enterpriseGlobalId}`);
  console.log(`enterpriseName:     ${view.enterpriseName}`);
  console.log(`enterpriseCode:     ${view.enterpriseCode}`);
  console.log(`adminAccount:       ${view.adminAccount ?? '-'}`);
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
    default:
      throw new CliError(USAGE);
  }
}
