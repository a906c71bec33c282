import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { isEncrypted, openBackup } from '../../src/domain/backup/backup-file.js';
import type { OperatorRole, Permission } from '../../src/domain/operators/roles.js';
import { testDatabaseUrl } from '../support/database.js';
import { ADMIN_KEY, startHarness, uniqueCode, type Harness } from '../support/harness.js';

// POST /admin/backup: encrypted unless asked otherwise, and carrying the runtime's signing keys
// (runtime-keys.json) and the admin key only for a credential that may hold them.
//
// No role holds `backup` without `keys` today (only owner holds either), so the route's own check
// could never be seen to act. Here `admin` is given `backup` as well, as a role matrix with a
// backup-only role would: the guard then lets an admin's token in, and what the route does with a
// credential lacking `keys` is what this file checks. Every other grant stays the real one.
vi.mock('../../src/domain/operators/roles.js', async (importOriginal) => {
  const roles = await importOriginal<typeof import('../../src/domain/operators/roles.js')>();
  return {
    ...roles,
    mayAct: (held: readonly OperatorRole[], permission: Permission) =>
      permission === 'backup'
        ? held.length > 0 && held.every((role) => role === 'owner' || role === 'admin')
        : roles.mayAct(held, permission),
  };
});

const PASSPHRASE = 'correct horse battery staple';
const KEYS_FILE = '{"keys":"the runtime signing keys, as the file would hold them"}\n';

let h: Harness;
let dataDir: string;
let scratch: string;
beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-backup-route-'));
  dataDir = path.join(scratch, 'data');
  fs.mkdirSync(dataDir);
  fs.writeFileSync(path.join(dataDir, 'runtime-keys.json'), KEYS_FILE, { mode: 0o600 });
  fs.writeFileSync(path.join(dataDir, 'admin.key'), `${ADMIN_KEY}\n`, { mode: 0o600 });
  // On PostgreSQL the server runs pg_dump with its DATABASE_URL.
  const url = testDatabaseUrl();
  h = await startHarness({ DATA_DIR: dataDir, ...(url === undefined ? {} : { DATABASE_URL: url }) });
});
afterAll(async () => {
  await h.close();
  fs.rmSync(scratch, { recursive: true, force: true });
});

const backup = (bearer: string, payload?: object) =>
  h.app.inject({
    method: 'POST',
    url: '/admin/backup',
    headers: { authorization: `Bearer ${bearer}` },
    ...(payload === undefined ? {} : { payload }),
  });

async function tokenOf(role: OperatorRole): Promise<string> {
  const call = (url: string, payload: object) =>
    h.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${ADMIN_KEY}` }, payload });
  const added = await call('/admin/operators', {
    name: `${role} ${uniqueCode('op')}`,
    email: `${uniqueCode(role)}@example.com`,
    role,
  });
  expect(added.statusCode, added.body).toBe(200);
  const created = await call(`/admin/operators/${added.json().operator.id}/tokens`, { name: 'backup' });
  expect(created.statusCode, created.body).toBe(200);
  return created.json().token;
}

/** The parts of a backup the route answered, read back by the reader `keyward restore` uses. */
async function partsOf(reply: Awaited<ReturnType<typeof backup>>, passphrase?: string): Promise<string[]> {
  expect(reply.statusCode, reply.body.slice(0, 200)).toBe(200);
  const file = path.join(scratch, `${uniqueCode('b')}.kwbackup`);
  fs.writeFileSync(file, reply.rawPayload);
  expect(isEncrypted(file)).toBe(passphrase !== undefined);
  const opened = await openBackup(file, passphrase, scratch);
  try {
    const names = [...opened.parts.keys()];
    expect(reply.headers['keyward-backup-parts']).toBe(names.join(', '));
    const keys = opened.parts.get('runtime-keys.json');
    if (keys !== undefined) expect(fs.readFileSync(keys, 'utf8')).toBe(KEYS_FILE);
    return names;
  } finally {
    opened.dispose();
  }
}

describe('POST /admin/backup', () => {
  it('refuses a backup with no passphrase unless encrypt: false is sent, and one with both', async () => {
    expect((await backup(ADMIN_KEY)).statusCode).toBe(400);
    for (const payload of [{}, { encrypt: true }, { includeAdminKey: false }]) {
      const reply = await backup(ADMIN_KEY, payload);
      expect(reply.statusCode, JSON.stringify(payload)).toBe(400);
      expect(reply.json().error).toMatch(
        /^passphrase: a backup is encrypted unless asked otherwise; give a passphrase, or ask for an unencrypted one explicitly$/,
      );
    }
    const both = await backup(ADMIN_KEY, { passphrase: PASSPHRASE, encrypt: false });
    expect(both.statusCode).toBe(400);
    expect(both.json().error).toMatch(/^passphrase: given for a backup asked to be unencrypted/);
  });

  it('encrypts with the passphrase sent, and writes an unencrypted file only when encrypt: false is sent', async () => {
    expect(await partsOf(await backup(ADMIN_KEY, { passphrase: PASSPHRASE }), PASSPHRASE)).toEqual([
      'database',
      'runtime-keys.json',
    ]);
    expect(await partsOf(await backup(ADMIN_KEY, { encrypt: false }))).toEqual([
      'database',
      'runtime-keys.json',
    ]);
  });

  it('leaves runtime-keys.json out for a credential lacking the keys permission, and refuses it the admin key', async () => {
    const admin = await tokenOf('admin');
    expect(await partsOf(await backup(admin, { encrypt: false }))).toEqual(['database']);
    expect(await partsOf(await backup(admin, { passphrase: PASSPHRASE }), PASSPHRASE)).toEqual(['database']);
    const adminKey = await backup(admin, { encrypt: false, includeAdminKey: true });
    expect(adminKey.statusCode).toBe(403);
    expect(adminKey.json().error).toBe(
      'includeAdminKey: the admin key holds every permission, and role admin does not',
    );
  });

  it('carries runtime-keys.json for an owner, and the admin key when asked', async () => {
    const owner = await tokenOf('owner');
    expect(await partsOf(await backup(owner, { encrypt: false }))).toEqual(['database', 'runtime-keys.json']);
    expect(await partsOf(await backup(owner, { encrypt: false, includeAdminKey: true }))).toEqual([
      'database',
      'runtime-keys.json',
      'admin.key',
    ]);
  });
});
