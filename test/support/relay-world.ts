import fs from 'node:fs';
import path from 'node:path';
import type { JSONWebKeySet } from '../../src/keyward-client.js';
import { RELAY_CHANNEL } from '../../src/domain/relay/relay-licenses.service.js';
import type { Harness } from './harness.js';

// What the relay tests that run a real relay set up alike: the vendor's key set as the file
// `relay init --vendor-jwks` reads, and the app the closed network's machines sign in with.

/** The vendor's keys prepared and published, and written to `scratch/vendor-jwks.json`. */
export async function vendorJwksFile(
  h: Harness,
  scratch: string,
): Promise<{ jwks: JSONWebKeySet; file: string }> {
  await h.app.services.runtimeKeys.prepare();
  const reply = await h.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
  const file = path.join(scratch, 'vendor-jwks.json');
  fs.writeFileSync(file, reply.body);
  return { jwks: reply.json() as JSONWebKeySet, file };
}

/**
 * The machines' app on a running relay, made with the admin key the relay keeps in `dir/data`, on
 * the relay's channel, its offline leases allowed for `offlineDays` days.
 */
export async function relayMachinesApp(
  relayUrl: string,
  dir: string,
  offlineDays = 7,
): Promise<{ appKey: string; appSecret: string }> {
  const adminKey = fs.readFileSync(path.join(dir, 'data', 'admin.key'), 'utf8').trim();
  const post = (url: string, body: object) =>
    fetch(`${relayUrl}/admin${url}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const created = await post('/apps', {
    name: 'lab machines',
    scopes: ['auth_runtime'],
    channels: [RELAY_CHANNEL],
  });
  if (created.status !== 200)
    throw new Error(`the relay made no app: ${created.status} ${await created.text()}`);
  const app = (await created.json()) as { appKey: string; appSecret: string };
  const days = await post(`/apps/${encodeURIComponent(app.appKey)}/offline-lease-days`, {
    days: offlineDays,
  });
  if (days.status !== 200) throw new Error(`the relay kept no offline days: ${days.status}`);
  return app;
}
