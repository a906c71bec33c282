import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/client.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { csrfOf } from '../../src/domain/console/console-sessions.service.js';
import {
  mayAct,
  OPERATOR_ROLES,
  permissionsOf,
  type OperatorRole,
  type Permission,
} from '../../src/domain/operators/roles.js';
import { declaredRoutes, type DeclaredRoute } from '../../src/http/access/enforce.js';
import { testDatabaseUrl } from '../support/database.js';
import { ADMIN_KEY, startHarness, uniqueCode, type Harness } from '../support/harness.js';
import { createScratchDatabase } from '../support/scratch-database.js';

// A model of operators and their credentials (console sessions and personal tokens), run against
// the server with fast-check's commands: operators added, their role changed, disabled, enabled,
// their password or second factor reset, signed in, signed out everywhere, passwords changed,
// tokens made (from a session, a token or the admin key) and revoked, and time passing. Each act
// is done by the admin key or by a credential the test holds, which the model says may or may not
// do it. After every command each credential still held is asked what it may do on one route per
// (surface, permission); at the end of a run on every admin route and operator console page the
// server declares. What it may do must be what the model says: a session lives while its operator
// is active and on the credential generation it opened under; a token while neither it nor any
// token it was made from is revoked or expired, with its role and its operator's role now.
//
// The probes change nothing: the access check runs in onRequest, before the body is read. An
// admin route gets a body that does not parse (`{`): allowed answers 400 (404 for a made-up id,
// 200 for a GET), refused 403, a dead token 401. A console action gets no CSRF field: allowed
// answers 403, refused by role 404, a dead session a redirect to sign in, and a session that owes
// a new password a redirect to the password page. The first test checks this reading route by
// route before the model relies on it.
//
// The run has a database of its own (a scratch one on PostgreSQL), so that the last active owner,
// which the platform refuses to demote or disable, is the test's to know; and a clock of its own,
// which only moves when a command says so, so that token expiry is exact.

type Role = OperatorRole;
const DAY = 86_400_000;
const ADDRESS = '10.61.7.7';
const MAX_OPERATORS = 6;
const MAX_HELD = 6;
const RUNS = 6;
const COMMANDS = 40;
/** How long the property may start runs for (shrinking included). */
const BUDGET_MS = 35_000;
const SIGN_IN = '/console/operator/sign-in';
const PASSWORD_PAGE = '/console/operator/account/password';

/**
 * The server's clock: frozen, moved on by whole days by the model's "time passes". It starts at
 * the real time and never runs behind it, so the database, which judges the expiry of the tokens
 * a token was made from by its own clock, never finds one expired that the server does not (a
 * token made by a token never ends after its maker, so the server's own check finds it first).
 */
const clock = { start: Date.now(), days: 0 };
const now = () => clock.start + clock.days * DAY;

// ---------------------------------------------------------------------------------------------
// The model

interface Op {
  n: number;
  id: string;
  email: string;
  role: Role;
  active: boolean;
  password: string;
  /** The password is a one-time one (added, reset): a session opened with it owes a new one. */
  mustChange: boolean;
  /** The credential generation, as far as the model counts it: sessions carry the one they opened under. */
  gen: number;
}

interface Token {
  n: number;
  id: string;
  secret: string;
  op: Op;
  role: Role;
  /** In the model's days. */
  expires: number;
  /** The tokens it was made from, nearest last. */
  lineage: Token[];
  revoked: boolean;
}

interface Session {
  n: number;
  secret: string;
  op: Op;
  gen: number;
  owes: boolean;
}

type Credential = { kind: 'token'; token: Token } | { kind: 'session'; session: Session };

interface World {
  ops: Op[];
  tokens: Token[];
  sessions: number;
  held: Credential[];
  trail: string[];
}

const grants = (role: Role) => new Set(permissionsOf(role));
const within = (narrower: Role, wider: Role) => {
  const held = grants(wider);
  return permissionsOf(narrower).every((p) => held.has(p));
};
/** A token's role when none is asked for: the one within all bounds, else the first bound. */
const narrowest = (roles: Role[]): Role =>
  roles.find((r) => roles.every((other) => within(r, other))) ?? (roles[0] as Role);

const tokenAlive = (t: Token) => !t.revoked && t.expires > clock.days;
const tokenLive = (t: Token) => t.op.active && tokenAlive(t) && t.lineage.every(tokenAlive);
const sessionLive = (s: Session) => s.op.active && s.gen === s.op.gen;
const live = (c: Credential) => (c.kind === 'token' ? tokenLive(c.token) : sessionLive(c.session));

const activeOwners = (w: World) => w.ops.filter((o) => o.active && o.role === 'owner').length;

const describeOp = (o: Op) => `op${o.n}(${o.role}${o.active ? '' : ', disabled'})`;
const describeCredential = (c: Credential) =>
  c.kind === 'token'
    ? `token t${c.token.n} (${c.token.role} of ${describeOp(c.token.op)}${
        c.token.lineage.length > 0
          ? `, made from ${[...c.token.lineage]
              .reverse()
              .map((p) => `t${p.n}`)
              .join(' < ')}`
          : ''
      }, ends day ${c.token.expires})`
    : `session s${c.session.n} of ${describeOp(c.session.op)}${c.session.owes ? ' (owes a password)' : ''}`;

/** Holds a new credential, letting go of a dead one (else the oldest) past MAX_HELD. */
function hold(w: World, c: Credential): void {
  if (w.held.length >= MAX_HELD) {
    const dead = w.held.findIndex((h) => !live(h));
    w.held.splice(dead === -1 ? 0 : dead, 1);
  }
  w.held.push(c);
}

