import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Where `keyward login` keeps personal tokens: the user's config directory (XDG_CONFIG_HOME, else
 * ~/.config), never the project, so a token follows its person and not a checkout. One token per
 * admin API address: a person may sign in to several servers.
 */
export function credentialsFile(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== ''
      ? env.XDG_CONFIG_HOME
      : path.join(os.homedir(), '.config');
  return path.join(base, 'keyward', 'credentials.json');
}

type Credentials = Record<string, { token: string }>;

function read(file: string): Credentials {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    return parsed !== null && typeof parsed === 'object' ? (parsed as Credentials) : {};
  } catch {
    return {};
  }
}

/** The token kept for this admin API, if any. */
export function storedToken(adminUrl: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const token = read(credentialsFile(env))[adminUrl]?.token;
  return typeof token === 'string' && token !== '' ? token : undefined;
}

/**
 * Keeps (or, with undefined, forgets) the token for this admin API. The folder is 0700 and the
 * file 0600 from its creation: written to a new file and renamed, so it is never readable by others.
 */
export function storeToken(
  adminUrl: string,
  token: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const file = credentialsFile(env);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const all = read(file);
  if (token === undefined) delete all[adminUrl];
  else all[adminUrl] = { token };
  const scratch = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(scratch, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(scratch, file);
  return file;
}
