import fs from 'node:fs';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openEmbedded } from '../src/db/client.js';
import { CLIENT_SCHEMA_FILE, renderClientSchema } from './client-schema.js';

/**
 * `npm run client:generate`: builds the app in this process on an empty in-memory database (no
 * request is served, so nothing is migrated), reads its OpenAPI document and rewrites the typed
 * client's schema. Default configuration, never the caller's environment: the output must not
 * depend on who ran it.
 */
async function main(): Promise<void> {
  const database = await openEmbedded({});
  try {
    const app = await buildApp({ config: loadConfig({}), db: database.db, adminKey: 'unused' });
    await app.ready();
    const document = app.swagger();
    await app.close();
    fs.writeFileSync(CLIENT_SCHEMA_FILE, await renderClientSchema(document));
    console.log(`wrote ${CLIENT_SCHEMA_FILE.pathname}`);
  } finally {
    await database.close();
  }
}

await main();
