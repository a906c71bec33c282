import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import type { Db } from '../src/db/client.js';
import { createPostgres } from './databases.js';
import { cpuMsOf } from './fleet-meter.js';
import { measure, type RequestShape } from './load.js';
import { startKeyward, startReference } from './processes.js';
import * as requests from './requests.js';
import { checkOuts, prime } from './busy-license.js';
import { batchOrder } from './checkout-storm.js';
import { heartbeat, startCopies } from './runtime.js';
import { finishSeeding, seedTenants } from './seed.js';
import { openSession } from './session.js';
import { BATCH_CONNECTIONS, READ_CONNECTIONS, RUNTIME_COPIES, SMALL_TENANTS } from './settings.js';

// `npx tsx bench/cpu-budget.ts`: where a request's CPU goes. The load generator, the server and
// PostgreSQL share the machine's cores, so a scenario's throughput relative to R1 is set by the
// CPU each request costs all three together. For R1, the read scenarios and batchOrder this prints that cost
// per request, split by process (from /proc, Linux only), on the small data set.

function cpuSecondsOf(pid: number): number {
  return (cpuMsOf(pid) ?? 0) / 1000;
}

/**
 * The CPU of the PostgreSQL processes serving the bench database (the servers' pools) and of its
 * background processes (WAL writer, checkpointer…), not of other databases' backends.
 */
async function postgresSeconds(db: Db): Promise<Map<number, number>> {
  const result = await sql<{ pid: number }>`
    select pid from pg_stat_activity where datname = current_database() or datname is null
  `.execute(db);
  return new Map(result.rows.map((row) => [row.pid, cpuSecondsOf(row.pid)]));
}

/** What the processes used between two readings; one started meanwhile counts from zero. */
function postgresDelta(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0);
  return total;
}

function ownSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

const plan = { connections: READ_CONNECTIONS, warmupSeconds: 2, seconds: 8 };

async function budget(
  name: string,
  url: string,
  pid: number,
  shape: RequestShape,
  connections = READ_CONNECTIONS,
): Promise<void> {
  const db = database.handle.db;
  const [server0, postgres0, load0] = [cpuSecondsOf(pid), await postgresSeconds(db), ownSeconds()];
  const measured = await measure(url, shape, { ...plan, connections });
  const [server1, postgres1, load1] = [cpuSecondsOf(pid), await postgresSeconds(db), ownSeconds()];
  // The warm-up's requests ran at about the measured rate and were charged too.
  const count = measured.requestsPerSecond * (plan.seconds + plan.warmupSeconds);
  const micros = [server1 - server0, postgresDelta(postgres0, postgres1), load1 - load0].map(
    (seconds) => (seconds * 1e6) / count,
  );
  const [server = 0, postgres = 0, load = 0] = micros;
  console.log(
    `| ${name} | ${measured.requestsPerSecond.toFixed(0)} | ${server.toFixed(0)} | ${postgres.toFixed(0)} | ${load.toFixed(0)} | ${(server + postgres + load).toFixed(0)} |`,
  );
}

const adminKey = randomBytes(24).toString('base64url');
const database = await createPostgres(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-budget-'));
try {
  await seedTenants(database.handle.db, 1, SMALL_TENANTS);
  await finishSeeding(database.handle.db);
  const server = await startKeyward({
    DATABASE_URL: database.url,
    KEYWARD_ADMIN_KEY: adminKey,
    DATA_DIR: dataDir,
  });
  const session = await openSession(server.url, adminKey);
  const copies = await startCopies(server.url, session, RUNTIME_COPIES);
  console.log('| scenario | req/s | server µs | PostgreSQL µs | load generator µs | total µs |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  const reference = await startReference(database.url);
  await budget('R1', reference.url, reference.pid, requests.referenceRead());
  await reference.stop();
  await budget('order op 3', server.url, server.pid, requests.queryEnterprises(session));
  await budget('member op 5', server.url, server.pid, requests.listMembers(session));
  await budget('runtime heartbeat', server.url, server.pid, heartbeat(session, copies));
  // Check-outs of one site licence by new machines, 50 at once as at 9:00: seats enough that none
  // is refused, and its slots made beforehand, so this prices taking a seat.
  const crmProductId = `BUDGET-${randomBytes(4).toString('hex')}`;
  const license = { assetNum: `BG-${crmProductId}`, crmProductId };
  await batchOrder(server.url, session, [license.assetNum], {
    crmProductId,
    productUri: crmProductId,
    productName: 'Site licence',
    limitConcurrent: 100_000,
  });
  await prime(server.url, session, license);
  await budget('runtime check-out', server.url, server.pid, checkOuts(session, [license], 'budget'), 50);
  await budget(
    'batchOrder (per call)',
    server.url,
    server.pid,
    requests.batchOrder(session),
    BATCH_CONNECTIONS,
  );
  await server.stop();
} finally {
  await database.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
