import type { AdminKeySource } from '../admin-key.js';
import { text } from '../cli/printable.js';

/** What the start banner tells; the admin key only by where it is, never its value. */
export interface BannerFacts {
  version: string;
  url: string;
  /** The admin API's listener, when it has one apart from `url`. */
  adminUrl: string | undefined;
  database: { kind: 'embedded'; dataDir: string } | { kind: 'postgres'; databaseUrl: string };
  adminKey: AdminKeySource;
}

/**
 * Where DATABASE_URL points, as `host:port/database`: no user, no password, no query (which may
 * hold a password too).
 */
export function postgresLocation(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    const host =
      url.hostname === '' ? 'the local socket' : `${url.hostname}${url.port === '' ? '' : `:${url.port}`}`;
    const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
    return database === '' ? host : `${host}/${database}`;
  } catch {
    return 'the server DATABASE_URL names';
  }
}

function adminKeyWhere(adminKey: AdminKeySource): string {
  if (adminKey.source === 'variable') return 'from the KEYWARD_ADMIN_KEY variable';
  return text`in ${adminKey.file}${adminKey.generated ? ' (generated at this start; the CLI reads it there)' : ''}`;
}

/** The lines printed once the server listens, for a person at a terminal (LOG_FORMAT=pretty). */
export function bannerLines(facts: BannerFacts): string[] {
  const row = (label: string, value: string) => `  ${label.padEnd(11)}${value}`;
  const database =
    facts.database.kind === 'embedded'
      ? text`embedded, in ${facts.database.dataDir}`
      : text`PostgreSQL at ${postgresLocation(facts.database.databaseUrl)}`;
  return [
    '',
    text`Keyward ${facts.version} is ready`,
    row('URL', text`${facts.url}`),
    row('console', text`${facts.url}/console`),
    row('API docs', text`${facts.url}/docs`),
    row('database', database),
    row('admin key', adminKeyWhere(facts.adminKey)),
    ...(facts.adminUrl === undefined ? [] : [row('admin API', text`${facts.adminUrl}`)]),
    '',
    'next, in a second terminal in this folder:',
    `  ${exportLine(facts)}`,
    '  npx keyward demo   # loads demo data, then prints console logins, an app and requests to try',
    '',
  ];
}

/**
 * The one line every later command takes the server from (the CLI, and the README's and the
 * tour's curl examples): this server's real address and port, not a default that may be another.
 */
export function exportLine(facts: Pick<BannerFacts, 'url' | 'adminUrl'>): string {
  const admin = facts.adminUrl === undefined ? '' : text` KEYWARD_ADMIN_URL=${facts.adminUrl}`;
  return text`export KEYWARD_URL=${facts.url}${admin}`;
}
