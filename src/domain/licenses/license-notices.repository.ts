import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { outboxCtes } from '../webhooks/outbox-sql.js';
import { licensesEndingWithin, type EndRange } from './expiring-licenses.repository.js';

export const DAY_MS = 86_400_000;

/** What one pass of the notices looks at. */
export interface NoticePass {
  now: Date;
  /** Days before the end a `license.expiring` is due at; empty: none. */
  noticeDays: readonly number[];
  /**
   * The ends to look at: every end a notice could be due for (a full pass), or only those that
   * crossed a threshold since the last pass (see LicensesService). Which notice is due is judged
   * the same either way; the ranges only bound what is read.
   */
  ranges: readonly EndRange[];
  /** At most this many notices in the pass's one statement. */
  batch: number;
}

/** The license's ISO end, as every time in an event is written. */
const ENDS_AT_ISO = sql`to_char(to_timestamp(n.ends_at / 1000.0) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

export class LicenseNoticesRepository {
  constructor(private readonly db: Db) {}

  /**
   * Sends the notices due now, at most `batch`, in one statement: each license near its end gets
   * the one notice for the smallest threshold its time left is within (a license first seen 10
   * days before its end gets the 30-day notice; the 7-day one follows at 7 days), a license whose
   * end passed gets `license.expired`. Each is recorded in license_notices with ON CONFLICT DO
   * NOTHING, and only the rows that went in get an audit row and a webhook event: of several
   * instances running this at once, the one whose insert won writes them, the others nothing.
   * Answers how many notices this call sent.
   */
  async sendDue(pass: NoticePass): Promise<number> {
    const nowMs = pass.now.getTime();
    if (pass.ranges.length === 0) return 0;
    const result = await sql<{ sent: number }>`
      with ending as (${licensesEndingWithin(pass.ranges)}),
      judged as (
        select x.product_id, x.ends_at,
               case when x.ends_at <= ${nowMs}::bigint then 0
                    else (select min(t) from unnest(${[...pass.noticeDays]}::int[]) t
                           where x.ends_at - ${nowMs}::bigint <= t::bigint * ${DAY_MS}::bigint) end as days
          from ending x
      ),
      pending as (
        select j.product_id, j.ends_at, j.days from judged j
         where j.days is not null
           and not exists (select 1 from license_notices n
                            where n.product_id = j.product_id and n.ends_at = j.ends_at and n.days = j.days)
         order by j.ends_at, j.product_id
         limit ${pass.batch}
      ),
      noticed as (
        insert into license_notices (product_id, ends_at, days)
        select product_id, ends_at, days from pending
        on conflict do nothing
        returning product_id, ends_at, days
      ),
      notice as (
        select case when n.days = 0 then 'license.expired' else 'license.expiring' end as action,
               a.asset_num as subject, c.enterprise_id, p.customer_id, o.app_id,
               jsonb_build_object(
                 'assetId', a.id, 'crmProductId', p.crm_product_id, 'productUri', p.product_uri,
                 'productName', p.product_name, 'limitConcurrent', p.limit_concurrent,
                 'endsAt', ${ENDS_AT_ISO}, 'licenseOrderId', p.license_order_id,
                 'customerId', p.customer_id, 'channelCode', c.channel_code, 'appKey', ap.app_key)
               || case when n.days > 0 then jsonb_build_object('daysBefore', n.days) else '{}'::jsonb end
                 as data
          from noticed n
          join product_instances p on p.id = n.product_id
          join assets a on a.id = p.asset_id
          join customers c on c.id = p.customer_id
          left join license_orders o on o.id = p.license_order_id
          left join apps ap on ap.id = o.app_id
      ),
      audited as (
        insert into audit_log (action, subject, enterprise_id, detail)
        select s.action, s.subject, s.enterprise_id, s.data || jsonb_build_object('appId', s.app_id)
          from notice s
      ),
      -- As eventOf makes it of the audit row (EVENT_OF_ACTION): the subject named, the app's id kept inside.
      source as (
        select s.action as event_type, s.app_id as event_app, s.enterprise_id, s.customer_id,
               jsonb_build_object('assetNum', s.subject) || s.data as event_data
          from notice s
      ),
      ${outboxCtes('source', null, 'customer')}
      select count(*)::int as sent from noticed
    `.execute(this.db);
    return result.rows[0]?.sent ?? 0;
  }

  /** Forgets notices of ends before `before` (no pass looks that far back), at most `limit`. */
  async prune(before: number, limit: number): Promise<number> {
    const result = await sql`
      delete from license_notices
       where (product_id, ends_at, days) in (
         select product_id, ends_at, days from license_notices where ends_at < ${before}::bigint limit ${limit})
    `.execute(this.db);
    return Number(result.numAffectedRows ?? 0);
  }
}
