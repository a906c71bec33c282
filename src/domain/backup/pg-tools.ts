import { spawn } from 'node:child_process';

/** pg_dump or pg_restore is missing, or failed: its own message, which names the cause. */
export class PgToolError extends Error {}

/**
 * libpq's environment for a DATABASE_URL: the password travels in PGPASSWORD rather than on the
 * command line, where any user of the machine could read it in the process list.
 */
export function pgEnvironment(databaseUrl: string): Record<string, string> {
  const url = new URL(databaseUrl);
  const env: Record<string, string> = {};
  const set = (name: string, value: string | null | undefined) => {
    if (value !== null && value !== undefined && value !== '') env[name] = value;
  };
  set('PGHOST', decodeURIComponent(url.hostname.replace(/^\[(.*)\]$/, '$1')));
  set('PGPORT', url.port);
  set('PGUSER', decodeURIComponent(url.username));
  set('PGPASSWORD', decodeURIComponent(url.password));
  set('PGDATABASE', decodeURIComponent(url.pathname.replace(/^\//, '')));
  // A socket directory given as ?host=/var/run/postgresql, and TLS settings.
  set('PGHOST', url.searchParams.get('host') ?? env.PGHOST);
  set('PGSSLMODE', url.searchParams.get('sslmode'));
  set('PGSSLROOTCERT', url.searchParams.get('sslrootcert'));
  set('PGAPPNAME', 'keyward-backup');
  return env;
}

/** Runs a PostgreSQL client program to its end; a failure is named with what it printed. */
export function runPgTool(
  program: 'pg_dump' | 'pg_restore',
  args: string[],
  databaseUrl: string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    // Only what libpq needs: none of this process's other settings (secrets among them) pass on.
    const base = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => ['PATH', 'HOME', 'LANG', 'TZ'].includes(name)),
    );
    const child = spawn(program, args, {
      env: { ...base, ...pgEnvironment(databaseUrl) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 8192) stderr += chunk.toString();
    });
    child.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'ENOENT'
          ? new PgToolError(
              `${program} is not installed (or not on PATH): install PostgreSQL's client programs, ` +
                "of the server's major version or newer (e.g. apt install postgresql-client)",
            )
          : error,
      );
    });
    child.once('close', (code) => {
      if (code === 0) resolve();
      else reject(new PgToolError(`${program} failed (exit ${code}): ${stderr.trim()}`));
    });
  });
}

/** pg_dump in its custom format, of the rows `snapshot` (an exported snapshot) sees. */
export function pgDump(databaseUrl: string, snapshot: string, file: string): Promise<void> {
  return runPgTool(
    'pg_dump',
    ['--format=custom', `--snapshot=${snapshot}`, '--no-password', `--file=${file}`],
    databaseUrl,
  );
}

/**
 * pg_restore into an empty database, all or nothing. Without owners and grants: the database's
 * roles are the new server's; `pg_dump` does not carry roles across (docs/operations.md).
 */
export function pgRestore(databaseUrl: string, file: string): Promise<void> {
  return runPgTool(
    'pg_restore',
    [
      '--single-transaction',
      '--exit-on-error',
      '--no-owner',
      '--no-privileges',
      '--no-password',
      `--dbname=${pgEnvironment(databaseUrl).PGDATABASE ?? ''}`,
      file,
    ],
    databaseUrl,
  );
}
