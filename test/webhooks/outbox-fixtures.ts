import { sql } from 'kysely';
import { appIdOf } from '../http/audit-helpers.js';
import type { Harness } from '../support/harness.js';

/**
 * `count` events of the app itself, all at `at`, written straight into the outbox (the fixtures
 * would take too long to make thousands): ids `${idPrefix}1` … `${idPrefix}${count}`. What a
 * replay of a range around `at` finds.
 */
export async function insertAppEvents(
  h: Harness,
  appKey: string,
  events: { idPrefix: string; at: Date; count: number },
): Promise<void> {
  const appId = await appIdOf(h, appKey);
  await sql`
    insert into webhook_events (id, type, occurred_at, app_id, data)
    select ${events.idPrefix} || n, 'asset.locked', ${events.at}::timestamptz, ${appId}, '{}'::jsonb
      from generate_series(1, ${events.count}::int) n
  `.execute(h.database.db);
}

/**
 * `count` events of the app written straight into the outbox, each queued to every one of
 * `endpointIds`, due at `due`: a backlog in two statements instead of thousands of changes. The
 * events' ids are `${idPrefix}1` … `${idPrefix}${count}`.
 */
export async function queueAppEvents(
  h: Harness,
  appKey: string,
  endpointIds: readonly string[],
  events: { idPrefix: string; count: number; due: Date; at?: Date },
): Promise<void> {
  await insertAppEvents(h, appKey, {
    idPrefix: events.idPrefix,
    at: events.at ?? events.due,
    count: events.count,
  });
  await sql`
    insert into webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at)
    select ${events.idPrefix} || n, ep, ${events.due}::timestamptz, ${events.due}::timestamptz
      from generate_series(1, ${events.count}::int) n, unnest(${endpointIds}::text[]) ep
  `.execute(h.database.db);
}
