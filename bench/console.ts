import { sql } from 'kysely';
import type { Db } from '../src/db/client.js';
import type { RequestShape } from './load.js';
import { adminAccount } from './seed.js';
import { ADMIN_PASSWORD } from './settings.js';

/** The enterprise the console scenarios read: a seeded tenant grown to this many members. */
export const CONSOLE_TENANT = 2;
export const CONSOLE_MEMBERS = 10_000;
/** The console's page size (src/http/console/enterprise): page 100 is rows 4,951–5,000. */
export const CONSOLE_PAGE = 100;

/** Grows the console tenant to CONSOLE_MEMBERS members (its seeded ones included). */
export async function growConsoleTenant(db: Db, seededMembers: number): Promise<void> {
  await sql`
    insert into members (global_id, enterprise_id, user_name, account, name, department_id, identity)
    select 'console-bench-' || k, ${CONSOLE_TENANT}::bigint, 'w' || k, 'w' || k || '@b' || lpad(${CONSOLE_TENANT}::text, 5, '0'),
           'Wide member ' || k, k % 10, 'member'
      from generate_series(1, ${CONSOLE_MEMBERS - seededMembers}::int) k`.execute(db);
  await sql`analyze members`.execute(db);
}

/** Signs the console tenant's administrator into the console, as a browser does: its cookie. */
export async function consoleCookie(url: string, adminKey: string): Promise<string> {
  const account = adminAccount(CONSOLE_TENANT);
  const set = await fetch(`${url}/admin/members/password`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ account, password: ADMIN_PASSWORD }),
  });
  if (!set.ok) throw new Error(`setting the console tenant's password: HTTP ${set.status}`);
  const signedIn = await fetch(`${url}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ userName: account, password: ADMIN_PASSWORD }),
  });
  const cookie = /keyward_session=[^;]+/.exec(signedIn.headers.get('set-cookie') ?? '')?.[0];
  if (signedIn.status !== 303 || cookie === undefined) {
    throw new Error(`console sign-in: HTTP ${signedIn.status}`);
  }
  return cookie;
}

/** Signs the platform operator into the console with the admin key, as its sign-in form does. */
export async function operatorConsoleCookie(url: string, adminKey: string): Promise<string> {
  const signedIn = await fetch(`${url}/console/operator/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ adminKey }),
  });
  const cookie = /keyward_session=[^;]+/.exec(signedIn.headers.get('set-cookie') ?? '')?.[0];
  if (signedIn.status !== 303 || cookie === undefined) {
    throw new Error(`operator console sign-in: HTTP ${signedIn.status}`);
  }
  return cookie;
}

/** The employees page of the 10,000-member enterprise, at page CONSOLE_PAGE or a search. */
export function employeesPage(cookie: string, search?: string): RequestShape {
  const query = search === undefined ? `page=${CONSOLE_PAGE}` : `q=${encodeURIComponent(search)}`;
  return {
    method: 'GET',
    path: () => `/console/enterprise?${query}`,
    headers: { cookie },
    nonce: false,
    accept: (status, body) => status === 200 && body.includes('<tbody>'),
  };
}

/** Bytes of one employees page as sent (no compression). */
export async function employeesPageBytes(url: string, cookie: string): Promise<number> {
  const response = await fetch(`${url}/console/enterprise?page=${CONSOLE_PAGE}`, { headers: { cookie } });
  return (await response.arrayBuffer()).byteLength;
}

/**
 * The operator console's search box (console search): `q` as typed; one hit answers 303 to its
 * page, several a 200 listing them. Either is a found identifier.
 */
export function operatorSearch(cookie: string, q: string): RequestShape {
  return {
    method: 'GET',
    path: () => `/console/operator/search?q=${encodeURIComponent(q)}`,
    headers: { cookie },
    nonce: false,
    accept: (status) => status === 303,
  };
}

/** An enterprise's page in the operator's console: its licenses, machines, usage and changes. */
export function operatorEnterprisePage(cookie: string, globalId: string): RequestShape {
  return {
    method: 'GET',
    path: () => `/console/operator/enterprises/${encodeURIComponent(globalId)}`,
    headers: { cookie },
    nonce: false,
    accept: (status, body) => status === 200 && body.includes('data-enterprise-licenses'),
  };
}
