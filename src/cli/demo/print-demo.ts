import { serverUrl } from '../admin-client.js';
import { printableJson, text } from '../printable.js';
import { loadDemo, type DemoFacts } from './load-demo.js';
import { exportLine } from './try-it.js';

const pad = (label: string) => label.padEnd(20);

/**
 * Where the console's two sign-ins are, and with what: the operator's as the console's landing page
 * and the README's first steps tell it (one-time password, a new one, two factors; the admin key
 * only while no owner exists).
 */
export function consoleLines(baseUrl: string, admin: { account: string; password: string }): string[] {
  return [
    'Console (open in a browser)',
    text`  ${pad('enterprise admin')}${baseUrl}/console/sign-in   account ${admin.account}, password ${admin.password}`,
    text`  ${pad('operator')}${baseUrl}/console/operator/sign-in`,
    `  ${pad('')}your email and the one-time password keyward operator add printed, then a password of`,
    `  ${pad('')}your own and two-factor sign-in (Account); no owner yet: the admin key (keyward status)`,
  ];
}

function describe(facts: DemoFacts): string {
  const { app, enterprise, admin, members, lending, curl } = facts;
  const holder = (a: DemoFacts['assets'][number]): string => {
    if (a.borrowedUsbKey) return text`lent lock, lent to ${lending.account}`;
    const lent = lending.assetNums.includes(a.assetNum) ? text`, lent to ${lending.borrowedUsbKey}` : '';
    return text`${a.assignedTo ?? 'unassigned'}${lent}`;
  };
  const assets = facts.assets.map((a) => text`  ${a.assetNum}  ${a.licenseType.padEnd(23)}${holder(a)}`);
  return [
    text`Demo data loaded into ${facts.baseUrl}`,
    '',
    'Application (the secret is shown once)',
    text`  ${pad('appKey')}${app.appKey}`,
    text`  ${pad('appSecret')}${app.appSecret}`,
    text`  ${pad('channel')}${app.channel}`,
    'Enterprise',
    text`  ${pad('enterpriseGlobalId')}${enterprise.enterpriseGlobalId}`,
    text`  ${pad('name')}${enterprise.enterpriseName}`,
    text`  ${pad('code')}${enterprise.code}`,
    'Administrator login',
    text`  ${pad('account')}${admin.account}`,
    text`  ${pad('password')}${admin.password}`,
    text`Employees (password ${members[0]?.password ?? '-'})`,
    ...members.map((m) => text`  ${m.account.padEnd(20)}${m.name.padEnd(12)}${m.assetNums.join(', ')}`),
    'Assets',
    ...assets,
    text`Lending: ${lending.account} lent ${lending.assetNums.join(', ')} to lent lock ${lending.borrowedUsbKey}`,
    text`Usage: ${String(facts.usage.simulatedDays)} days simulated (${facts.usage.atCapacity ?? '-'} at capacity); ${facts.usage.holder} holds two seats of ${facts.usage.product}, a third machine refused`,
    '',
    ...consoleLines(facts.baseUrl, admin),
    '',
    'Try it (paste these lines: the first sets $KEYWARD_URL, the next two $TOKEN and $USER_TOKEN):',
    text`  ${curl.server}`,
    text`  ${curl.token}`,
    text`  ${curl.userToken}`,
    text`  ${curl.order}`,
    text`  ${curl.member}`,
    '',
    'Variables for the tour (docs/tour.md):',
    text`  ${exportLine(facts.tour)}`,
    '',
    'License runtime (docs/runtime.md): check out seats of the lock, then verify offline:',
    text`  ${facts.runtime.online}`,
    text`  ${facts.runtime.offline}     # with the server stopped`,
  ].join('\n');
}

/** `keyward demo [--json]`: loads a small demo data set into the running server. */
export async function printDemo(json: boolean): Promise<void> {
  const facts = await loadDemo(serverUrl());
  console.log(json ? printableJson(facts) : describe(facts));
}
