import { availableParallelism } from 'node:os';
import { hash, verify } from '@node-rs/argon2';
import { Lanes } from './lanes.js';

// argon2id at OWASP's first recommended setting (19 MiB, 2 passes, 1 lane). @node-rs/argon2
// computes on its own threads, so hashing never blocks the event loop.
const OPTIONS = { memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/**
 * Hashes computed at once: one per core. Member op 1 hashes up to 100 passwords; handed to the
 * thread pool all at once they ran four at a time whatever the cores, 19 MiB each, without
 * finishing any sooner than one per core does. Waiting hashes take turns by tenant, so one
 * tenant's hundreds of hashes do not hold up another tenant's login.
 */
const lanes = new Lanes(availableParallelism());

let computed = 0;

/** Whose work a hash is, for taking turns: the enterprise whose members change. */
export const enterpriseTenant = (enterpriseId: number): string => `enterprise:${enterpriseId}`;

/** A login's verification is the work of the application that asks for the member's token. */
export const appTenant = (appId: string): string => `app:${appId}`;

export function hashPassword(password: string, tenant: string): Promise<string> {
  return lanes.run(tenant, () => {
    computed += 1;
    return hash(password, OPTIONS);
  });
}

export async function verifyPassword(stored: string, password: string, tenant: string): Promise<boolean> {
  try {
    return await lanes.run(tenant, () => verify(stored, password));
  } catch {
    return false;
  }
}

/** Passwords this process has hashed (verifications not included): lets tests see work not done. */
export function passwordsHashed(): number {
  return computed;
}
