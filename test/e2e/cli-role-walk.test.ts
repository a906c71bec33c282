import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { keywardCli } from '../../src/cli/cli.js';
import { mayAct, type OperatorRole, type Permission } from '../../src/domain/operators/roles.js';
import { declaredRoutes } from '../../src/http/access/enforce.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';

// The role matrix over every CLI command, found from the CLI itself (nobody lists them): each leaf
// command is run in-process, signed in with a support's and an auditor's personal token, against a
// server that records the admin calls it makes. Every call a role may not make is refused with 403
// naming the permission, the command fails saying so, and nothing is audited; every call it may
// make goes through. A command that reaches no admin route must fail before calling the server.

let h: Harness;
let proxy: http.Server;
let home: string;
const calls: Array<{ method: string; url: string; status: number; body: string }> = [];
const tokens = new Map<OperatorRole, string>();
const ROLES: OperatorRole[] = ['support', 'auditor'];

/**
 * Commands that act on this machine only: the server, a restore, the CLI's own sign-in; and a
 * backup, which on PostgreSQL the CLI takes itself with the DATABASE_URL it is given (on the
 * embedded database it asks POST /admin/backup, in the admin route matrix).
 */
const LOCAL = new Set(['serve', 'migrate', 'restore', 'backup', 'login', 'logout', 'demo', 'help']);

beforeAll(async () => {
  h = await startHarness();
  // In front of the server: records each admin call and its answer, then passes it on.
  proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void h.app
        .inject({
          method: req.method as 'GET',
          url: req.url ?? '/',
          headers: req.headers,
          payload: Buffer.concat(chunks),
        })
        .then((reply) => {
          calls.push({
            method: req.method ?? '',
            url: req.url ?? '',
            status: reply.statusCode,
            body: reply.body,
          });
          res.writeHead(reply.statusCode, reply.headers as http.OutgoingHttpHeaders);
          res.end(reply.rawPayload);
        });
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-cli-walk-'));
  for (const role of ROLES) {
    const added = await h.app.inject({
      method: 'POST',
      url: '/admin/operators',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      payload: { name: `cli ${role}`, email: `cli-walk-${role}-${Date.now()}@example.com`, role },
    });
    const id = added.json<{ operator: { id: string } }>().operator.id;
    const token = await h.app.inject({
      method: 'POST',
      url: `/admin/operators/${id}/tokens`,
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      payload: { name: 'walk' },
    });
    tokens.set(role, token.json<{ token: string }>().token);
  }
});
afterAll(async () => {
  await new Promise<void>((resolve) => proxy.close(() => resolve()));
  await h.close();
  fs.rmSync(home, { recursive: true, force: true });
});

/** Every command that runs something (no subcommands of its own), with its words. */
function leaves(command: Command, words: string[] = []): string[][] {
  return command.commands.flatMap((child) => {
    const here = [...words, child.name()];
    return child.commands.length === 0 ? [here] : leaves(child, here);
  });
}

/** Values the CLI checks itself before calling, by the argument's name; anything else is 'x0'. */
const VALUES: Record<string, string> = { ROLE: 'support', SETTING: 'status', DAYS: '1', LIMIT: '5' };

/** A made-up value for each required argument and option: enough to reach the server. */
function argsOf(words: string[], withFlag = false): string[] {
  let command = keywardCli();
  for (const word of words) command = command.commands.find((c) => c.name() === word) as Command;
  const args = command.registeredArguments
    .filter((a) => a.required)
    .map((a) => VALUES[a.name().toUpperCase()] ?? 'x0');
  for (const option of command.options.filter((o) => o.mandatory)) {
    const value =
      option.long === '--role'
        ? 'support'
        : option.long === '--scopes'
          ? 'auth_order'
          : option.long === '--email'
            ? 'x0@example.com'
            : 'x0';
    args.push(option.long ?? '', value);
  }
  // A command of optional settings only refuses to change nothing: given its first one.
  const flag = command.options.find((o) => !o.mandatory && !o.required && !o.optional && o.long !== '--json');
  return [...words, ...args, ...(withFlag && flag?.long !== undefined ? [flag.long] : [])];
}

