import { randomBytes } from 'node:crypto';
import { createKeywardClient, KeywardApiError, KeywardAuthError } from '../../keyward-client.js';
import type { AppWithSecret } from '../../domain/apps/apps.service.js';
import type { EnterpriseView } from '../../domain/enterprises/enterprises.repository.js';
import type { PasswordSet } from '../../domain/members/member-admin.service.js';
import { adminCall, CliError } from '../admin-client.js';
import { text } from '../printable.js';
import { loadDemoUsage, type DemoUsage } from './demo-usage.js';
import {
  demoBatch,
  demoNumbers,
  EMPLOYEES,
  ENTERPRISE_NAME,
  HQ_CUSTOMER,
  NUMBERS_NEEDED,
} from './data-set.js';
import {
  curlCommands,
  runtimeExample,
  tourVariables,
  type CurlCommands,
  type TourVariables,
} from './try-it.js';

export interface DemoMember {
  memberGlobalId: string;
  account: string;
  name: string;
  password: string;
  assetNums: string[];
}

export interface DemoAsset {
  assetNum: string;
  assetId: string;
  licenseType: string;
  licenseOrderId: string;
  borrowedUsbKey: boolean;
  /** The account of the member it is assigned to. */
  assignedTo: string | null;
}

/** Everything `keyward demo` made, as it prints it (`--json` prints exactly this). */
export interface DemoFacts {
  baseUrl: string;
  app: { appKey: string; appSecret: string; channel: string };
  enterprise: { enterpriseGlobalId: string; enterpriseName: string; code: string };
  admin: { account: string; password: string; memberGlobalId: string };
  customers: Array<{ customerId: string; channelCustomerId: string | null; isDefault: boolean }>;
  assets: DemoAsset[];
  members: DemoMember[];
  lending: { borrowedUsbKey: string; account: string; memberGlobalId: string; assetNums: string[] };
  /** The simulated month of usage and the seats held now (the console's Usage pages). */
  usage: DemoUsage;
  curl: CurlCommands;
  tour: TourVariables;
  /** The runtime example (examples/runtime) against the demo's lock, online then offline. */
  runtime: { online: string; offline: string };
}

/** The demo app's longest offline lease: enough for the runtime example's seven days. */
const DEMO_OFFLINE_DAYS = 30;

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');

/** Runs one step; a refusal names the step and the server's answer. */
async function step<T>(label: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof KeywardApiError) {
      throw new CliError(text`demo: ${label}: ${error.code} ${error.message}`);
    }
    if (error instanceof KeywardAuthError || error instanceof CliError) {
      throw new CliError(text`demo: ${label}: ${error.message}`);
    }
    throw error;
  }
}

/**
 * Loads the demo data set into the running server through its public API, the way a channel
 * system and an enterprise console would: the admin API only creates the application and sets
 * the administrator's first password, as `keyward app create` and `member set-password` do.
 * Every run makes a new channel, so runs never meet.
 */
