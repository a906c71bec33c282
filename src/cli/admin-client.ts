import { resolveAdminKey } from '../admin-key.js';
import { loadConfig } from '../config.js';
import { printable, text } from './printable.js';

export class CliError extends Error {}

/** Where the CLI finds the running server: KEYWARD_URL, else this machine's PORT. */
export function serverUrl(): string {
  return (process.env.KEYWARD_URL ?? `http://127.0.0.1:${loadConfig().port}`).replace(/\/+$/, '');
}

/** Calls the running server's admin API; the CLI never opens the database itself. */
export async function adminCall<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const config = loadConfig();
  const base = serverUrl();
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
    throw new CliError(text`cannot reach the Keyward server at ${base}; is it running? (KEYWARD_URL)`);
  }
  const answer = await response.text();
  const parsed: unknown = answer === '' ? undefined : JSON.parse(answer);
  if (!response.ok) {
    const message =
      parsed !== null && typeof parsed === 'object' && 'error' in parsed
        ? String((parsed as { error: unknown }).error)
        : `HTTP ${response.status}`;
    throw new CliError(printable(message));
  }
  return parsed as T;
}
