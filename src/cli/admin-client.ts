import { resolveAdminKey } from '../admin-key.js';
import { loadConfig } from '../config.js';
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
  if (apart === undefined) return serverUrl(env);
  const wildcard = apart.host === '0.0.0.0' || apart.host === '::' || apart.host === '[::]';
  const host = wildcard
    ? '127.0.0.1'
    : apart.host.includes(':') && !apart.host.startsWith('[')
      ? `[${apart.host}]`
      : apart.host;
  return `http://${host}:${apart.port}`;
}

/** Calls the running server's admin API; the CLI never opens the database itself. */
export async function adminCall<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const config = loadConfig();
  const base = adminUrl();
  let response: Response;
  try {
    response = await fetch(`${base}/admin${path}`, {
      method,
      headers: {
        authorization: `Bearer ${resolveAdminKey(config)}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new CliError(
      text`cannot reach the Keyward server at ${base}; is it running? (KEYWARD_URL, KEYWARD_ADMIN_URL)`,
    );
  }
  const answer = await response.text();
  const parsed: unknown = answer === '' ? undefined : JSON.parse(answer);
  if (!response.ok) {
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
