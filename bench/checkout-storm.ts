import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../src/db/client.js';
import { freshNonce, summarize, type Measured } from './load.js';
import { customerId } from './seed.js';
import { CHANNEL, TARGET_TENANT } from './settings.js';
import type { Session } from './session.js';

// Monday 9:00: every machine of every customer starts its licensed program within a minute. `licenses`
// locks each carry the same product with `seats` seats; `machines` check out at an even rate over
// `seconds` (arrivals on a clock, not waiting for answers: a slow server meets more at once, as it
// would), each for one lock, so that some meet a full license. Every check-out must be answered (a
// lease or 90005), no license may hold more leases than seats, and the p99 is the row's number.

export interface StormSettings {
  licenses: number;
  seats: number;
  machines: number;
  seconds: number;
}

export interface StormResult {
  latency: Measured;
  granted: number;
  refused: number;
  /** Answers other than a lease or 90005, or no answer. */
  failed: number;
  firstFailure: string;
  /** Licenses holding more live leases than seats, after the storm. */
  overGranted: number;
}

/** One sync batchOrder giving each of `assetNos` (locks of the target tenant) `product`. */
export async function batchOrder(
  url: string,
  session: Session,
  assetNos: string[],
  product: Record<string, unknown>,
) {
  const response = await fetch(
    `${url}/order/api/order/v1/licenseOrder/batchOrder?appKey=${session.appKey}&g_nonce=${freshNonce()}`,
    {
      method: 'POST',
      headers: { authorization: `Bearer ${session.appToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        channelCode: CHANNEL,
        channelOrderId: `bench-storm-${randomBytes(6).toString('hex')}`,
        syncMode: 'sync',
        orderList: [
          {
            sequence: 1,
            customerId: customerId(TARGET_TENANT),
            orderType: 'new_buy',
            licenseType: 'normal_recover_usbkey',
            assets: [{ assetNos, products: [product] }],
          },
        ],
      }),
    },
  );
  const answer = (await response.json()) as { code: unknown; message?: string };
  if (answer.code !== 0) throw new Error(`storm seed: ${JSON.stringify(answer)}`);
}

export async function runCheckoutStorm(
  url: string,
  session: Session,
  db: Db,
  settings: StormSettings,
): Promise<StormResult> {
  const tag = randomBytes(4).toString('hex');
  const crmProductId = `STORM-${tag}`;
  const locks = Array.from({ length: settings.licenses }, (_, i) => `ST-${tag}-${i}`);
  for (let i = 0; i < locks.length; i += 1000) {
    await batchOrder(url, session, locks.slice(i, i + 1000), {
      crmProductId,
      productUri: crmProductId,
      productName: 'Monday morning',
      limitStartDate: Date.now() - 86_400_000,
      limitEndDate: Date.now() + 30 * 86_400_000,
      limitConcurrent: settings.seats,
    });
  }

  const interval = (settings.seconds * 1000) / settings.machines;
  const times: number[] = [];
  let granted = 0;
  let refused = 0;
  let failed = 0;
  let firstFailure = '';
  const started = performance.now();
  const one = async (machine: number): Promise<void> => {
    const assetNum = locks[machine % locks.length] as string;
    const sent = performance.now();
    try {
      const response = await fetch(`${url}/runtime/v1/leases?g_nonce=${freshNonce()}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${session.appToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ assetNum, crmProductId, fingerprint: `storm-${tag}-${machine}` }),
      });
      const text = await response.text();
      times.push(performance.now() - sent);
      if (text.startsWith('{"code":0,')) granted += 1;
      else if (text.includes('"code":"90005"')) refused += 1;
      else {
        failed += 1;
        firstFailure ||= `${response.status} ${text.slice(0, 200)}`;
      }
    } catch (error) {
      failed += 1;
      firstFailure ||= String(error);
    }
  };
  // Machines in a shuffled order, so the seats of one lock are asked for across the minute.
  const order = Array.from({ length: settings.machines }, (_, i) => i).sort(() => Math.random() - 0.5);
  const pending: Array<Promise<void>> = [];
  for (let i = 0; i < order.length; i += 1) {
    const due = started + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(one(order[i] as number));
  }
  await Promise.all(pending);
  const seconds = (performance.now() - started) / 1000;

  const over = await sql<{ over: number }>`
    select count(*)::int as over from (
      select l.product_id
        from runtime_leases l
        join product_instances p on p.id = l.product_id
       where p.crm_product_id = ${crmProductId} and l.ended_at is null and l.expires_at > now()
       group by l.product_id
      having count(*) > ${settings.seats}
    ) t`.execute(db);
  return {
    latency: summarize(times, seconds),
    granted,
    refused,
    failed,
    firstFailure,
    overGranted: over.rows[0]?.over ?? -1,
  };
}
