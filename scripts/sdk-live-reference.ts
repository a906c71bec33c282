import fs from 'node:fs';
import { createInterface } from 'node:readline';
import { createKeywardClient, KeywardApiError, verifyLease, type JSONWebKeySet } from '@keyward/client';

// The live scenario of the SDK conformance suite, written with the TypeScript client: the model
// every SDK's scenario program follows, step for step (sdks/conformance/README.md), and the proof
// that scripts/sdk-live.ts checks what it should:
//
//   npx tsx scripts/sdk-live.ts -- npx tsx scripts/sdk-live-reference.ts

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
};

const baseUrl = env('KEYWARD_URL');
const assetNum = env('KEYWARD_ASSET_NUM');
const crmProductId = env('KEYWARD_PRODUCT');
const keyward = createKeywardClient({
  baseUrl,
  appKey: env('KEYWARD_APP_KEY'),
  appSecret: env('KEYWARD_APP_SECRET'),
});
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

const report = (step: string, fields: Record<string, unknown> = {}) =>
  process.stdout.write(`${JSON.stringify({ step, ...fields })}\n`);

interface Lease {
  leaseId: string;
  heartbeatIntervalSeconds: number;
  offlineLease: string | null;
}

const checkOut = (fingerprint: string, offlineDays = 0) =>
  keyward.POST('/runtime/v1/leases', {
    body: { fingerprint, crmProductId, assetNum, ...(offlineDays > 0 ? { offlineDays } : {}) },
  }) as Promise<Lease>;
const heartbeat = (leaseId: string, fingerprint: string) =>
  keyward.POST('/runtime/v1/leases/{leaseId}/heartbeat', {
    params: { path: { leaseId } },
    body: { fingerprint },
  });
const checkIn = (leaseId: string, fingerprint: string) =>
  keyward.POST('/runtime/v1/leases/{leaseId}/check-in', {
    params: { path: { leaseId } },
    body: { fingerprint },
  });

async function codeOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    if (error instanceof KeywardApiError) return error.code;
    throw error;
  }
  throw new Error('the call was not refused');
}

const first = 'fp-live-first-machine';
const lease = await checkOut(first);
report('checked-out', { leaseId: lease.leaseId, heartbeatIntervalSeconds: lease.heartbeatIntervalSeconds });

for (let i = 0; i < 3; i += 1) await heartbeat(lease.leaseId, first);
report('heartbeats', { count: 3 });

// The loop a program runs while it works: a heartbeat every interval the server asked for.
let beats = 0;
const loop = setInterval(() => {
  void heartbeat(lease.leaseId, first).then(() => {
    beats += 1;
  });
}, lease.heartbeatIntervalSeconds * 1000);
await new Promise((resolve) => setTimeout(resolve, lease.heartbeatIntervalSeconds * 1000 + 1500));
clearInterval(loop);
report('background', { beats });

const consumed = (await keyward.POST('/runtime/v1/leases/{leaseId}/consume', {
  params: { path: { leaseId: lease.leaseId } },
  body: { fingerprint: first, amount: 2 },
})) as { consumed: number; remaining: number | null };
report('consumed', { consumed: consumed.consumed, remaining: consumed.remaining });

report('refused', { code: await codeOf(checkOut('fp-live-second-machine')) });

await checkIn(lease.leaseId, first);
report('checked-in');

// An offline lease, its keys saved beside it and read back, verified without the server.
const offline = await checkOut('fp-live-offline-machine', 1);
const jwks = (await (await fetch(`${baseUrl}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
fs.writeFileSync(env('KEYWARD_JWKS_FILE'), JSON.stringify(jwks));
const saved = JSON.parse(fs.readFileSync(env('KEYWARD_JWKS_FILE'), 'utf8')) as JSONWebKeySet;
const claims = await verifyLease(offline.offlineLease ?? '', {
  jwks: saved,
  fingerprint: 'fp-live-offline-machine',
});
report('offline-verified', { assetNum: claims.assetNum, expBound: claims.expBound });

report('await-revoke', { leaseId: offline.leaseId });
await lines.next();
report('revoked', { code: await codeOf(heartbeat(offline.leaseId, 'fp-live-offline-machine')) });
report('done');
process.exit(0);
