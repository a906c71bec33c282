import { hash, verify } from '@node-rs/argon2';

// argon2id at OWASP's first recommended setting (19 MiB, 2 passes, 1 lane). @node-rs/argon2
// computes on its own threads, so hashing never blocks the event loop.
const OPTIONS = { memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}
