import { adminKeyFile, readAdminKey } from '../admin-key.js';
import { loadConfig, localUrl, type Config } from '../config.js';
import { storedToken } from './credentials.js';
import { printable, text } from './printable.js';

export class CliError extends Error {}

/** Where the CLI finds the running server: KEYWARD_URL, else this machine's PORT. */
export function serverUrl(env: NodeJS.ProcessEnv = process.env): string {
  return (env.KEYWARD_URL ?? `http://127.0.0.1:${loadConfig(env).port}`).replace(/\/+$/, '');
}

/**
 * Where the CLI finds the admin API: KEYWARD_ADMIN_URL; else the listener the server keeps apart for
 * it under the same environment (ADMIN_HOST:ADMIN_PORT, or 127.0.0.1:PORT+1 when HOST is public);
 * else the server itself.
 */
export function adminUrl(env: NodeJS.ProcessEnv = process.env): string {
  if (env.KEYWARD_ADMIN_URL !== undefined && env.KEYWARD_ADMIN_URL !== '') {
    return env.KEYWARD_ADMIN_URL.replace(/\/+$/, '');
  }
  const apart = loadConfig(env).adminListener;
  return apart === undefined ? serverUrl(env) : localUrl(apart.host, apart.port);
}

/** The CLI found no admin key: neither KEYWARD_ADMIN_KEY nor DATA_DIR/admin.key holds one. */
export class AdminKeyMissing extends CliError {}

/** The server refused the admin key the CLI sent. */
export class AdminKeyRefused extends CliError {}

/**
 * The credential the CLI sends and where it found it: KEYWARD_ADMIN_KEY when set; else a personal
 * token (KEYWARD_TOKEN, else the one `keyward login` kept for this server); else the admin key the
 * server keeps in DATA_DIR/admin.key.
 */
export function credentialOf(
  config: Config,
  base: string,
  env: NodeJS.ProcessEnv = process.env,
): { key: string; from: string; kind: 'admin key' | 'token' } {
  if (config.adminKey !== undefined)
    return { key: config.adminKey, from: 'KEYWARD_ADMIN_KEY', kind: 'admin key' };
  if (env.KEYWARD_TOKEN !== undefined && env.KEYWARD_TOKEN !== '') {
    return { key: env.KEYWARD_TOKEN, from: 'KEYWARD_TOKEN', kind: 'token' };
  }
  const token = storedToken(base, env);
  if (token !== undefined) return { key: token, from: 'keyward login', kind: 'token' };
  const key = readAdminKey(config);
  const file = adminKeyFile(config);
  if (key !== undefined) return { key, from: file, kind: 'admin key' };
  // The CLI never makes a key of its own: one the server does not hold would open nothing.
  throw new AdminKeyMissing(
    text`admin key missing: KEYWARD_ADMIN_KEY is not set and ${file} does not exist (or is empty), ` +
      'and no personal token is kept (keyward login, KEYWARD_TOKEN). Set KEYWARD_ADMIN_KEY to the ' +
      "server's key, sign in with keyward login, or run keyward in the folder the server runs in (the " +
      'server writes data/admin.key there at its first start) or with the DATA_DIR it uses',
  );
}

/** The error the CLI gives when nothing answers at `base`. */
export function unreachable(base: string): CliError {
  return new CliError(
    text`cannot reach the Keyward server at ${base}; is it running? (KEYWARD_URL, KEYWARD_ADMIN_URL)`,
  );
}

/** Calls the running server's admin API; the CLI never opens the database itself. */
export async function adminCall<T>(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  credential?: string,
): Promise<T> {
  const config = loadConfig();
  const base = adminUrl();
  const { key, from, kind } =
    credential === undefined
      ? credentialOf(config, base)
      : { key: credential, from: 'the token given', kind: 'token' as const };
  let response: Response;
  try {
    response = await fetch(`${base}/admin${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw unreachable(base);
  }
  const answer = await response.text();
  const parsed: unknown = answer === '' ? undefined : JSON.parse(answer);
  if (!response.ok) {
    if (response.status === 401 && kind === 'token') {
      const reason =
        parsed !== null && typeof parsed === 'object' && 'error' in parsed ? String(parsed.error) : 'refused';
      throw new AdminKeyRefused(text`personal token refused by ${base} (from ${from}): ${reason}`);
    }
    if (response.status === 401) {
      throw new AdminKeyRefused(
        text`admin key wrong: the server at ${base} refused the key in ${from}. It takes the key it was ` +
          'started with: its KEYWARD_ADMIN_KEY, else the admin.key in its DATA_DIR',
      );
    }
    if (response.status === 404 && !(parsed !== null && typeof parsed === 'object' && 'error' in parsed)) {
      throw new CliError(
        text`${base} does not serve the admin API: a server on a public HOST or with ADMIN_PORT serves it ` +
          'on a listener of its own (ADMIN_HOST:ADMIN_PORT, by default 127.0.0.1:PORT+1); set KEYWARD_ADMIN_URL',
      );
    }
    const message =
      parsed !== null && typeof parsed === 'object' && 'error' in parsed
        ? String((parsed as { error: unknown }).error)
        : `HTTP ${response.status}`;
    throw new CliError(printable(message));
  }
  return parsed as T;
}
