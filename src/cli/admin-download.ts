import { readAdminKey } from '../admin-key.js';
import { loadConfig } from '../config.js';
import { adminUrl, CliError, unreachable } from './admin-client.js';
import { printable } from './printable.js';

/**
 * A POST to the admin API whose answer is a file (`keyward backup`): its body as a stream and its
 * headers (what the file holds), or the server's error as a CliError. adminCall reads whole JSON
 * answers; a backup may not fit in memory.
 */
export async function adminDownload(
  path: string,
  body: unknown,
): Promise<{ body: ReadableStream<Uint8Array>; headers: Headers }> {
  const base = adminUrl();
  const key = readAdminKey(loadConfig());
  if (key === undefined) {
    throw new CliError(
      'admin key missing: set KEYWARD_ADMIN_KEY to the server’s key, or run keyward with the DATA_DIR the server uses',
    );
  }
  let response: Response;
  try {
    response = await fetch(`${base}/admin${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  } catch {
    throw unreachable(base);
  }
  if (response.ok && response.body !== null) return { body: response.body, headers: response.headers };
  const answer = await response.text();
  let message = `HTTP ${response.status}`;
  try {
    const parsed = JSON.parse(answer) as { error?: unknown };
    if (parsed.error !== undefined) message = String(parsed.error);
  } catch {
    // not JSON: the status says it
  }
  throw new CliError(printable(response.status === 401 ? 'admin key wrong: the server refused it' : message));
}
