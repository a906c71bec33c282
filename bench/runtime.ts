import { randomBytes } from 'node:crypto';
import type { RequestShape } from './load.js';
import { customerId } from './seed.js';
import { CHANNEL, TARGET_TENANT } from './settings.js';
import type { Session } from './session.js';

// The runtime's hot path: many running copies heartbeating their leases. One lock of the target
// tenant carries a product without a seat limit; `count` machines check it out over HTTP as the
// licensed software would, then the scenario heartbeats them round robin.

const RUNTIME = '/runtime/v1';

export interface RunningCopy {
  leaseId: string;
  fingerprint: string;
}

interface Answer<T> {
  code: number | string;
  message: string;
  data: T;
}

async function call<T>(url: string, session: Session, path: string, body: unknown): Promise<T> {
  const nonce = randomBytes(12).toString('base64url');
  const response = await fetch(`${url}${path}${path.includes('?') ? '&' : '?'}g_nonce=${nonce}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${session.appToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as Answer<T>;
  if (answer.code !== 0) throw new Error(`${path}: ${String(answer.code)} ${answer.message}`);
  return answer.data;
}

/** A lock with an unlimited product, and `count` copies holding leases of it. */
export async function startCopies(url: string, session: Session, count: number): Promise<RunningCopy[]> {
  const tag = randomBytes(4).toString('hex');
  const assetNum = `RT-${tag}`;
  const crmProductId = `RT-P-${tag}`;
  await call(url, session, `/order/api/order/v1/licenseOrder/batchOrder?appKey=${session.appKey}`, {
    channelCode: CHANNEL,
    channelOrderId: `bench-runtime-${tag}`,
    syncMode: 'sync',
    orderList: [
      {
        sequence: 1,
        customerId: customerId(TARGET_TENANT),
        orderType: 'new_buy',
        licenseType: 'softkey',
        assets: [
          {
            assetNos: [assetNum],
            products: [{ crmProductId, productUri: crmProductId, productName: 'Bench runtime' }],
          },
        ],
      },
    ],
  });
  const copies: RunningCopy[] = [];
  for (let i = 0; i < count; i += 1) {
    const fingerprint = `bench-${tag}-${i}`;
    const lease = await call<{ leaseId: string }>(url, session, `${RUNTIME}/leases`, {
      assetNum,
      crmProductId,
      fingerprint,
    });
    copies.push({ leaseId: lease.leaseId, fingerprint });
  }
  return copies;
}

/** One heartbeat a request, through the copies in turn. */
export function heartbeat(session: Session, copies: readonly RunningCopy[]): RequestShape {
  let next = 0;
  return {
    method: 'POST',
    path: () => {
      const copy = copies[next % copies.length] as RunningCopy;
      return `${RUNTIME}/leases/${copy.leaseId}/heartbeat`;
    },
    headers: { authorization: `Bearer ${session.appToken}`, 'content-type': 'application/json' },
    // path() and body() are called in turn for each request: body() moves to the next copy.
    body: () => {
      const copy = copies[next % copies.length] as RunningCopy;
      next += 1;
      return JSON.stringify({ fingerprint: copy.fingerprint });
    },
  };
}

/** The live leases the server counts for the copies' product: all of them, no more. */
export async function liveLeases(
  url: string,
  adminKey: string,
  copies: readonly RunningCopy[],
): Promise<number> {
  const ids = new Set(copies.map((c) => c.leaseId));
  const response = await fetch(`${url}/admin/runtime/leases?limit=1000`, {
    headers: { authorization: `Bearer ${adminKey}` },
  });
  const leases = (await response.json()) as Array<{ id: string }>;
  return leases.filter((l) => ids.has(l.id)).length;
}
