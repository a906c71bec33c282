import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  createKeywardClient,
  KeywardApiError,
  verifyLease,
  type JSONWebKeySet,
  type KeywardClient,
} from '@keyward/client';

// A licensed program's side of the runtime, in one file:
//
//   online   checks out a seat of PRODUCT on the lock LOCK with an offline lease, heartbeats it,
//            fills the other seats from three more "machines" (the last one is refused), and keeps
//            the offline lease and the server's published keys in STATE_DIR;
//   offline  with the server stopped, verifies the kept lease against the kept keys.
//
//   KEYWARD_URL=… KEYWARD_APP_KEY=… KEYWARD_APP_SECRET=… LOCK=… npx tsx examples/runtime/run.ts online
//   npx tsx examples/runtime/run.ts offline

const baseUrl = process.env.KEYWARD_URL ?? 'http://127.0.0.1:8080';
const product = process.env.PRODUCT ?? 'demo-simulator';
const stateDir = process.env.STATE_DIR ?? path.join(os.tmpdir(), 'keyward-runtime-example');
const leaseFile = path.join(stateDir, 'lease.jws');
const keysFile = path.join(stateDir, 'jwks.json');

/** This machine's fingerprint: a hash of what identifies it, here its host name. */
function machineFingerprint(salt = ''): string {
  return createHash('sha256').update(`${os.hostname()}${salt}`).digest('hex').slice(0, 32);
}

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
}

async function checkOut(keyward: KeywardClient, lock: string, fingerprint: string, offlineDays = 0) {
  return keyward.POST('/runtime/v1/leases', {
    body: { assetNum: lock, crmProductId: product, fingerprint, ...(offlineDays > 0 ? { offlineDays } : {}) },
  });
}

async function online(): Promise<void> {
  const keyward = createKeywardClient({
    baseUrl,
    appKey: required('KEYWARD_APP_KEY'),
    appSecret: required('KEYWARD_APP_SECRET'),
    scope: 'auth_runtime',
  });
  const lock = required('LOCK');
  const me = machineFingerprint();

  const lease = await checkOut(keyward, lock, me, 7);
  console.log(`lease ${lease.leaseId} (${lease.status}) for ${product} on ${lease.assetNum}`);
  console.log(
    `  seats ${lease.limits.concurrent ?? 'unlimited'}, expires ${new Date(lease.expiresAt).toISOString()}`,
  );
  const beat = await keyward.POST('/runtime/v1/leases/{leaseId}/heartbeat', {
    params: { path: { leaseId: lease.leaseId } },
    body: { fingerprint: me },
  });
  console.log(`heartbeat: alive until ${new Date(beat.expiresAt).toISOString()}`);

  // Three more machines start the same product: with three seats, the last one is refused.
  for (const other of ['second', 'third', 'fourth']) {
    try {
      const more = await checkOut(keyward, lock, machineFingerprint(other));
      console.log(`${other} machine: lease ${more.leaseId}`);
    } catch (error) {
      if (!(error instanceof KeywardApiError)) throw error;
      console.log(`${other} machine: refused, ${error.code} ${error.message}`);
    }
  }

  if (lease.offlineLease === null)
    throw new Error('no offline lease: allow some with keyward app set-offline-days');
  const keys = await (await fetch(`${baseUrl}/.well-known/jwks.json`)).json();
  fs.mkdirSync(stateDir, { recursive: true });
  fs.writeFileSync(leaseFile, lease.offlineLease);
  fs.writeFileSync(keysFile, JSON.stringify(keys));
  console.log(`offline lease kept in ${leaseFile}`);
}

async function offline(): Promise<void> {
  const token = fs.readFileSync(leaseFile, 'utf8');
  const jwks = JSON.parse(fs.readFileSync(keysFile, 'utf8')) as JSONWebKeySet;
  const claims = await verifyLease(token, { jwks, fingerprint: machineFingerprint() });
  console.log(
    `offline lease verified: ${claims.product.crmProductId ?? claims.product.productUri} on ${claims.assetNum}`,
  );
  console.log(`  for this machine until ${new Date(claims.exp * 1000).toISOString()}`);
}

const mode = process.argv[2];
if (mode !== 'online' && mode !== 'offline') {
  console.error('usage: run.ts online | offline');
  process.exit(2);
}
await (mode === 'online' ? online() : offline());
