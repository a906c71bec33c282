import { sql } from 'kysely';
import type { Db } from '../src/db/client.js';
import { summarize, type Measured } from './load.js';
import { productOf } from './requests.js';
import { assetNum, customerId } from './seed.js';
import { BATCH_SHAPE, CHANNEL, SMALL_TENANTS, TENANT, type Timing } from './settings.js';

// R2: the product rows one batchOrder call writes, inserted with one unnest statement and nothing
// else (no HTTP, no validation, no customers, assets or orders): the ceiling for order writes.

interface Row {
  assetId: string;
  customerId: string;
  crmProductId: string;
  productUri: string;
  productName: string;
  gmsPid: string;
  productType: string;
  start: number;
  end: number;
  concurrent: number;
}

let call = 0;

/** The batch's 1,000 rows, on seeded assets of the tenants the batch scenario orders for. */
async function rowsOfOneBatch(db: Db): Promise<Row[]> {
  const { orders, assetsPerOrder, productsPerAsset } = BATCH_SHAPE;
  call += 1;
  const wanted = Array.from({ length: orders * assetsPerOrder }, (_, i) => {
    const tenant = (i % SMALL_TENANTS) + 1;
    return assetNum((tenant - 1) * TENANT.assets + 1 + Math.floor(i / SMALL_TENANTS));
  });
  const found = await db
    .selectFrom('assets')
    .select(['id', 'asset_num', 'customer_id'])
    .where('asset_num', 'in', wanted)
    .execute();
  return found.flatMap((asset, a) =>
    Array.from({ length: productsPerAsset }, (_, p) => {
      const product = productOf(`raw-${call}-${a}`, p);
      return {
        assetId: asset.id,
        customerId: asset.customer_id,
        crmProductId: product.crmProductId,
        productUri: product.productUri,
        productName: product.productName,
        gmsPid: product.gmsPid,
        productType: product.productType,
        start: product.limitStartDate,
        end: product.limitEndDate,
        concurrent: product.limitConcurrent,
      };
    }),
  );
}

async function insert(db: Db, rows: Row[], order: string): Promise<void> {
  const col = <K extends keyof Row>(k: K) => rows.map((r) => r[k]);
  await sql`
    insert into product_instances (asset_id, license_order_id, channel_order_id, channel_code, customer_id,
      license_type, crm_product_id, product_uri, gms_pid, product_name, product_type, limit_start_time,
      limit_end_time, limit_concurrent, passwords, features)
    select v.asset_id, ${order}, ${order}, ${CHANNEL}, v.customer_id, 'softkey', v.crm, v.uri, v.gms, v.name,
           v.type, v.ls, v.le, v.concurrent, '[]', '[]'
      from unnest(${col('assetId')}::text[], ${col('customerId')}::text[], ${col('crmProductId')}::text[],
                  ${col('productUri')}::text[], ${col('gmsPid')}::text[], ${col('productName')}::text[],
                  ${col('productType')}::text[], ${col('start')}::bigint[], ${col('end')}::bigint[],
                  ${col('concurrent')}::int[])
           as v(asset_id, customer_id, crm, uri, gms, name, type, ls, le, concurrent)
  `.execute(db);
}

/** Rows per second over `connections` concurrent writers, each inserting one batch's rows a statement. */
export async function measureRawInsert(
  db: Db,
  connections: number,
  timing: Timing,
): Promise<Measured & { rowsPerSecond: number }> {
  const rows = await rowsOfOneBatch(db);
  if (rows.length !== BATCH_SHAPE.orders * BATCH_SHAPE.assetsPerOrder * BATCH_SHAPE.productsPerAsset) {
    throw new Error(`R2 found ${rows.length} rows to write`);
  }
  const run = async (seconds: number): Promise<{ times: number[]; seconds: number }> => {
    const times: number[] = [];
    const started = process.hrtime.bigint();
    const deadline = Date.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: connections }, async (_, c) => {
        while (Date.now() < deadline) {
          const t0 = process.hrtime.bigint();
          await insert(db, rows, `raw-${customerId(1)}-${c}`);
          times.push(Number(process.hrtime.bigint() - t0) / 1e6);
        }
      }),
    );
    return { times, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
  };
  await run(timing.warmupSeconds);
  const { times, seconds } = await run(timing.seconds);
  const measured = summarize(times, seconds);
  return { ...measured, rowsPerSecond: measured.requestsPerSecond * rows.length };
}
