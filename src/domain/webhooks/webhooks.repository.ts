import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/client.js';
import type { WebhookEndpointsTable } from '../../db/schema.js';

/** An endpoint as its app sees it: never its secret. */
export interface EndpointRecord {
  id: string;
  appId: string;
  url: string;
  eventTypes: string[] | null;
  status: 'enabled' | 'disabled';
  disabledReason: string | null;
  consecutiveFailures: number;
  /** Until when the previous secret still signs, after a rotation. */
  previousSecretUntil: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const columns = [
  'id',
  'app_id',
  'url',
  'event_types',
  'status',
  'disabled_reason',
  'consecutive_failures',
  'previous_secret_until',
  'created_at',
  'updated_at',
] as const;

type Row = Selectable<Pick<WebhookEndpointsTable, (typeof columns)[number]>>;

function toRecord(r: Row): EndpointRecord {
  return {
    id: r.id,
    appId: r.app_id,
    url: r.url,
    eventTypes: r.event_types,
    status: r.status,
    disabledReason: r.disabled_reason,
    consecutiveFailures: r.consecutive_failures,
    previousSecretUntil: r.previous_secret_until,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Endpoints, always within one app: another app's endpoint is not found. */
export class WebhookEndpointsRepository {
  constructor(private readonly db: Db) {}

  async count(appId: string): Promise<number> {
    const row = await this.db
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('app_id', '=', appId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async insert(e: { id: string; appId: string; url: string; eventTypes: string[] | null; secret: string }) {
    const row = await this.db
      .insertInto('webhook_endpoints')
      .values({ id: e.id, app_id: e.appId, url: e.url, event_types: e.eventTypes, secret: e.secret })
      .returning(columns)
      .executeTakeFirstOrThrow();
    return toRecord(row);
  }

  async list(appId: string): Promise<EndpointRecord[]> {
    const rows = await this.db
      .selectFrom('webhook_endpoints')
      .select(columns)
      .where('app_id', '=', appId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toRecord);
  }

  async find(appId: string, id: string): Promise<EndpointRecord | undefined> {
    const row = await this.db
      .selectFrom('webhook_endpoints')
      .select(columns)
      .where('app_id', '=', appId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** A new url or filter; `enable` also re-enables a disabled endpoint and clears its failures. */
  async update(
    appId: string,
    id: string,
    change: { url?: string; eventTypes?: string[] | null; enable?: boolean },
  ): Promise<EndpointRecord | undefined> {
    const row = await this.db
      .updateTable('webhook_endpoints')
      .set({
        // A new address, or an endpoint its app says is fixed, is tried at once: no pause left over.
        ...(change.url === undefined ? {} : { url: change.url, consecutive_timeouts: 0, paused_until: null }),
        ...(change.eventTypes === undefined ? {} : { event_types: change.eventTypes }),
        ...(change.enable === true
          ? {
              status: 'enabled',
              disabled_reason: null,
              consecutive_failures: 0,
              failing_since: null,
              consecutive_timeouts: 0,
              paused_until: null,
            }
          : {}),
        updated_at: sql<Date>`now()`,
      })
      .where('app_id', '=', appId)
      .where('id', '=', id)
      .returning(columns)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** The new secret signs from now on; the old one as well until `overlapUntil`. */
  async rotate(
    appId: string,
    id: string,
    secret: string,
    overlapUntil: Date,
  ): Promise<EndpointRecord | undefined> {
    const row = await this.db
      .updateTable('webhook_endpoints')
      .set({
        previous_secret: sql<string>`secret`,
        previous_secret_until: overlapUntil,
        secret,
        updated_at: sql<Date>`now()`,
      })
      .where('app_id', '=', appId)
      .where('id', '=', id)
      .returning(columns)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** One endpoint of the app, locked to the transaction: what an update changes it from. */
  async lock(appId: string, id: string): Promise<EndpointRecord | undefined> {
    const row = await this.db
      .selectFrom('webhook_endpoints')
      .select(columns)
      .where('app_id', '=', appId)
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** Deletes the endpoint with its deliveries and their attempts; answers what it was. */
  async delete(appId: string, id: string): Promise<EndpointRecord | undefined> {
    const row = await this.db
      .deleteFrom('webhook_endpoints')
      .where('app_id', '=', appId)
      .where('id', '=', id)
      .returning(columns)
      .executeTakeFirst();
    return row && toRecord(row);
  }
}