const heldTokens = (w: World) => w.held.flatMap((c) => (c.kind === 'token' ? [c.token] : []));
const heldSessions = (w: World) => w.held.flatMap((c) => (c.kind === 'session' ? [c.session] : []));
const pick = <T>(list: readonly T[], n: number): T => list[n % list.length] as T;
/** Two times in three a live one when there is one: dead credentials are asked too, less often. */
const pickLive = <T>(list: readonly T[], isLive: (t: T) => boolean, n: number): T => {
  const alive = list.filter(isLive);
  return n % 3 !== 0 && alive.length > 0 ? pick(alive, Math.floor(n / 3)) : pick(list, n);
};

// ---------------------------------------------------------------------------------------------
// The server

let h: Harness;

/** A server with the test's clock, on a database no other test file sees (a scratch one on PostgreSQL). */
async function startOwnHarness(): Promise<Harness> {
  if (testDatabaseUrl() === undefined) return startHarness({}, { now });
  const scratch = await createScratchDatabase('keyward_credentials');
  const database = await openPostgres(scratch.url);
  await migrateToLatest(database.db);
  const harness = await startHarness({}, { database, now });
  return {
    ...harness,
    async close() {
      await harness.close();
      await scratch.drop();
    },
  };
}

type Reply = Awaited<ReturnType<Harness['app']['inject']>>;

