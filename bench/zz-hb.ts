import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createPostgres } from './databases.js';
import { measure } from './load.js';
import { startKeyward, startReference } from './processes.js';
import * as requests from './requests.js';
import { heartbeat, liveLeases, startCopies } from './runtime.js';
import { finishSeeding, seedTenants } from './seed.js';
import { openSession } from './session.js';

async function main() {
const adminKey = randomBytes(24).toString('base64url');
const database = await createPostgres('postgres://postgres@127.0.0.1:5432/test');
await seedTenants(database.handle.db, 1, 20);
await finishSeeding(database.handle.db);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hb-'));
const server = await startKeyward({ DATABASE_URL: database.url, KEYWARD_ADMIN_KEY: adminKey, DATA_DIR: dataDir });
const session = await openSession(server.url, adminKey);
const copies = await startCopies(server.url, session, 1000);
const reference = await startReference(database.url);
const plan = { connections: 50, warmupSeconds: 2, seconds: 8 };
for (let i = 0; i < 2; i++) {
  const r1 = await measure(reference.url, requests.referenceRead(), plan);
  const hb = await measure(server.url, heartbeat(session, copies), plan);
  const op3 = await measure(server.url, requests.queryEnterprises(session), plan);
  console.log(JSON.stringify({ r1: r1.requestsPerSecond, hb: hb.requestsPerSecond, hbP50: hb.p50, op3: op3.requestsPerSecond, ratio: hb.requestsPerSecond / r1.requestsPerSecond, op3ratio: op3.requestsPerSecond / r1.requestsPerSecond }));
}
console.log('live', await liveLeases(server.url, adminKey, copies));
await reference.stop();
await server.stop();

process.exit(0);
}
void main();