export async function loadDemo(baseUrl: string): Promise<DemoFacts> {
  const channel = `DEMO-${hex(3).toUpperCase()}`;
  const app = await step('creating the application', () =>
    adminCall<AppWithSecret>('POST', '/apps', {
      name: 'demo',
      scopes: ['auth_order', 'auth_me', 'auth_runtime', 'auth_webhooks'],
      channels: [channel],
    }),
  );
  await step('allowing offline leases of up to 30 days', () =>
    adminCall('POST', `/apps/${encodeURIComponent(app.appKey)}/offline-lease-days`, {
      days: DEMO_OFFLINE_DAYS,
    }),
  );
  const adminPassword = `Admin-${hex(4)}`;
  const keyward = createKeywardClient({ baseUrl, appKey: app.appKey, appSecret: app.appSecret });

  const bound = await step('binding the enterprise (order op 1)', () =>
    keyward.POST('/order/api/order/v1/enterprise/user/bind', {
      body: {
        channelCode: channel,
        channelCustomerId: HQ_CUSTOMER,
        customerName: `${ENTERPRISE_NAME} HQ`,
        branchName: 'Head office',
        enterpriseName: ENTERPRISE_NAME,
      },
    }),
  );
  const enterpriseGlobalId = bound.enterpriseGlobalId;
  const shown = await step('reading the enterprise', () =>
    adminCall<EnterpriseView>('GET', `/enterprises/${encodeURIComponent(enterpriseGlobalId)}`),
  );
  if (shown.adminAccount === null) throw new CliError('demo: the enterprise has no administrator');
  const adminAccount = shown.adminAccount;
  const admin = await step("setting the administrator's password", () =>
    adminCall<PasswordSet>('POST', '/members/password', { account: adminAccount, password: adminPassword }),
  );

  const numbers = demoNumbers(
    await step('obtaining asset numbers (order op 9)', () =>
      keyward.POST('/order/api/order/v1/shellnums', { body: { size: NUMBERS_NEEDED } }),
    ),
  );
  const batch = demoBatch(channel, enterpriseGlobalId, `demo-${hex(4)}`, numbers);
  const orders = await step('placing the license orders (order op 5)', () =>
    keyward.POST('/order/api/order/v1/licenseOrder/batchOrder', {
      params: { query: { appKey: app.appKey } },
      body: batch,
    }),
  );

  const enterpriseConsole = createKeywardClient({
    baseUrl,
    appKey: app.appKey,
    appSecret: app.appSecret,
    member: { account: adminAccount, password: adminPassword },
  });
  const memberPassword = `Staff-${hex(4)}`;
  const added = await step('adding employees (member op 1)', () =>
    enterpriseConsole.POST('/me/api/v1/enterprise/{enterpriseGlobalId}/member', {
      params: { path: { enterpriseGlobalId } },
      body: {
        userList: EMPLOYEES.map((e) => ({
          userName: e.userName,
          password: memberPassword,
          name: e.name,
          departmentId: e.departmentId,
        })),
      },
    }),
  );
  const members: DemoMember[] = EMPLOYEES.map((employee, i) => {
    const record = added.succeeded[i];
    if (record === undefined) throw new CliError(text`demo: ${employee.userName} was not added`);
    return {
      memberGlobalId: record.globalId,
      account: record.userName,
      name: record.name,
      password: memberPassword,
      assetNums: employee.assets(numbers),
    };
  });
  for (const member of members) {
    await step(`assigning assets to ${member.account} (member op 9)`, () =>
      enterpriseConsole.POST('/me/api/v1/enterprise/member/{memberGlobalId}/privileges', {
        params: { path: { memberGlobalId: member.memberGlobalId } },
        body: { deleteAssets: [], addAssets: member.assetNums },
      }),
    );
  }
  const listed = await step('listing asset numbers (member op 6)', () =>
    enterpriseConsole.GET('/me/api/v1/enterprise/{enterpriseGlobalId}/asset/assetNums', {
      params: { path: { enterpriseGlobalId } },
    }),
  );
  const idOf = new Map(listed.map((item) => [item.assetNum, item.assetId]));

  // The first employee lends with its own login, as an employee would.
  const lender = members[0] as DemoMember;
  const lent = numbers.cloudAccounts[0];
  const lenderClient = createKeywardClient({
    baseUrl,
    appKey: app.appKey,
    appSecret: app.appSecret,
    member: { account: lender.account, password: lender.password },
  });
  await step(`lending ${lent} to the lent lock (member op 10)`, () =>
    lenderClient.POST('/me/api/v1/enterprise/member/{memberGlobalId}/borrow', {
      params: { path: { memberGlobalId: lender.memberGlobalId } },
      body: { borrowedUsbKey: numbers.lentLock, assetIDs: [idOf.get(lent) ?? ''] },
    }),
  );

  const customers = await step('listing customers (order op 3)', () =>
    keyward.GET('/order/api/order/v1/enterprise/user/query', {
      params: { query: { channelCode: channel, channelCustomerId: HQ_CUSTOMER, defaultCustomer: 'N' } },
    }),
  );

  const usage = await loadDemoUsage(baseUrl, app, enterpriseGlobalId, members[1] as DemoMember);

  const assets = describeAssets(batch.orderList, orders, idOf, members);
  const facts: Omit<DemoFacts, 'curl' | 'tour' | 'runtime'> = {
    baseUrl,
    app: { appKey: app.appKey, appSecret: app.appSecret, channel },
    enterprise: { enterpriseGlobalId, enterpriseName: shown.enterpriseName, code: shown.enterpriseCode },
    admin: { account: adminAccount, password: adminPassword, memberGlobalId: admin.memberGlobalId },
    customers: customers.map((c) => ({
      customerId: c.customerId,
      channelCustomerId: c.channelCustomerId,
      isDefault: c.isDefault,
    })),
    assets,
    members,
    lending: {
      borrowedUsbKey: numbers.lentLock,
      account: lender.account,
      memberGlobalId: lender.memberGlobalId,
      assetNums: [lent],
    },
    usage,
  };
  return {
    ...facts,
    curl: curlCommands(facts),
    tour: tourVariables(facts, numbers),
    runtime: runtimeExample(facts, numbers.lock),
  };
}

interface PlacedOrder {
  sequence: number;
  licenseOrderId: string;
}

interface OrderedAssets {
  sequence: number | string;
  licenseType: string;
  assets?: Array<{ assetNos?: string[] | null; borrowedUsbKey?: boolean | null }> | null;
}

/** Each asset the batch bought, with its order, its id and who holds it. */
function describeAssets(
  orderList: OrderedAssets[],
  placed: PlacedOrder[],
  idOf: Map<string, string>,
  members: DemoMember[],
): DemoAsset[] {
  const orderOf = new Map(placed.map((o) => [o.sequence, o.licenseOrderId]));
  return orderList.flatMap((order) =>
    (order.assets ?? []).flatMap((asset) =>
      (asset.assetNos ?? []).map((assetNum) => ({
        assetNum,
        assetId: idOf.get(assetNum) ?? '',
        licenseType: order.licenseType,
        licenseOrderId: orderOf.get(Number(order.sequence)) ?? '',
        borrowedUsbKey: asset.borrowedUsbKey === true,
        assignedTo: members.find((m) => m.assetNums.includes(assetNum))?.account ?? null,
      })),
    ),
  );
}
