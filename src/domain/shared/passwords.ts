import { availableParallelism } from 'node:os';
import { hash, verify } from '@node-rs/argon2';
import { Lanes } from './lanes.js';

// argon2id at OWASP's first recommended setting (19 MiB, 2 passes, 1 lane). @node-rs/argon2
// computes on its own threads, so hashing never blocks the event loop.
const OPTIONS = { memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/**
 * Hashes computed at once: one per core. Member op 1 hashes up to 100 passwords; handed to the
 * thread pool all at once they ran four at a time whatever the cores, 19 MiB each, without
 * finishing any sooner than one per core does.
 */
const lanes = new Lanes(availableParallelism());

export function hashPassword(password: string): Promise<string> {
  return lanes.run(() => hash(password, OPTIONS));
}

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await lanes.run(() => verify(stored, password));
  } catch {
    return false;
  }
}
