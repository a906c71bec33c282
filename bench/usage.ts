import { sql } from 'kysely';
import type { Db } from '../src/db/client.js';
import type { RequestShape } from './load.js';

/** The usage bench's data: a year of hourly rollups for this many products (licenses). */
export const USAGE_PRODUCTS = 1000;
const HOURS = 365 * 24;
/**
 * Products one seeding statement writes (175,200 hourly rows): each statement well inside the pg
 * client's own 20 s query_timeout, which no `set statement_timeout` lifts.
 */
const SLICE = 20;

/**
 * Writes a year of hourly and daily seat rollups for USAGE_PRODUCTS licenses of 100 enterprises
 * (8.76 million hourly rows), with refusals every few hours: what the usage page reads after a
 * year of use. Written by SQL straight into the rollup tables, as the job would have left them.
 */
export async function seedUsage(db: Db): Promise<void> {
  const start = Math.floor(Date.now() / 3_600_000) * 3_600_000 - HOURS * 3_600_000;
  // Each slice in its own transaction with no statement time limit: the pool's statement_timeout
  // (15 s) is for requests; a slice of products keeps each statement short for the client's own timeout.
  const unlimited = (statement: (trx: Db) => Promise<unknown>) =>
    db.transaction().execute(async (trx) => {
      await sql`set local statement_timeout = 0`.execute(trx);
      await statement(trx);
    });
  for (let first = 1; first <= USAGE_PRODUCTS; first += SLICE) {
    const last = Math.min(USAGE_PRODUCTS, first + SLICE - 1);
    await unlimited((trx) =>
      sql`
        insert into usage_hourly (bucket, product_id, app_id, enterprise_id, product, asset_num,
                                  licensed_seats, peak_seats, seat_ms)
        select to_timestamp(${start / 1000}::float8) + h * interval '1 hour', -p, 'bench-app', p % 100,
               'BENCH-P' || (p % 250), 'BENCH-A' || p, 10,
               (abs(hashint4(p * 100000 + h)) % 11)::int, (abs(hashint4(p * 7 + h)) % 36000000)::bigint
          from generate_series(${first}::int, ${last}::int) p, generate_series(0, ${HOURS - 1}) h
      `.execute(trx),
    );
    await unlimited((trx) =>
      sql`
        insert into usage_daily (bucket, product_id, app_id, enterprise_id, product, asset_num,
                                 licensed_seats, peak_seats, seat_ms)
        select date_trunc('day', bucket, 'UTC'), product_id, app_id, max(enterprise_id), max(product),
               max(asset_num), max(licensed_seats), max(peak_seats), sum(seat_ms)
          from usage_hourly
         where app_id = 'bench-app' and product_id between ${-last} and ${-first}
         group by 1, product_id, app_id
      `.execute(trx),
    );
  }
  await unlimited((trx) =>
    sql`
      insert into usage_denials (bucket, product, enterprise_id, app_id, code, denied)
      select to_timestamp(${start / 1000}::float8) + h * interval '1 hour', 'BENCH-P' || p, p % 100,
             'bench-app', 90005, 1 + p % 3
        from generate_series(0, 249) p, generate_series(0, ${HOURS - 1}, 5) h
    `.execute(trx),
  );
  await unlimited((trx) => sql`analyze usage_hourly, usage_daily, usage_denials`.execute(trx));
}

/** The usage page's server side: a year by day over every product, with the licenses ranked. */
export function usageYear(authorization: string): RequestShape {
  const from = new Date(Date.now() - 365 * 86_400_000).toISOString();
  return {
    method: 'GET',
    path: () => `/admin/usage?bucket=day&from=${encodeURIComponent(from)}`,
    headers: { authorization },
    accept: (status) => status === 200,
  };
}

/** One product's year by day: what the page shows when a product is chosen. */
export function usageProductYear(authorization: string): RequestShape {
  const from = new Date(Date.now() - 365 * 86_400_000).toISOString();
  return {
    method: 'GET',
    path: () => `/admin/usage?bucket=day&product=BENCH-P7&from=${encodeURIComponent(from)}`,
    headers: { authorization },
    accept: (status) => status === 200,
  };
}

/**
 * The operator console's Usage page over the last year by day: the same report drawn as charts
 * and tables. The answer must show the year's first day in its filter, so a page that ignored the
 * range would not pass for one that read it.
 */
export function usagePageYear(cookie: string): RequestShape {
  const from = new Date(Date.now() - 365 * 86_400_000).toISOString().slice(0, 10);
  return {
    method: 'GET',
    path: () => `/console/operator/usage?bucket=day&from=${from}`,
    headers: { cookie },
    nonce: false,
    accept: (status, body) => status === 200 && body.includes(`value="${from}"`) && body.includes('<svg'),
  };
}
