import fs from 'node:fs';
import type { Db } from '../../../src/db/client.js';
import { openEmbedded, openPostgres } from '../../../src/db/client.js';

/** What one batch left in the database. */
export interface BatchState {
  batches: number;
  orders: number;
  completed: number;
  assets: number;
  products: number;
}

export interface SentBatch {
  body: Record<string, unknown>;
  assetNums: string[];
}

/**
 * Counts per batch, by channel order id and asset numbers, read in one snapshot: a killed client's
 * COMMIT may still land on PostgreSQL after the kill, and four reads on four connections could each
 * see a different side of it.
 */
export async function batchStates(db: Db, sent: SentBatch[]): Promise<BatchState[]> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute((trx) => statesIn(trx, sent));
}

async function statesIn(db: Db, sent: SentBatch[]): Promise<BatchState[]> {
  const ids = sent.map((s) => s.body.channelOrderId as string);
  const nums = sent.flatMap((s) => s.assetNums);
  const batches = await db
    .selectFrom('order_batches')
    .select('channel_order_id')
    .where('channel_order_id', 'in', ids)
    .execute();
  const [orders, assets, products] = [
    await db
      .selectFrom('license_orders')
      .select(['channel_order_id', 'status'])
      .where('channel_order_id', 'in', ids)
      .execute(),
    await db.selectFrom('assets').select('asset_num').where('asset_num', 'in', nums).execute(),
    await db
      .selectFrom('product_instances as p')
      .innerJoin('assets as s', 's.id', 'p.asset_id')
      .select('s.asset_num')
      .where('s.asset_num', 'in', nums)
      .where('p.revoked', '=', false)
      .execute(),
  ];
  return sent.map((s) => {
    const id = s.body.channelOrderId as string;
    const own = new Set(s.assetNums);
    const mine = orders.filter((o) => o.channel_order_id === id);
    return {
      batches: batches.filter((b) => b.channel_order_id === id).length,
      orders: mine.length,
      completed: mine.filter((o) => o.status === 'completed').length,
      assets: assets.filter((a) => own.has(a.asset_num)).length,
      products: products.filter((p) => own.has(p.asset_num)).length,
    };
  });
}

/**
 * Runs `read` on the server's database: PostgreSQL at any time; the embedded one only while no
 * server holds it, opened here (taking over the lock a killed server left behind).
 */
export async function onDatabase<T>(
  target: { url: string } | { dataDir: string },
  read: (db: Db) => Promise<T>,
): Promise<T> {
  const handle =
    'url' in target ? await openPostgres(target.url) : await openEmbedded({ dataDir: target.dataDir });
  try {
    return await read(handle.db);
  } finally {
    await handle.close();
  }
}

/** The pid in the embedded database's lock file, if there is one. */
export function lockOwner(dataDir: string): number | undefined {
  try {
    return Number(fs.readFileSync(`${dataDir}/keyward.lock`, 'utf8'));
  } catch {
    return undefined;
  }
}
