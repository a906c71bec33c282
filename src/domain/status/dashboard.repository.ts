import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { AppStatus } from '../apps/apps.repository.js';
import { CONSOLE_CLIENT_KEY } from '../console/console-client.js';

/** How many recent issues of asset numbers the dashboard adds up, at most. */
export const ISSUE_RUNS_SCANNED = 10_000;

export interface DashboardCounts {
  apps: Record<AppStatus, number>;
  enterprises: number;
  /** Live members of every enterprise. */
  members: number;
  /** License orders of the batches received in the last hour. */
  ordersLastHour: number;
  /** Async license orders still waiting for the worker. */
  ordersPending: number;
  /** License orders failed, of the batches received in the last 24 hours. */
  ordersFailedLastDay: number;
  /** Asset numbers issued in the last 24 hours (over the latest ISSUE_RUNS_SCANNED issues). */
  numbersIssuedLastDay: number;
  /** True when the last day held more issues than were added up: the number is a lower bound. */
  numbersIssuedCapped: boolean;
}

/**
 * The operator dashboard's counts. Each is bounded by an index or by a small table, so the page
 * stays cheap however large the order history grows: nothing here scans license_orders, members
 * or the issue log as a whole.
 */
export class DashboardRepository {
  constructor(private readonly db: Db) {}

  async counts(now: Date): Promise<DashboardCounts> {
    const hourAgo = new Date(now.getTime() - 3600_000);
    const dayAgo = new Date(now.getTime() - 86_400_000);
    const [apps, enterprises, recent, pending, issued] = await Promise.all([
      // A handful of rows: the operator's channel apps. The console's own client is no channel's:
      // the Apps page shows it apart.
      this.db
        .selectFrom('apps')
        .select(['status', sql<string>`count(*)`.as('n')])
        .where('app_key', '<>', CONSOLE_CLIENT_KEY)
        .groupBy('status')
        .execute(),
      // One row per enterprise; members come from the count triggers keep (0030), not from members.
      this.db
        .selectFrom('enterprises')
        .select([
          sql<string>`count(*)`.as('enterprises'),
          sql<string>`coalesce(sum(member_count), 0)`.as('members'),
        ])
        .executeTakeFirstOrThrow(),
      // Batches of the last day by order_batches_created_idx, their orders by license_orders_batch_idx.
      this.db
        .selectFrom('order_batches as b')
        .innerJoin('license_orders as o', 'o.batch_id', 'b.id')
        .where('b.created_at', '>=', dayAgo)
        .select([
          sql<string>`count(*) filter (where b.created_at >= ${hourAgo})`.as('last_hour'),
          sql<string>`count(*) filter (where o.status = 'failed')`.as('failed'),
        ])
        .executeTakeFirstOrThrow(),
      // The queue's partial index (license_orders_pending_idx) holds only what is still to do.
      this.db
        .selectFrom('license_orders')
        .where('status', '=', 'pending')
        .select(sql<string>`count(*)`.as('n'))
        .executeTakeFirstOrThrow(),
      // The newest issues by primary key; ids grow with time, so the last day is at the end.
      sql<{ numbers: string | null; runs: string }>`
        select sum(cardinality(r.asset_nums)) filter (where r.created_at >= ${dayAgo}) as numbers,
               count(*) as runs,
               bool_and(r.created_at >= ${dayAgo}) as all_recent
          from (select asset_nums, created_at from issued_asset_number_runs
                 order by id desc limit ${ISSUE_RUNS_SCANNED}) r
      `.execute(this.db),
    ]);
    const byStatus: Record<AppStatus, number> = { pending: 0, active: 0, disabled: 0 };
    for (const row of apps) byStatus[row.status] = Number(row.n);
    const issuedRow = issued.rows[0] as { numbers: string | null; runs: string; all_recent: boolean | null };
    return {
      apps: byStatus,
      enterprises: Number(enterprises.enterprises),
      members: Number(enterprises.members),
      ordersLastHour: Number(recent.last_hour),
      ordersPending: Number(pending.n),
      ordersFailedLastDay: Number(recent.failed),
      numbersIssuedLastDay: Number(issuedRow.numbers ?? 0),
      numbersIssuedCapped: Number(issuedRow.runs) >= ISSUE_RUNS_SCANNED && issuedRow.all_recent === true,
    };
  }
}
