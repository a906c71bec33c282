import type { paths } from '../../keyward-client.js';

type BatchOrder =
  paths['/order/api/order/v1/licenseOrder/batchOrder']['post']['requestBody']['content']['application/json'];
type Order = BatchOrder['orderList'][number];
type Product = NonNullable<NonNullable<Order['assets']>[number]['products']>[number];

/** The demo's channel customers: the enterprise's default one and a second, its research lab. */
export const HQ_CUSTOMER = 'hq';
export const LAB_CUSTOMER = 'lab';
export const ENTERPRISE_NAME = 'Demo Industries';

/** The numbers the demo's assets get, all issued by order op 9 so no two runs meet. */
export interface DemoNumbers {
  /** A refillable lock carrying a product and a merchandise tree. */
  lock: string;
  /** A standalone certificate. */
  certificate: string;
  /** Enterprise cloud-account authorizations, with extensions. */
  cloudCustomers: [string, string];
  /** Cloud accounts of the lab customer, one per employee. */
  cloudAccounts: [string, string, string];
  /** A refillable lock bought as a lent lock. */
  lentLock: string;
}

export const NUMBERS_NEEDED = 8;

export function demoNumbers(issued: string[]): DemoNumbers {
  const [lock, certificate, cc1, cc2, a1, a2, a3, lentLock] = issued;
  if (lentLock === undefined || [lock, certificate, cc1, cc2, a1, a2, a3].includes(undefined)) {
    throw new Error(`expected ${NUMBERS_NEEDED} asset numbers, got ${issued.length}`);
  }
  return {
    lock: lock as string,
    certificate: certificate as string,
    cloudCustomers: [cc1 as string, cc2 as string],
    cloudAccounts: [a1 as string, a2 as string, a3 as string],
    lentLock,
  };
}

// Products end a year after the batch is accepted (timeDurationExpression), so the demo never
// shows expired licenses however late it is run; the certificate's ends in 20 days, so the
// console's renewals (licenses ending within LICENSE_EXPIRING_DAYS) have one to show.
function product(
  crmProductId: string,
  gmsPid: string,
  productName: string,
  limitConcurrent: number,
  timeDurationExpression = '1-0-0',
): Product {
  return {
    crmProductId,
    productUri: gmsPid,
    gmsPid,
    productName,
    productType: 'tool',
    limitConcurrent,
    timeDurationExpression,
  };
}

/**
 * One sync batch of five orders: every license type the demo shows, for two customers of one
 * enterprise. Sequence 1 is the refillable lock with the merchandise tree.
 */
export function demoBatch(
  channelCode: string,
  enterpriseGlobalId: string,
  channelOrderId: string,
  numbers: DemoNumbers,
): BatchOrder {
  const hq = { channelCustomerId: HQ_CUSTOMER, orderType: 'new_buy' as const };
  return {
    channelCode,
    channelOrderId,
    syncMode: 'sync',
    orderList: [
      {
        ...hq,
        sequence: 1,
        licenseType: 'normal_recover_usbkey',
        assets: [
          {
            assetNos: [numbers.lock],
            products: [product('demo-viewer', 'gms-1001', 'Viewer', 10)],
            merchandises: [
              {
                crmProductId: 'demo-suite',
                merchandiseNum: 'M-100',
                merchandiseName: 'Engineering Suite',
                timeDurationExpression: '1-0-0',
                licenseOrderProductList: [product('demo-designer', 'gms-1002', 'Designer', 5)],
                children: [
                  {
                    crmProductId: 'demo-simulation',
                    parentCrmProductId: 'demo-suite',
                    merchandiseNum: 'M-110',
                    merchandiseName: 'Simulation Pack',
                    parentMerchandiseNum: 'M-100',
                    children: null,
                    licenseOrderProductList: [
                      product('demo-simulator', 'gms-1003', 'Simulator', 3),
                      product('demo-analyzer', 'gms-1004', 'Analyzer', 3),
                    ],
                  },
                ],
              },
            ],
          },
        ],
      },
      {
        ...hq,
        sequence: 2,
        licenseType: 'softkey',
        assets: [
          {
            assetNos: [numbers.certificate],
            products: [product('demo-reporter', 'gms-1005', 'Reporter', 2, '0-0-20')],
          },
        ],
      },
      {
        ...hq,
        sequence: 3,
        licenseType: 'cloud_customer',
        assets: [
          {
            assetNos: [numbers.cloudCustomers[0]],
            assetExtendList: [
              { extendCode: 'seats', extendValue: '25' },
              { extendCode: 'region', extendValue: 'east' },
            ],
            products: [product('demo-console', 'app-console', 'Cloud Console', 25)],
          },
          {
            assetNos: [numbers.cloudCustomers[1]],
            assetExtendList: [{ extendCode: 'seats', extendValue: '10' }],
            products: [product('demo-console-2', 'app-console', 'Cloud Console', 10)],
          },
        ],
      },
      {
        sequence: 4,
        channelCustomerId: LAB_CUSTOMER,
        customerName: `${ENTERPRISE_NAME} Lab`,
        customerType: 'company',
        branchName: 'Research',
        enterpriseGlobalId,
        orderType: 'new_buy',
        licenseType: 'cloud_account',
        assets: [
          {
            assetNos: numbers.cloudAccounts,
            assetExtendList: [{ extendCode: 'edition', extendValue: 'pro' }],
            products: [product('demo-cloud-designer', 'app-designer', 'Cloud Designer', 2)],
          },
        ],
      },
      {
        ...hq,
        sequence: 5,
        licenseType: 'normal_recover_usbkey',
        assets: [
          {
            assetNos: [numbers.lentLock],
            borrowedUsbKey: true,
            products: [product('demo-loaner', 'gms-1006', 'Loaner Base', 1)],
          },
        ],
      },
    ],
  };
}

export interface DemoEmployee {
  userName: string;
  name: string;
  departmentId: number;
  /** The asset numbers the administrator assigns to this employee (member op 9). */
  assets: (numbers: DemoNumbers) => string[];
}

/** Alice lends her first cloud account to the lent lock; the certificate stays hers to lend. */
export const EMPLOYEES: DemoEmployee[] = [
  {
    userName: 'alice',
    name: 'Alice Chen',
    departmentId: 1,
    assets: (n) => [n.cloudAccounts[0], n.certificate],
  },
  { userName: 'bob', name: 'Bob Martin', departmentId: 1, assets: (n) => [n.cloudAccounts[1], n.lock] },
  { userName: 'carol', name: 'Carol Diaz', departmentId: 2, assets: (n) => [n.cloudAccounts[2]] },
];
