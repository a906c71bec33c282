import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appToken, createTestApp } from '../support/fixtures.js';
import { startHarness, type Harness } from '../support/harness.js';
import { packAndInstallClient, type PackedClient } from '../support/packed-client.js';
import { lockWith, runtimeWorld } from '../http/runtime-helpers.js';

const run = promisify(execFile);
const TSC = path.resolve(import.meta.dirname, '../../node_modules/typescript/bin/tsc');

// @keyward/client as a vendor gets it: packed, installed into an empty project outside the
// repository, imported by name from plain JavaScript and from TypeScript.
let h: Harness;
let url: string;
let packed: PackedClient;

beforeAll(async () => {
  h = await startHarness();
  url = await h.app.listen({ port: 0, host: '127.0.0.1' });
  packed = await packAndInstallClient();
}, 240_000);
afterAll(async () => {
  packed?.remove();
  await h?.close();
});

describe('the packed @keyward/client', () => {
  it('holds the built ESM and its types, and nothing of the sources or tests', async () => {
    const { stdout } = await run('tar', ['-tzf', packed.tarball]);
    const files = stdout.trim().split('\n');
    expect(files).toEqual(
      expect.arrayContaining([
        'package/dist/index.js',
        'package/dist/index.d.ts',
        'package/dist/schema.d.ts',
      ]),
    );
    expect(files.filter((f) => !/^package\/(dist\/|README\.md$|package\.json$)/.test(f))).toEqual([]);
    const manifest = JSON.parse(
      fs.readFileSync(path.join(packed.project, 'node_modules/@keyward/client/package.json'), 'utf8'),
    ) as { private?: boolean; exports: unknown };
    expect(manifest.private).toBeUndefined();
  });

  it(
    'works from Node.js: calls the order service and checks out and verifies an offline lease',
    { timeout: 60_000 },
    async () => {
      const world = await runtimeWorld(h);
      await h.app.services.apps.setOfflineLeaseMaxDays(world.app.appKey, 3);
      const { assetNum, crmProductId } = await lockWith(world);
      const script = path.join(packed.project, 'use.mjs');
      fs.writeFileSync(
        script,
        `import { createKeywardClient, verifyLease } from '@keyward/client';
const keyward = createKeywardClient({ baseUrl: process.env.URL, appKey: process.env.APP_KEY, appSecret: process.env.APP_SECRET });
const numbers = await keyward.POST('/order/api/order/v1/shellnums', { body: { size: 2 } });
const lease = await keyward.POST('/runtime/v1/leases', {
  body: { fingerprint: 'fp-packed-client-01', assetNum: process.env.ASSET, crmProductId: process.env.PRODUCT, offlineDays: 2 },
});
const claims = await verifyLease(lease.offlineLease, { jwksUrl: process.env.URL + '/.well-known/jwks.json', fingerprint: 'fp-packed-client-01', audience: process.env.APP_KEY });
console.log(JSON.stringify({ numbers: numbers.length, leaseId: lease.leaseId, sub: claims.sub, assetNum: claims.assetNum, expBound: claims.expBound }));
`,
      );
      const { stdout } = await run(process.execPath, [script], {
        cwd: packed.project,
        env: {
          ...process.env,
          URL: url,
          APP_KEY: world.app.appKey,
          APP_SECRET: world.app.appSecret,
          ASSET: assetNum,
          PRODUCT: crmProductId,
        },
      });
      const out = JSON.parse(stdout) as {
        numbers: number;
        leaseId: string;
        sub: string;
        assetNum: string;
        expBound: string;
      };
      expect(out).toMatchObject({ numbers: 2, assetNum, expBound: 'offline-days' });
      expect(out.sub).toBe(out.leaseId);
    },
  );

  it('types a TypeScript program against the installed declarations', { timeout: 60_000 }, async () => {
    const file = path.join(packed.project, 'typed.ts');
    fs.writeFileSync(
      file,
      `import { verifyLease, KeywardLeaseError, type OfflineLeaseClaims, type LeaseFailure } from '@keyward/client';
export async function holderOf(token: string): Promise<OfflineLeaseClaims['holder'] | LeaseFailure> {
  try {
    return (await verifyLease(token, { jwks: { keys: [] }, fingerprint: 'fp' })).holder;
  } catch (error) {
    if (error instanceof KeywardLeaseError) return error.reason;
    throw error;
  }
}
`,
    );
    const flags = [
      '--noEmit',
      '--strict',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--lib',
      'es2022,dom',
    ];
    await run(process.execPath, [TSC, ...flags, file], { cwd: packed.project });
    // And a misuse is caught by those same declarations.
    fs.writeFileSync(
      file,
      `import { verifyLease } from '@keyward/client';\nawait verifyLease(42, { fingerprint: 'fp' });\n`,
    );
    await expect(run(process.execPath, [TSC, ...flags, file], { cwd: packed.project })).rejects.toMatchObject(
      {
        stdout: expect.stringContaining('typed.ts'),
      },
    );
  });

  it('turns a refusal into KeywardApiError with Keyward’s code', { timeout: 60_000 }, async () => {
    const app = await createTestApp(h, { scopes: ['auth_order'] });
    await appToken(h, app);
    const script = path.join(packed.project, 'refused.mjs');
    fs.writeFileSync(
      script,
      `import { createKeywardClient, KeywardApiError } from '@keyward/client';
const keyward = createKeywardClient({ baseUrl: process.env.URL, appKey: process.env.APP_KEY, appSecret: process.env.APP_SECRET });
try { await keyward.POST('/order/api/order/v1/shellnums', { body: { size: 0 } }); console.log('accepted'); }
catch (error) { console.log(error instanceof KeywardApiError ? error.code : 'other: ' + error); }
`,
    );
    const { stdout } = await run(process.execPath, [script], {
      cwd: packed.project,
      env: { ...process.env, URL: url, APP_KEY: app.appKey, APP_SECRET: app.appSecret },
    });
    expect(stdout.trim()).toBe('13004');
  });
});
