import { serverUrl } from '../admin-client.js';
import { printableJson, text } from '../printable.js';
import { loadDemo, type DemoFacts } from './load-demo.js';
import { exportLine } from './try-it.js';

function describe(facts: DemoFacts): string {
  const { app, enterprise, admin, members, lending, curl } = facts;
  const pad = (label: string) => label.padEnd(20);
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
    'Console (open in a browser)',
    text`  ${pad('enterprise admin')}${facts.baseUrl}/console/sign-in   account ${admin.account}, password ${admin.password}`,
    text`  ${pad('operator')}${facts.baseUrl}/console/operator/sign-in   with the admin key (keyward status shows where it is)`,
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