/** The permission the admin route a call reached declares. */
function permissionOf(method: string, url: string): Permission | undefined {
  const pathOnly = url.split('?')[0] ?? url;
  for (const route of declaredRoutes(h.app)) {
    if (route.method !== method || route.access.who !== 'admin') continue;
    const pattern = new RegExp(`^${route.url.replace(/:[A-Za-z]+/g, '[^/]+')}$`);
    if (pattern.test(pathOnly)) return route.access.permission;
  }
  return undefined;
}

async function run(args: string[], token: string): Promise<{ error: unknown; out: string }> {
  const env = {
    KEYWARD_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    KEYWARD_ADMIN_URL: '',
    KEYWARD_ADMIN_KEY: '',
    KEYWARD_TOKEN: token,
    DATA_DIR: path.join(home, 'none'),
    XDG_CONFIG_HOME: path.join(home, 'config'),
  };
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  const lines: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
  const err = vi
    .spyOn(console, 'error')
    .mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
  const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  const writeErr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    await keywardCli().parseAsync(args, { from: 'user' });
    return { error: undefined, out: lines.join('\n') };
  } catch (error) {
    return { error, out: lines.join('\n') };
  } finally {
    log.mockRestore();
    err.mockRestore();
    write.mockRestore();
    writeErr.mockRestore();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    process.exitCode = undefined;
  }
}

async function auditRows(): Promise<number> {
  const row = await h.database.db
    .selectFrom('audit_log')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('operator', 'like', 'cli %')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('the role matrix over every CLI command', () => {
  it('refuses each role exactly where it lacks the route’s permission, changing nothing', async () => {
    const commands = leaves(keywardCli()).filter((words) => !LOCAL.has(words[0] ?? ''));
    expect(commands.length).toBeGreaterThan(30);
    const wrong: string[] = [];
    let refused = 0;
    let through = 0;
    const reachedServer = new Set<string>();
    for (const words of commands) {
      for (const role of ROLES) {
        let args = argsOf(words);
        let before = calls.length;
        const audited = await auditRows();
        let { error, out } = await run(args, tokens.get(role) ?? '');
        if (calls.length === before && error !== undefined) {
          args = argsOf(words, true);
          before = calls.length;
          ({ error, out } = await run(args, tokens.get(role) ?? ''));
        }
        const made = calls.slice(before).filter((c) => c.url.startsWith('/admin/'));
        const name = `${role} keyward ${args.join(' ')}`;
        if (made.length === 0) {
          // Refused by the CLI itself (a value it checks) before any call: it must say so.
          if (error === undefined && !words.includes('logout'))
            wrong.push(`${name}: no admin call, and no error`);
          continue;
        }
        reachedServer.add(words.join(' '));
        for (const call of made) {
          const permission = permissionOf(call.method, call.url);
          if (permission === undefined) {
            wrong.push(`${name}: ${call.method} ${call.url} is no declared admin route`);
            continue;
          }
          const may = mayAct([role], permission);
          if (!may) {
            refused += 1;
            if (call.status !== 403 || !call.body.includes(permission))
              wrong.push(`${name}: ${call.status} for ${permission}`);
            const said = `${error instanceof Error ? error.message : ''}\n${out}`;
            if (error === undefined || !said.includes(`needs the ${permission} permission`)) {
              wrong.push(`${name}: the CLI did not fail naming ${permission}`);
            }
            if ((await auditRows()) !== audited) wrong.push(`${name}: audited though refused`);
          } else {
            through += 1;
            if ([401, 403].includes(call.status))
              wrong.push(`${name}: ${call.status} though ${role} holds ${permission}`);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(reachedServer.size).toBeGreaterThan(25);
    expect(refused).toBeGreaterThan(20);
    expect(through).toBeGreaterThan(10);
  }, 180_000);
});
