import { parseArgs } from 'node:util';
import { CliError, serverUrl } from '../admin-client.js';
import { loadDemo, type DemoFacts } from '../demo/load-demo.js';
import { exportLine } from '../demo/try-it.js';

const USAGE = `usage:
  keyward demo [--json]`;

function describe(facts: DemoFacts): string {
  const { app, enterprise, admin, members, lending, curl } = facts;
  const pad = (label: string) => label.padEnd(20);
  const holder = (a: DemoFacts['assets'][number]): string => {
    if (a.borrowedUsbKey) return `lent lock, lent to ${lending.account}`;
    const lent = lending.assetNums.includes(a.assetNum) ? `, lent to ${lending.borrowedUsbKey}` : '';
    return `${a.assignedTo ?? 'unassigned'}${lent}`;
  };
  const assets = facts.assets.map((a) => `  ${a.assetNum}  ${a.licenseType.padEnd(23)}${holder(a)}`);
  return [
    `Demo data loaded into ${facts.baseUrl}`,
    '',
    'Application (the secret is shown once)',
    `  ${pad('appKey')}${app.appKey}`,
    `  ${pad('appSecret')}${app.appSecret}`,
    `  ${pad('channel')}${app.channel}`,
    'Enterprise',
    `  ${pad('enterpriseGlobalId')}${enterprise.enterpriseGlobalId}`,
    `  ${pad('name')}${enterprise.enterpriseName}`,
    `  ${pad('code')}${enterprise.code}`,
    'Administrator login',
    `  ${pad('account')}${admin.account}`,
    `  ${pad('password')}${admin.password}`,
    `Employees (password ${members[0]?.password ?? '-'})`,
    ...members.map((m) => `  ${m.account.padEnd(20)}${m.name.padEnd(12)}${m.assetNums.join(', ')}`),
    'Assets',
    ...assets,
    `Lending: ${lending.account} lent ${lending.assetNums.join(', ')} to lent lock ${lending.borrowedUsbKey}`,
    '',
    'Try it (the first two lines set $TOKEN and $USER_TOKEN):',
    `  ${curl.token}`,
    `  ${curl.userToken}`,
    `  ${curl.order}`,
    `  ${curl.member}`,
    '',
    "Variables for the README's tour:",
    `  ${exportLine(facts.tour)}`,
  ].join('\n');
}

/** `keyward demo [--json]`: loads a small demo data set into the running server. */
export async function demoCommand(args: string[]): Promise<void> {
  let json: boolean;
  try {
    ({
      values: { json },
    } = parseArgs({ args, options: { json: { type: 'boolean', default: false } } }));
  } catch {
    throw new CliError(USAGE);
  }
  const facts = await loadDemo(serverUrl());
  console.log(json ? JSON.stringify(facts) : describe(facts));
}