async function adminCall(
  bearer: string,
  method: 'GET' | 'POST',
  url: string,
  body?: unknown,
): Promise<Reply> {
  return h.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${bearer}` },
    remoteAddress: ADDRESS,
    ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
  });
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

/** A console form post with the session's CSRF token. */
async function consolePost(secret: string, url: string, fields: Record<string, string>): Promise<Reply> {
  return h.app.inject({
    method: 'POST',
    url,
    headers: { cookie: `keyward_session=${secret}`, 'content-type': 'application/x-www-form-urlencoded' },
    payload: form({ _csrf: csrfOf(secret), ...fields }),
    remoteAddress: ADDRESS,
  });
}

const secretOnPage = (reply: Reply) => /<pre class="secret">([^<]+)<\/pre>/.exec(reply.body)?.[1];

async function signIn(email: string, password: string): Promise<Reply> {
  return h.app.inject({
    method: 'POST',
    url: SIGN_IN,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: form({ email, password }),
    remoteAddress: ADDRESS,
  });
}

function sessionSecretOf(reply: Reply): string | undefined {
  const set = reply.headers['set-cookie'];
  for (const c of Array.isArray(set) ? set : set === undefined ? [] : [set]) {
    const value = /^keyward_session=([^;]*)/.exec(c)?.[1];
    if (value !== undefined && value !== '') return value;
  }
  return undefined;
}

const newPassword = () => `pw ${uniqueCode('p')} staple`;

// ---------------------------------------------------------------------------------------------
// Probes: what a credential may do on a route, without doing it

type Verdict = 'allowed' | 'refused' | 'dead' | 'owes';

/** The route's path with each parameter a made-up value. */
const pathOf = (route: DeclaredRoute) => route.url.replace(/:[A-Za-z]+/g, 'x0madeup');
const permissionOf = (route: DeclaredRoute): Permission =>
  route.access.who === 'admin' || route.access.who === 'operator-session'
    ? route.access.permission
    : 'status';
const duringSignIn = (route: DeclaredRoute) =>
  route.access.who === 'operator-session' && route.access.duringSignIn === true;

async function probeAdmin(bearer: string, route: DeclaredRoute): Promise<{ verdict: Verdict; reply: Reply }> {
  const reply = await h.app.inject({
    method: route.method as 'GET' | 'POST',
    url: pathOf(route),
    headers: {
      authorization: `Bearer ${bearer}`,
      ...(route.method === 'GET' ? {} : { 'content-type': 'application/json' }),
    },
    remoteAddress: ADDRESS,
    ...(route.method === 'GET' ? {} : { payload: '{' }),
  });
  const verdict = reply.statusCode === 401 ? 'dead' : reply.statusCode === 403 ? 'refused' : 'allowed';
  return { verdict, reply };
}

const location = (reply: Reply) => String(reply.headers.location ?? '');
const toSignIn = (reply: Reply) =>
  reply.statusCode === 303 && /^\/console\/operator\/sign-in(\?|$)/.test(location(reply));

async function probeConsole(
  secret: string,
  route: DeclaredRoute,
): Promise<{ verdict: Verdict; reply: Reply }> {
  const reply = await h.app.inject({
    method: route.method as 'GET' | 'POST',
    url: pathOf(route),
    headers: {
      cookie: `keyward_session=${secret}`,
      ...(route.method === 'GET' ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
    },
    remoteAddress: ADDRESS,
    ...(route.method === 'GET' ? {} : { payload: '' }),
  });
  const verdict: Verdict = toSignIn(reply)
    ? 'dead'
    : reply.statusCode === 303 && location(reply) === PASSWORD_PAGE
      ? 'owes'
      : reply.statusCode === 404
        ? 'refused'
        : 'allowed';
  return { verdict, reply };
}

/** What the model says a credential may do on a route of its surface. */
function expected(c: Credential, route: DeclaredRoute): Verdict {
  if (!live(c)) return 'dead';
  if (c.kind === 'token') {
    return mayAct([c.token.role, c.token.op.role], permissionOf(route)) ? 'allowed' : 'refused';
  }
  if (c.session.owes && !duringSignIn(route)) return 'owes';
  return mayAct([c.session.op.role], permissionOf(route)) ? 'allowed' : 'refused';
}

let adminRoutes: DeclaredRoute[];
let consolePages: DeclaredRoute[];
/** One route per (surface, permission, sign-in step or not): what is asked after every command. */
let representatives: { admin: DeclaredRoute[]; console: DeclaredRoute[] };

function onePer(routes: DeclaredRoute[]): DeclaredRoute[] {
  const chosen = new Map<string, DeclaredRoute>();
  for (const route of routes) {
    const key = `${permissionOf(route)} ${duringSignIn(route)}`;
    const had = chosen.get(key);
    // A post with a body that does not parse (or no CSRF field) runs no handler: the cheapest ask.
    if (had === undefined || (had.method === 'GET' && route.method === 'POST')) chosen.set(key, route);
  }
  return [...chosen.values()];
}

/** Asks every held credential on `routes` of its surface; the differences from the model. */
async function differences(w: World, routes: typeof representatives): Promise<string[]> {
  // One credential's asks in turn, the credentials side by side.
  const each = await Promise.all(
    w.held.map(async (c) => {
      const wrong: string[] = [];
      for (const route of c.kind === 'token' ? routes.admin : routes.console) {
        const { verdict, reply } =
          c.kind === 'token'
            ? await probeAdmin(c.token.secret, route)
            : await probeConsole(c.session.secret, route);
        const want = expected(c, route);
        if (verdict !== want) {
          wrong.push(
            `${describeCredential(c)} on ${route.method} ${route.url} (${permissionOf(route)}): ` +
              `model ${want}, server ${verdict} (${reply.statusCode} ${location(reply)})`,
          );
        }
      }
      return wrong;
    }),
  );
  return each.flat();
}

function fail(w: World, what: string, wrong: string[]): never {
  throw new Error(`${what}:\n  ${wrong.join('\n  ')}\nafter:\n  ${w.trail.join('\n  ')}`);
}

async function checkHeld(w: World): Promise<void> {
  const wrong = await differences(w, representatives);
  if (wrong.length > 0) fail(w, 'a held credential may do other than the model says', wrong);
}

/** The full walk at the end of a run: every route of each surface, and none of the other surface. */
async function checkEverywhere(w: World): Promise<void> {
  const wrong = await differences(w, { admin: adminRoutes, console: consolePages });
  for (const c of w.held) {
    if (c.kind === 'token') {
      const reply = await h.app.inject({
        method: 'GET',
        url: '/console/operator',
        headers: { authorization: `Bearer ${c.token.secret}` },
        remoteAddress: ADDRESS,
      });
      if (!toSignIn(reply)) wrong.push(`${describeCredential(c)} opened the console: ${reply.statusCode}`);
    } else {
      const reply = await h.app.inject({
        method: 'GET',
        url: '/admin/status',
        headers: { cookie: `keyward_session=${c.session.secret}` },
        remoteAddress: ADDRESS,
      });
      if (reply.statusCode !== 401)
        wrong.push(`${describeCredential(c)} reached the admin API: ${reply.statusCode}`);
    }
  }
  if (wrong.length > 0)
    fail(w, 'at the end of the run, a credential may do other than the model says', wrong);
}

// ---------------------------------------------------------------------------------------------
// Who acts: the admin key, or a held credential (a token on the admin API, a session on the console)

type ActorPick = number | null;
type Actor = { kind: 'key' } | Credential;

function actorOf(w: World, choice: ActorPick): Actor {
  if (choice === null || w.held.length === 0) return { kind: 'key' };
  return pickLive(w.held, live, choice);
}

const describeActor = (a: Actor) => (a.kind === 'key' ? 'the admin key' : describeCredential(a));

/** The answer the credential's check gives when it refuses, or undefined when it lets the call through. */
function gateRefusal(a: Actor, permission: Permission): { status: number; location?: RegExp } | undefined {
  if (a.kind === 'key') return undefined;
  if (a.kind === 'token') {
    if (!tokenLive(a.token)) return { status: 401 };
    return mayAct([a.token.role, a.token.op.role], permission) ? undefined : { status: 403 };
  }
  if (!sessionLive(a.session))
    return { status: 303, location: /^\/console\/operator\/sign-in\?note=expired$/ };
  if (a.session.owes) return { status: 303, location: new RegExp(`^${PASSWORD_PAGE}$`) };
  return mayAct([a.session.op.role], permission) ? undefined : { status: 404 };
}

/** The credential's check refused the call, as the model says it would. */
function notLetThrough(w: World, reply: Reply, refused: { status: number; location?: RegExp }): void {
  note(w, `not let through (${refused.status})`);
  expectAnswer(w, reply, refused.status, refused.location);
}

function expectAnswer(w: World, reply: Reply, status: number, where?: RegExp): void {
  const ok = reply.statusCode === status && (where === undefined || where.test(location(reply)));
  if (!ok) {
    fail(w, 'the server answered other than the model says', [
      `expected ${status}${where === undefined ? '' : ` to ${String(where)}`}, got ${reply.statusCode} ` +
        `${location(reply)} ${reply.body.slice(0, 300)}`,
    ]);
  }
}

/** The operator a credential acts for (null for the admin key). */
const actingOp = (a: Actor): Op | null =>
  a.kind === 'key' ? null : a.kind === 'token' ? a.token.op : a.session.op;

// ---------------------------------------------------------------------------------------------
// Commands

type Cmd = fc.AsyncCommand<World, Harness>;

function command(
  label: string,
  act: (w: World) => Promise<void>,
  check: (w: World) => boolean = () => true,
): Cmd {
  return {
    check: (w) => check(w),
    async run(w) {
      w.trail.push(label);
      await act(w);
      await checkHeld(w);
    },
    toString: () => label,
  };
}

/** Notes what a command turned into, for the failure's trail. */
const note = (w: World, text: string) => {
  w.trail[w.trail.length - 1] += ` → ${text}`;
};

async function addOperator(w: World, role: Role, actorPick: ActorPick): Promise<void> {
  const actor = actorOf(w, actorPick);
  note(w, `by ${describeActor(actor)}`);
  const email = `${uniqueCode('cm')}@example.com`;
  const name = `model ${role}`;
  const refused = gateRefusal(actor, 'operators');
  const reply =
    actor.kind === 'session'
      ? await consolePost(actor.session.secret, '/console/operator/operators', { name, email, role })
      : await adminCall(actor.kind === 'key' ? ADMIN_KEY : actor.token.secret, 'POST', '/admin/operators', {
          name,
          email,
          role,
        });
  if (refused) return notLetThrough(w, reply, refused);
  expectAnswer(w, reply, 200);
  let id: string;
  let password: string | undefined;
  if (actor.kind === 'session') {
    password = secretOnPage(reply);
    const list = await adminCall(ADMIN_KEY, 'GET', '/admin/operators');
    id = list.json<{ id: string; email: string }[]>().find((o) => o.email === email)?.id ?? '';
  } else {
    const body = reply.json<{ operator: { id: string }; password: string }>();
    id = body.operator.id;
    password = body.password;
  }
  expect(id, 'the added operator').not.toBe('');
  expect(password, 'its one-time password').toBeDefined();
  const op: Op = {
    n: w.ops.length,
    id,
    email,
    role,
    active: true,
    password: password as string,
    mustChange: true,
    gen: 0,
  };
  w.ops.push(op);
  note(w, `op${op.n}`);
}

type OperatorAct = 'role' | 'disable' | 'enable' | 'reset' | 'two-factor-reset';

async function actOnOperator(
  w: World,
  act: OperatorAct,
  targetPick: number,
  actorPick: ActorPick,
  role: Role = 'owner',
): Promise<void> {
  const target = pick(w.ops, targetPick);
  const actor = actorOf(w, actorPick);
  note(w, `${describeOp(target)} by ${describeActor(actor)}`);
  const refused = gateRefusal(actor, 'operators');
  const adminPath = {
    role: 'role',
    disable: 'disable',
    enable: 'enable',
    reset: 'reset',
    'two-factor-reset': 'two-factor/reset',
  }[act];
  const consolePath = {
    role: 'role',
    disable: 'disable',
    enable: 'enable',
    reset: 'reset',
    'two-factor-reset': 'reset-two-factor',
  }[act];
  const reply =
    actor.kind === 'session'
      ? await consolePost(
          actor.session.secret,
          `/console/operator/operators/${target.id}/${consolePath}`,
          act === 'role' ? { role } : {},
        )
      : await adminCall(
          actor.kind === 'key' ? ADMIN_KEY : actor.token.secret,
          'POST',
          `/admin/operators/${target.id}/${adminPath}`,
          act === 'role' ? { role } : undefined,
        );
  if (refused) return notLetThrough(w, reply, refused);
  // The service's own refusals: the last active owner stays one; nobody disables themselves.
  const lastOwner = target.role === 'owner' && target.active && activeOwners(w) === 1;
  let refusal = false;
  if (act === 'role' && role !== target.role && role !== 'owner' && lastOwner) refusal = true;
  if (act === 'disable' && target.active && (actingOp(actor) === target || lastOwner)) refusal = true;
  if (refusal) {
    note(w, 'refused');
    return expectAnswer(w, reply, actor.kind === 'session' ? 400 : 409);
  }
  expectAnswer(w, reply, 200);
  switch (act) {
    case 'role':
      if (role !== target.role) {
        target.role = role;
        target.gen += 1;
      }
      break;
    case 'disable':
      if (target.active) {
        target.active = false;
        target.gen += 1;
        for (const t of w.tokens) if (t.op === target) t.revoked = true;
      }
      break;
    case 'enable':
      if (!target.active) {
        target.active = true;
        target.gen += 1;
      }
      break;
    case 'reset': {
      const password =
        actor.kind === 'session' ? secretOnPage(reply) : reply.json<{ password: string }>().password;
      expect(password, 'the one-time password').toBeDefined();
      target.password = password as string;
      target.mustChange = true;
      target.gen += 1;
      break;
    }
    case 'two-factor-reset':
      target.gen += 1;
      break;
  }
}

/** Sign out everywhere: by the key or an owner's token (any operator), a token (its own), a session (its own). */
async function signOutEverywhere(
  w: World,
  targetPick: number,
  actorPick: ActorPick,
  own: boolean,
): Promise<void> {
  const actor = actorOf(w, actorPick);
  let target = pick(w.ops, targetPick);
  let reply: Reply;
  let refused: ReturnType<typeof gateRefusal>;
  if (actor.kind === 'session') {
    target = actor.session.op;
    refused = gateRefusal(actor, 'self');
    reply = await consolePost(actor.session.secret, '/console/operator/account/sign-out-everywhere', {});
  } else if (actor.kind === 'token' && own) {
    target = actor.token.op;
    refused = gateRefusal(actor, 'self');
    reply = await adminCall(actor.token.secret, 'POST', '/admin/operators/me/sign-out-everywhere');
  } else {
    refused = gateRefusal(actor, 'operators');
    reply = await adminCall(
      actor.kind === 'key' ? ADMIN_KEY : actor.token.secret,
      'POST',
      `/admin/operators/${target.id}/sign-out-everywhere`,
    );
  }
  note(w, `${describeOp(target)} by ${describeActor(actor)}`);
  if (refused) return notLetThrough(w, reply, refused);
  if (actor.kind === 'session')
    expectAnswer(w, reply, 303, /^\/console\/operator\/sign-in\?note=signed-out$/);
  else expectAnswer(w, reply, 200);
  target.gen += 1;
}

/** Signs in with the password the model knows; `settle`: a session owing a new password sets one. */
async function signInCommand(w: World, targetPick: number, settle: boolean): Promise<void> {
  const target = pick(w.ops, targetPick);
  note(w, describeOp(target));
  const reply = await signIn(target.email, target.password);
  if (!target.active) {
    expectAnswer(w, reply, 200);
    expect(sessionSecretOf(reply), 'no session for a disabled operator').toBeUndefined();
    return;
  }
  expectAnswer(w, reply, 303, /^\/console\/operator$/);
  const secret = sessionSecretOf(reply);
  expect(secret, 'a session cookie').toBeDefined();
  const session: Session = {
    n: w.sessions++,
    secret: secret as string,
    op: target,
    gen: target.gen,
    owes: target.mustChange,
  };
  hold(w, { kind: 'session', session });
  note(w, `s${session.n}${session.owes ? ' (owes a password)' : ''}`);
  if (settle && session.owes) await changePassword(w, session, 'none');
}

type CurrentGiven = 'right' | 'wrong' | 'none';

/** The operator's own new password, from a held session: the current one is asked unless owed. */
async function changePassword(w: World, session: Session, current: CurrentGiven): Promise<void> {
  const next = newPassword();
  const fields: Record<string, string> = { password: next };
  if (current === 'right') fields.currentPassword = session.op.password;
  if (current === 'wrong') fields.currentPassword = `${session.op.password}x`;
  const reply = await consolePost(session.secret, PASSWORD_PAGE, fields);
  if (!sessionLive(session)) {
    note(w, 'the session has ended');
    return expectAnswer(w, reply, 303, /^\/console\/operator\/sign-in\?note=expired$/);
  }
  if (!session.owes && current !== 'right') {
    note(w, 'refused: the current password is asked');
    return expectAnswer(w, reply, 400);
  }
  note(w, 'changed');
  expectAnswer(
    w,
    reply,
    303,
    session.owes ? /^\/console\/operator$/ : /^\/console\/operator\/account\?done=password-changed$/,
  );
  const op = session.op;
  op.password = next;
  op.mustChange = false;
  op.gen += 1;
  // Every other session of the operator ends; this one carries on, owing nothing.
  session.gen = op.gen;
  session.owes = false;
}

type Maker = { kind: 'key' } | { kind: 'token'; own: boolean } | { kind: 'session' };

/** A token: by the key for any operator, by a token (its own, or any as owner), by a session (its own). */
async function createToken(
  w: World,
  maker: Maker,
  makerPick: number,
  targetPick: number,
  role: Role | undefined,
  days: number | undefined,
): Promise<void> {
  const name = uniqueCode('tok');
  let target = pick(w.ops, targetPick);
  let by: Actor;
  let reply: Reply;
  let refused: ReturnType<typeof gateRefusal>;
  let bounds: Role[];
  if (maker.kind === 'session') {
    const session = pickLive(heldSessions(w), sessionLive, makerPick);
    by = { kind: 'session', session };
    target = session.op;
    // The console's form always sends a role and a number of days.
    role = role ?? session.op.role;
    days = days ?? 90;
    refused = gateRefusal(by, 'self');
    bounds = [session.op.role];
    reply = await consolePost(session.secret, '/console/operator/account/tokens', {
      name,
      role,
      days: String(days),
    });
  } else if (maker.kind === 'token') {
    const token = pickLive(heldTokens(w), tokenLive, makerPick);
    by = { kind: 'token', token };
    if (maker.own) target = token.op;
    refused = gateRefusal(by, maker.own ? 'self' : 'operators');
    bounds = [token.role, token.op.role];
    reply = await adminCall(
      token.secret,
      'POST',
      maker.own ? '/admin/operators/me/tokens' : `/admin/operators/${target.id}/tokens`,
      { name, ...(role === undefined ? {} : { role }), ...(days === undefined ? {} : { days }) },
    );
  } else {
    by = { kind: 'key' };
    refused = undefined;
    bounds = ['owner'];
    reply = await adminCall(ADMIN_KEY, 'POST', `/admin/operators/${target.id}/tokens`, {
      name,
      ...(role === undefined ? {} : { role }),
      ...(days === undefined ? {} : { days }),
    });
  }
  note(w, `for ${describeOp(target)} by ${describeActor(by)}`);
  if (refused) return notLetThrough(w, reply, refused);
  const refusal = (status: number, why: string) => {
    note(w, `refused: ${why}`);
    expectAnswer(w, reply, by.kind === 'session' ? 400 : status);
  };
  if (!target.active) return refusal(409, 'operator disabled');
  const given = role ?? narrowest([target.role, ...bounds]);
  if (![target.role, ...bounds].every((bound) => within(given, bound)))
    return refusal(400, `role ${given} too wide`);
  let expires = clock.days + (days ?? 90);
  let lineage: Token[] = [];
  if (by.kind === 'token') {
    const maker = by.token;
    if (expires > maker.expires) {
      if (days !== undefined) return refusal(400, `${days} days outlive the maker`);
      expires = maker.expires;
    }
    lineage = [...maker.lineage, maker];
  }
  expectAnswer(w, reply, 200);
  let secret: string | undefined;
  let view: { id: string; role: Role; expiresAt: number } | undefined;
  if (by.kind === 'session') {
    secret = secretOnPage(reply);
    const list = await adminCall(ADMIN_KEY, 'GET', `/admin/operators/${target.id}/tokens`);
    view = list
      .json<{ id: string; name: string; role: Role; expiresAt: number }[]>()
      .find((t) => t.name === name);
  } else {
    const body = reply.json<{ token: string; view: { id: string; role: Role; expiresAt: number } }>();
    secret = body.token;
    view = body.view;
  }
  expect(secret, 'the token, shown once').toMatch(/^kwp_/);
  expect(view, 'the token listed').toBeDefined();
  const made = view as { id: string; role: Role; expiresAt: number };
  if (made.role !== given || made.expiresAt !== clock.start + expires * DAY) {
    fail(w, 'the token made is not the one the model says', [
      `role ${made.role} (model ${given}), ends ${new Date(made.expiresAt).toISOString()} (model day ${expires})`,
    ]);
  }
  const token: Token = {
    n: w.tokens.length,
    id: made.id,
    secret: secret as string,
    op: target,
    role: given,
    expires,
    lineage,
    revoked: false,
  };
  w.tokens.push(token);
  hold(w, { kind: 'token', token });
  note(w, `t${token.n} ${given} until day ${expires}`);
}

/** Revokes any token the model knows: by the key or an owner's token, or its own operator's token or session. */
async function revokeToken(w: World, tokenPick: number, actorPick: ActorPick, own: boolean): Promise<void> {
  const token = pickLive(w.tokens, tokenLive, tokenPick);
  const actor = actorOf(w, actorPick);
  note(w, `t${token.n} of ${describeOp(token.op)} by ${describeActor(actor)}`);
  let refused: ReturnType<typeof gateRefusal>;
  let reply: Reply;
  const mine = actingOp(actor) === token.op;
  if (actor.kind === 'session') {
    refused = gateRefusal(actor, 'self') ?? (mine ? undefined : { status: 404 });
    reply = await consolePost(
      actor.session.secret,
      `/console/operator/account/tokens/${token.id}/revoke`,
      {},
    );
  } else if (actor.kind === 'token' && own) {
    refused = gateRefusal(actor, 'self') ?? (mine ? undefined : { status: 404 });
    reply = await adminCall(actor.token.secret, 'POST', `/admin/operators/me/tokens/${token.id}/revoke`);
  } else {
    refused = gateRefusal(actor, 'operators');
    reply = await adminCall(
      actor.kind === 'key' ? ADMIN_KEY : actor.token.secret,
      'POST',
      `/admin/operator-tokens/${token.id}/revoke`,
    );
  }
  if (refused) return notLetThrough(w, reply, refused);
  if (actor.kind === 'session') expectAnswer(w, reply, 303, /^\/console\/operator\/account\?done=revoked$/);
  else expectAnswer(w, reply, 200);
  token.revoked = true;
}

async function timePasses(w: World, days: number): Promise<void> {
  clock.days += days;
  note(w, `day ${clock.days}`);
}

const cmd = {
  add: (role: Role, actor: ActorPick) =>
    command(
      `add ${role}`,
      (w) => addOperator(w, role, actor),
      (w) => w.ops.length < MAX_OPERATORS,
    ),
  act: (act: OperatorAct, target: number, actor: ActorPick, role: Role = 'owner') =>
    command(`${act}${act === 'role' ? ` ${role}` : ''} of op pick ${target}`, (w) =>
      actOnOperator(w, act, target, actor, role),
    ),
  signOutEverywhere: (target: number, actor: ActorPick, own: boolean) =>
    command(`sign out everywhere${own ? ' (own)' : ''}, op pick ${target}`, (w) =>
      signOutEverywhere(w, target, actor, own),
    ),
  signIn: (target: number, settle = false) =>
    command(`sign in${settle ? ' (and set a password if owed)' : ''} op pick ${target}`, (w) =>
      signInCommand(w, target, settle),
    ),
  password: (session: number, current: CurrentGiven) =>
    command(
      `change password (current ${current}) from session pick ${session}`,
      (w) => {
        const held = pickLive(heldSessions(w), sessionLive, session);
        note(w, describeCredential({ kind: 'session', session: held }));
        return changePassword(w, held, current);
      },
      (w) => heldSessions(w).length > 0,
    ),
  token: (
    maker: Maker,
    makerPick: number,
    target: number,
    role: Role | undefined,
    days: number | undefined,
  ) =>
    command(
      `token${role === undefined ? '' : ` ${role}`}${days === undefined ? '' : ` ${days} days`} by ${maker.kind}` +
        `${maker.kind === 'token' ? (maker.own ? ' (own)' : ' (for op pick)') : ''} pick ${makerPick}, op pick ${target}`,
      (w) => createToken(w, maker, makerPick, target, role, days),
      (w) =>
        maker.kind === 'key' ||
        (maker.kind === 'token' ? heldTokens(w).length > 0 : heldSessions(w).length > 0),
    ),
  revoke: (token: number, actor: ActorPick, own: boolean) =>
    command(
      `revoke token pick ${token}${own ? ' (own)' : ''}`,
      (w) => revokeToken(w, token, actor, own),
      (w) => w.tokens.length > 0,
    ),
  time: (days: number) => command(`${days} days pass`, (w) => timePasses(w, days)),
};

const role = fc.constantFrom(...OPERATOR_ROLES);
const small = fc.nat({ max: 59 });
/** The admin key a third of the time, else a held credential. */
const actor: fc.Arbitrary<ActorPick> = fc.oneof(
  { arbitrary: fc.constant(null), weight: 1 },
  { arbitrary: small, weight: 2 },
);
const days = fc.option(fc.constantFrom(1, 2, 30, 90, 366), { nil: undefined });

const maybeRole = fc.option(role, { nil: undefined });

/** Each kind of command, and how many times in a draw of all of them it comes. */
const weighted: [fc.Arbitrary<Cmd>, number][] = [
  [fc.tuple(role, actor).map(([r, a]) => cmd.add(r, a)), 2],
  [fc.tuple(small, actor, role).map(([t, a, r]) => cmd.act('role', t, a, r)), 2],
  [fc.tuple(small, actor).map(([t, a]) => cmd.act('disable', t, a)), 1],
  [fc.tuple(small, actor).map(([t, a]) => cmd.act('enable', t, a)), 1],
  [fc.tuple(small, actor).map(([t, a]) => cmd.act('reset', t, a)), 1],
  [fc.tuple(small, actor).map(([t, a]) => cmd.act('two-factor-reset', t, a)), 1],
  [fc.tuple(small, actor, fc.boolean()).map(([t, a, own]) => cmd.signOutEverywhere(t, a, own)), 1],
  [small.map((t) => cmd.signIn(t)), 1],
  [small.map((t) => cmd.signIn(t, true)), 2],
  [
    fc
      .tuple(small, fc.constantFrom<CurrentGiven>('right', 'right', 'wrong', 'none'))
      .map(([s, c]) => cmd.password(s, c)),
    2,
  ],
  [fc.tuple(small, maybeRole, days).map(([t, r, d]) => cmd.token({ kind: 'key' }, 0, t, r, d)), 2],
  [
    fc
      .tuple(small, fc.boolean(), small, maybeRole, days)
      .map(([m, own, t, r, d]) => cmd.token({ kind: 'token', own }, m, t, r, d)),
    3,
  ],
  [fc.tuple(small, maybeRole, days).map(([s, r, d]) => cmd.token({ kind: 'session' }, s, 0, r, d)), 2],
  [fc.tuple(small, actor, fc.boolean()).map(([t, a, own]) => cmd.revoke(t, a, own)), 2],
  [fc.constantFrom(1, 29, 60).map((d) => cmd.time(d)), 1],
];
const commands = weighted.flatMap(([arbitrary, weight]) => Array.from({ length: weight }, () => arbitrary));

// ---------------------------------------------------------------------------------------------
// A run: a fresh set of operators, the only active ones on the database

/** Operators of earlier runs that may still be active: disabled as a run starts. */
const earlier: string[] = [];

async function newWorld(): Promise<World> {
  const w: World = { ops: [], tokens: [], sessions: 0, held: [], trail: [] };
  w.trail.push('start');
  await addOperator(w, 'owner', null);
  for (const id of earlier.splice(0)) {
    const off = await adminCall(ADMIN_KEY, 'POST', `/admin/operators/${id}/disable`);
    expect(off.statusCode, off.body).toBe(200);
  }
  return w;
}

function endWorld(w: World): void {
  earlier.push(...w.ops.map((o) => o.id));
}

async function runModel(cmds: Iterable<Cmd>): Promise<void> {
  const w = await newWorld();
  try {
    await fc.asyncModelRun(() => ({ model: w, real: h }), cmds);
    await checkEverywhere(w);
  } finally {
    endWorld(w);
  }
}

beforeAll(async () => {
  h = await startOwnHarness();
  const routes = declaredRoutes(h.app).filter((r) => r.method !== 'HEAD');
  adminRoutes = routes.filter((r) => r.access.who === 'admin');
  // A page with a parameter answers a made-up id with 404 when allowed too, as a refusal does:
  // asked only through its actions, which the CSRF check answers first.
  consolePages = routes.filter(
    (r) => r.access.who === 'operator-session' && !(r.method === 'GET' && r.url.includes(':')),
  );
  representatives = { admin: onePer(adminRoutes), console: onePer(consolePages) };
});
afterAll(async () => h?.close());

/** An operator added with the admin key, signed in, with its own password set: a whole session. */
async function operatorWithSession(role: Role): Promise<{ id: string; email: string; secret: string }> {
  const added = await adminCall(ADMIN_KEY, 'POST', '/admin/operators', {
    name: `probe ${role}`,
    email: `${uniqueCode('cp')}@example.com`,
    role,
  });
  expect(added.statusCode, added.body).toBe(200);
  const { operator, password } = added.json<{ operator: { id: string; email: string }; password: string }>();
  const signedIn = await signIn(operator.email, password);
  expect(signedIn.statusCode, signedIn.body).toBe(303);
  const secret = sessionSecretOf(signedIn) as string;
  const set = await consolePost(secret, PASSWORD_PAGE, { password: newPassword() });
  expect(set.statusCode, set.body).toBe(303);
  return { id: operator.id, email: operator.email, secret };
}

async function tokenOf(operatorId: string, role: Role): Promise<{ id: string; secret: string }> {
  const made = await adminCall(ADMIN_KEY, 'POST', `/admin/operators/${operatorId}/tokens`, {
    name: 'probe',
    role,
  });
  expect(made.statusCode, made.body).toBe(200);
  const body = made.json<{ token: string; view: { id: string } }>();
  return { id: body.view.id, secret: body.token };
}

async function auditRows(): Promise<number> {
  const { rows } = await sql<{ n: string }>`select count(*) as n from audit_log`.execute(h.database.db);
  return Number(rows[0]?.n ?? 0);
}

describe('credentials against a model of operators, sessions and tokens', () => {
  it('reads what a credential may do from answers that change nothing, on every route', async () => {
    const owner = await operatorWithSession('owner');
    const auditor = await operatorWithSession('auditor');
    const ownerToken = await tokenOf(owner.id, 'owner');
    const auditorToken = await tokenOf(auditor.id, 'auditor');
    const revoked = await tokenOf(owner.id, 'owner');
    await adminCall(ADMIN_KEY, 'POST', `/admin/operator-tokens/${revoked.id}/revoke`);
    const gone = await operatorWithSession('admin');
    await adminCall(ADMIN_KEY, 'POST', `/admin/operators/${gone.id}/disable`);
    const added = await adminCall(ADMIN_KEY, 'POST', '/admin/operators', {
      name: 'owing',
      email: `${uniqueCode('cp')}@example.com`,
      role: 'owner',
    });
    const fresh = added.json<{ operator: { id: string; email: string }; password: string }>();
    const owing = sessionSecretOf(await signIn(fresh.operator.email, fresh.password)) as string;
    earlier.push(owner.id, auditor.id, gone.id, fresh.operator.id);

    const before = await auditRows();
    const wrong: string[] = [];
    const saw = (what: string, reply: Reply, fine: boolean) => {
      if (!fine) wrong.push(`${what}: ${reply.statusCode} ${location(reply)} ${reply.body.slice(0, 120)}`);
    };
    expect(adminRoutes.length).toBeGreaterThan(40);
    for (const route of adminRoutes) {
      const what = `${route.method} ${route.url}`;
      // Let through: no handler runs on a body that does not parse; a read answers (or finds no such id).
      const answered = (reply: Reply) =>
        route.method === 'GET' ? [200, 400, 404].includes(reply.statusCode) : reply.statusCode === 400;
      for (const [who, bearer] of [
        ['admin key', ADMIN_KEY],
        ['owner token', ownerToken.secret],
      ] as const) {
        const { reply } = await probeAdmin(bearer, route);
        saw(`${who} on ${what}`, reply, answered(reply));
      }
      const { reply: byAuditor } = await probeAdmin(auditorToken.secret, route);
      saw(
        `auditor token on ${what}`,
        byAuditor,
        mayAct(['auditor'], permissionOf(route)) ? answered(byAuditor) : byAuditor.statusCode === 403,
      );
      const { reply: byRevoked } = await probeAdmin(revoked.secret, route);
      saw(`revoked token on ${what}`, byRevoked, byRevoked.statusCode === 401);
    }
    const pages = declaredRoutes(h.app).filter(
      (r) => r.access.who === 'operator-session' && r.method !== 'HEAD',
    );
    expect(consolePages.length).toBeGreaterThan(30);
    for (const route of pages) {
      const what = `${route.method} ${route.url}`;
      // Let through: a page (or a sign-in step's page sending a finished sign-in on), or an action
      // refused for want of the CSRF field, which is checked after access and before the handler.
      const answered = (reply: Reply) =>
        route.method === 'GET'
          ? reply.statusCode === 200 || (reply.statusCode === 303 && location(reply) === '/console/operator')
          : reply.statusCode === 403;
      if (route.method === 'GET' && route.url.includes(':')) {
        // A made-up id answers 404 to a session that may open the page, as a refusal does: these
        // pages are left out of the walk (their actions are in it).
        const { reply } = await probeConsole(owner.secret, route);
        saw(`owner session on ${what}`, reply, reply.statusCode === 404);
        continue;
      }
      const { reply: byOwner } = await probeConsole(owner.secret, route);
      saw(`owner session on ${what}`, byOwner, answered(byOwner));
      const { reply: byAuditor } = await probeConsole(auditor.secret, route);
      saw(
        `auditor session on ${what}`,
        byAuditor,
        mayAct(['auditor'], permissionOf(route)) ? answered(byAuditor) : byAuditor.statusCode === 404,
      );
      const { reply: byGone } = await probeConsole(gone.secret, route);
      saw(`disabled operator's session on ${what}`, byGone, toSignIn(byGone));
      const { reply: byOwing } = await probeConsole(owing, route);
      saw(
        `session owing a password on ${what}`,
        byOwing,
        duringSignIn(route)
          ? answered(byOwing) || (byOwing.statusCode === 303 && location(byOwing) === '/console/operator')
          : byOwing.statusCode === 303 && location(byOwing) === PASSWORD_PAGE,
      );
    }
    expect(wrong).toEqual([]);
    expect(await auditRows(), 'the probes changed nothing').toBe(before);
  });

  it('refuses a token wider or longer-lived than the token that makes it, and ends it with its maker', async () => {
    await runModel([
      cmd.token({ kind: 'key' }, 0, 0, 'auditor', 90),
      // An owner's auditor token asks for an owner token of a year: refused.
      cmd.token({ kind: 'token', own: true }, 0, 0, 'owner', 366),
      cmd.token({ kind: 'token', own: true }, 0, 0, 'auditor', 366),
      // Without days, cut to the maker's end; then the maker is revoked and takes it along.
      cmd.token({ kind: 'token', own: true }, 0, 0, undefined, undefined),
      cmd.token({ kind: 'token', own: true }, 1, 0, 'auditor', 30),
      cmd.revoke(0, null, false),
    ]);
  });

  it("ends every session open before an owner resets the operator's password", async () => {
    await runModel([
      cmd.signIn(0),
      cmd.password(0, 'none'),
      cmd.signIn(0),
      cmd.act('reset', 0, null),
      // The sessions from before the reset are gone: none may set a password without the current one.
      cmd.password(1, 'none'),
      cmd.password(0, 'none'),
      cmd.signIn(0),
      cmd.password(2, 'none'),
      cmd.password(2, 'right'),
    ]);
  });

  it(
    'keeps every held credential to what the model says, through any sequence of commands',
    async () => {
      // Runs (and shrinking) start only within the budget: on a machine slowed by others the
      // property does fewer runs rather than time out, and a failure keeps its shrunk form so far.
      const deadline = Date.now() + BUDGET_MS;
      await fc.assert(
        fc.asyncProperty(fc.commands(commands, { maxCommands: COMMANDS, size: 'max' }), async (cmds) => {
          if (Date.now() < deadline) await runModel(cmds);
        }),
        { numRuns: RUNS, plugins: [fc.unbiased()] },
      );
    },
    2 * BUDGET_MS,
  );
});
