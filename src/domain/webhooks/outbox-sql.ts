import { sql, type RawBuilder } from 'kysely';

/**
 * Whether the endpoint `ep` (of the app `ap`) receives the event `e`: its filter admits the type, and
 * its app is active and has one of the event's channels or is the event's own app. A disabled app
 * hears only of its disabling. The one rule of the outbox fan-out and of an operator's replay.
 */
export function endpointReceives(): RawBuilder<unknown> {
  return sql`(ep.event_types is null or e.type = any(ep.event_types))
         and ((ap.status = 'active' and (ep.app_id = e.app_id or ap.channels && e.channels))
              or (e.type = 'app.disabled' and ep.app_id = e.app_id))`;
}

/**
 * CTEs that put events into the outbox and fan them out to the endpoints subscribed to them,
 * for a statement that already has a CTE named `source` with the columns
 * `event_type, event_app, enterprise_id, customer_id, event_data` (event_type null: no event).
 * Part of the statement that writes the audit rows, so the events commit or roll back with them.
 *
 * An event's channels are those of its enterprise's customers and of its customer (an order's
 * customer may have no enterprise yet), or with `channelsOf` 'customer' its customer's only; an endpoint receives it when its app is active and has
 * one of those channels, or is the event's own app. A disabled app hears only of its disabling.
 */
export function outboxCtes(
  source: string,
  requestId: string | null,
  channelsOf: 'enterprise' | 'customer' = 'enterprise',
): RawBuilder<unknown> {
  // 'customer': only the customer's own channel, for events about what that channel sold (a
  // license's renewal is its seller's business, not every channel's serving the enterprise).
  const enterpriseChannels =
    channelsOf === 'enterprise'
      ? sql`select c.channel_code from customers c
              where c.enterprise_id = k.enterprise_id and c.channel_code is not null
             union`
      : sql``;
  // The channels are read once per distinct enterprise and customer, not once per event: a lock
  // call's 1,000 events name a handful of enterprises (bench/PROFILES.md, order op 6).
  return sql`
    wh_channels as materialized (
      select k.enterprise_id, k.customer_id,
             array(${enterpriseChannels}
                   select c.channel_code from customers c
                    where c.id = k.customer_id and c.channel_code is not null) as channels
        from (select distinct s.enterprise_id, s.customer_id
                from ${sql.table(source)} s where s.event_type is not null) as k
    ),
    wh_events as (
      insert into webhook_events (id, type, app_id, channels, enterprise_id, data, request_id)
      select 'evt_' || replace(gen_random_uuid()::text, '-', ''), s.event_type, s.event_app,
             k.channels, s.enterprise_id, s.event_data, ${requestId}::text
        from ${sql.table(source)} s
        -- Equalities over coalesced keys (no id is 0 or ''), so the join may hash.
        join wh_channels k on coalesce(k.enterprise_id, 0) = coalesce(s.enterprise_id, 0)
                          and coalesce(k.customer_id, '') = coalesce(s.customer_id, '')
       where s.event_type is not null
      returning id, type, app_id, channels
    ),
    wh_deliveries as (
      insert into webhook_deliveries (event_id, endpoint_id)
      select e.id, ep.id
        from wh_events e
        join webhook_endpoints ep on ep.status = 'enabled'
        join apps ap on ap.id = ep.app_id
       where ${endpointReceives()}
    )`;
}
