import { sql, type RawBuilder } from 'kysely';

/**
 * A relay's usage is kept in the rollups under the app id `relay:<relay id>` (docs/relay.md): one
 * place says so, for the importer that writes those rows and the reports that pick them out.
 */
const RELAY_APP_PREFIX = 'relay:';

export function relayAppId(relayId: string): string {
  return `${RELAY_APP_PREFIX}${relayId}`;
}

/** Whether a rollup row's app id is a relay's. */
export function isRelayApp(column: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`${column} like ${`${RELAY_APP_PREFIX}%`}`;
}

/** The relay id a relay's app id names. */
export function relayIdOf(column: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`substr(${column}, ${RELAY_APP_PREFIX.length + 1})`;
}
