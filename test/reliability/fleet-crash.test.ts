import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrl } from '../support/database.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import {
  appToken,
  call,
  createApp,
  freshId,
  okData,
  orderHeaders,
  postBatch,
  product,
  purchaseBatch,
  RUNTIME,
} from './support/live-api.js';

// kill -9 in the middle of a fleet's heartbeats, most of which write nothing (ADR 20), then a
// restart on the same database: no seat is handed out twice, the running machines keep theirs, and
// a machine whose heartbeats stopped frees its seat within RUNTIME_LEASE_SECONDS of its last beat,
// never sooner than two and a half heartbeat intervals after it. Leases live 45 s here; the interval is 10 s.
const url = testDatabaseUrl();
const LEASE_S = 45;
const INTERVAL_S = 10;
const SEATS = 6;
const ADMIN_KEY = randomBytes(16).toString('hex');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-fleet-crash-'));
const env = {
  DATABASE_URL: url ?? '',
  DATA_DIR: dataDir,
  KEYWARD_ADMIN_KEY: ADMIN_KEY,
  RUNTIME_LEASE_SECONDS: String(LEASE_S),
};
let server: ServerProcess | undefined;

const running = (): ServerProcess => {
  if (!server) throw new Error('no server');
  return server;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Machine {
  fingerprint: string;
  leaseId?: string;
  /** When its last heartbeat (or check-out) was answered. */
  lastBeat: number;
}

let token: string;
let target: { assetNum: string; crmProductId: string };

beforeAll(async () => {
  server = await startServerProcess(env);
  const app = await createApp(running().url, ADMIN_KEY, ['auth_order', 'auth_runtime']);
  token = await appToken(running().url, app);
  const crmProductId = freshId('P');
  const batch = purchaseBatch(app, {
    products: () => [product('Fleet', { crmProductId, limitConcurrent: SEATS })],
  });
  okData(await postBatch(running().url, app, token, batch.body));
  target = { assetNum: batch.assetNums[0] as string, crmProductId };
});
afterAll(async () => {
  if (server) await server.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function checkOut(fingerprint: string) {
  return call<{ leaseId: string; status: string }>(running().url, 'POST', `${RUNTIME}/leases`, {
    headers: orderHeaders(token),
    body: { ...target, fingerprint },
  });
}

async function beat(machine: Machine) {
  const answer = await call(running().url, 'POST', `${RUNTIME}/leases/${machine.leaseId}/heartbeat`, {
    headers: orderHeaders(token),
    body: { fingerprint: machine.fingerprint },
  });
  if (answer.status === 200 && answer.code === 0) machine.lastBeat = Date.now();
  return answer;
}

describe('kill -9 mid-fleet, then a restart', { timeout: 180_000 }, () => {
  it('over-grants no seat, keeps the running machines, and frees a stopped machine within the bound', async () => {
    const fleet: Machine[] = Array.from({ length: SEATS }, () => ({
      fingerprint: freshId('fp-'),
      lastBeat: 0,
    }));
    for (const machine of fleet) {
      const lease = okData(await checkOut(machine.fingerprint));
      machine.leaseId = lease.leaseId;
      machine.lastBeat = Date.now();
    }
    expect((await checkOut(freshId('fp-'))).code).toBe('90005');

    // The fleet beats; the server dies under it.
    let beating = true;
    const beats = Promise.all(
      fleet.map(async (machine) => {
        while (beating) {
          await beat(machine).catch(() => undefined);
          await sleep(200);
        }
      }),
    );
    await sleep(1_500);
    await running().stop('SIGKILL');
    beating = false;
    await beats;
    server = await startServerProcess(env);

    // Every running machine still holds its lease; no newcomer gets a seat.
    for (const machine of fleet) expect((await beat(machine)).code, machine.fingerprint).toBe(0);
    for (let i = 0; i < SEATS; i += 1) expect((await checkOut(freshId('fp-'))).code).toBe('90005');

    // Half the fleet stops; the other half beats every interval's half. Newcomers ask each second.
    const stopped = fleet.slice(0, SEATS / 2);
    const kept = fleet.slice(SEATS / 2);
    const lastBeat = Math.max(...stopped.map((m) => m.lastBeat));
    const firstBeat = Math.min(...stopped.map((m) => m.lastBeat));
    const granted: number[] = [];
    let nextKeep = Date.now();
    while (granted.length < stopped.length && Date.now() < lastBeat + (LEASE_S + 5) * 1000) {
      if (Date.now() >= nextKeep) {
        for (const machine of kept) expect((await beat(machine)).code).toBe(0);
        nextKeep = Date.now() + (INTERVAL_S / 2) * 1000;
      }
      const sent = Date.now();
      const answer = await checkOut(freshId('fp-'));
      if (answer.code === 0) granted.push(sent);
      else expect(answer.code).toBe('90005');
      await sleep(1_000);
    }
    // Each stopped seat came free, no sooner than 2.5 intervals after the machine's last beat
    // and within the lease time of it (a second's slack for the asking), and the kept ones did not.
    expect(granted).toHaveLength(stopped.length);
    expect(Math.min(...granted)).toBeGreaterThanOrEqual(firstBeat + 2.5 * INTERVAL_S * 1000 - 1_000);
    expect(Math.max(...granted)).toBeLessThanOrEqual(lastBeat + LEASE_S * 1000 + 2_000);
    for (const machine of kept) expect((await beat(machine)).code).toBe(0);
    expect((await checkOut(freshId('fp-'))).code).toBe('90005');
  });
});
