import fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureHeader } from '../../src/domain/webhooks/secrets.js';
import { leaseOf, lockWith, runtimeWorld } from '../http/runtime-helpers.js';
import { startHarness, type Harness } from '../support/harness.js';
import { packAndInstallClient, type PackedClient } from '../support/packed-client.js';
import { browserAvailable, CHROMIUM_PATH } from './support/browser.js';

// The packed @keyward/client in Chromium: a page of a vendor's own site imports the installed
// package through an import map, and verifies a lease the server signed (Ed25519 in WebCrypto)
// and a webhook (HMAC in WebCrypto), with nothing of Node.js.

const TYPES: Record<string, string> = {
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json',
};

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>vendor</title>
<script type="importmap">{"imports":{
  "@keyward/client":"/node_modules/@keyward/client/dist/index.js",
  "jose":"/node_modules/jose/dist/webapi/index.js",
  "openapi-fetch":"/node_modules/openapi-fetch/dist/index.mjs"}}</script>
</head><body>vendor page</body></html>`;

/** The vendor's site: the project folder the package was installed into, and one page. */
function serveProject(root: string): Promise<Server> {
  const server = createServer((request, response) => {
    const pathname = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname);
    if (pathname === '/') {
      response.writeHead(200, { 'content-type': TYPES['.html'] ?? '' }).end(PAGE);
      return;
    }
    const file = path.join(root, pathname);
    if (!file.startsWith(root) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
    response.end(fs.readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/**
 * Runs `body` in the page as the vendor's own module code would: written as text, since the test
 * runner rewrites the dynamic imports of functions it compiles.
 */
function inPage<T>(page: Page, body: string, args: unknown): Promise<T> {
  return page.evaluate(`(async (args) => {${body}})(${JSON.stringify(args)})`) as Promise<T>;
}

describe.runIf(browserAvailable())('the packed @keyward/client in Chromium', () => {
  let h: Harness;
  let packed: PackedClient;
  let site: Server;
  let browser: Browser;
  let token: string;
  let jwks: unknown;
  const fingerprint = 'fp-browser-machine-01';

  beforeAll(async () => {
    h = await startHarness();
    const world = await runtimeWorld(h);
    await h.app.services.apps.setOfflineLeaseMaxDays(world.app.appKey, 2);
    const { assetNum, crmProductId } = await lockWith(world);
    token =
      leaseOf(await world.runtime('/leases', { fingerprint, assetNum, crmProductId, offlineDays: 1 }))
        .offlineLease ?? '';
    jwks = (await h.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json();
    packed = await packAndInstallClient();
    site = await serveProject(packed.project);
    browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-dev-shm-usage',
      ],
    });
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    site?.close();
    packed?.remove();
    await h?.close();
  });

  it('verifies a lease the server signed, and refuses a tampered one, with WebCrypto', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
    const outcome = await inPage<{
      assetNum: string;
      expBound: string;
      reasons: string[];
      hasProcess: boolean;
    }>(
      page,
      `
      const { verifyLease, KeywardLeaseError } = await import('@keyward/client');
      const claims = await verifyLease(args.token, { jwks: args.jwks, fingerprint: args.fingerprint });
      const [header, payload, signature] = args.token.split('.');
      const reasons = [];
      // Another signature of the same length and form: a token that is well formed, signed wrong
      // (appending a character makes it malformed, a verdict of its own).
      const forged = (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1);
      for (const [bad, machine] of [[header + '.' + payload + '.' + forged, args.fingerprint], [args.token, 'fp-another-machine']]) {
        await verifyLease(bad, { jwks: args.jwks, fingerprint: machine }).catch((error) => {
          reasons.push(error instanceof KeywardLeaseError ? error.reason : String(error));
        });
      }
      return { assetNum: claims.assetNum, expBound: claims.expBound, reasons, hasProcess: 'process' in globalThis };
      `,
      { token, jwks, fingerprint },
    );
    expect(outcome).toMatchObject({
      expBound: 'offline-days',
      reasons: ['signature', 'fingerprint'],
      hasProcess: false,
    });
    expect(outcome.assetNum).toMatch(/.+/);
    expect(problems).toEqual([]);
  });

  it('verifies a webhook by the Standard Webhooks scheme with WebCrypto', async () => {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
    const secret = `whsec_${Buffer.from('browser-endpoint-secret-0001').toString('base64')}`;
    const body = JSON.stringify({
      id: 'evt_browser',
      type: 'asset.locked',
      timestamp: new Date().toISOString(),
      scope: {},
      data: {},
      requestId: null,
    });
    const at = new Date();
    const headers = {
      'webhook-id': 'evt_browser',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signatureHeader([secret], 'evt_browser', at, body),
    };
    const outcome = await inPage<{ id: string; type: string; refused: boolean }>(
      page,
      `
      const { verifyWebhook } = await import('@keyward/client');
      const event = await verifyWebhook(args.secret, args.body, args.headers);
      const refused = await verifyWebhook(args.secret, args.body.replace('asset.locked', 'asset.unlocked'), args.headers)
        .then(() => false, () => true);
      return { id: event.id, type: event.type, refused };
      `,
      { secret, body, headers },
    );
    expect(outcome).toEqual({ id: 'evt_browser', type: 'asset.locked', refused: true });
  });
});
