/** The outcome of admitting one call: replay protection and the per-app rate limit together. */
export type Admission = 'ok' | 'replayed' | 'limited';

/**
 * Shared by every instance: the database (default) or Redis. A nonce is kept for the token
 * lifetime, so a captured request cannot be replayed while any token it could carry still lives.
 */
export interface RequestGate {
  admit(appId: string, nonce: string): Promise<Admission>;
  purge(): Promise<void>;
  close(): Promise<void>;
}

export interface GateSettings {
  nonceTtlSeconds: number;
  limitPerMinute: number;
}

export const NONCE_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;

export function currentWindow(now = Date.now()): number {
  return Math.floor(now / 60000);
}
