import type { Scope } from '../apps/apps.service.js';
import type { TokenGrant, UserTokenGrant } from '../tokens/tokens.repository.js';

/** The outcome of admitting one call: replay protection and the per-app rate limit together. */
export type Admission = 'ok' | 'replayed' | 'limited';

/** What a guarded call presents: its app token, the scope its surface needs, its nonce, a user token. */
export interface CallCheck {
  appToken: string;
  scope: Scope;
  /**
   * Already known to match NONCE_PATTERN; null for a call whose replay is harmless, which records
   * no nonce (and is then always fresh).
   */
  nonce: string | null;
  userToken?: string;
}

/**
 * What the store knows about a call. The nonce is recorded and the call counted only when the app
 * token is live and holds the scope (`admission` is undefined otherwise), as if checked in turn.
 */
export interface CallFacts {
  app: TokenGrant | undefined;
  admission: Admission | undefined;
  /** Looked up only when a user token was given. */
  user: UserTokenGrant | undefined;
}

/**
 * Shared by every instance: the database (default) or Redis. A nonce is kept for the token
 * lifetime, so a captured request cannot be replayed while any token it could carry still lives.
 */
export interface RequestGate {
  admit(appId: string, nonce: string | null): Promise<Admission>;
  /** The guards' one question per call: tokens, nonce and rate limit, in as few round trips as the store allows. */
  check(call: CallCheck): Promise<CallFacts>;
  /**
   * Counts one request against each key (distinct keys) in this minute's window and answers each
   * key's count so far, this request included: rate limits beyond the per-app one, shared by every
   * instance like it. Keys must not look like app ids; give them a prefix ending in ':'.
   */
  countRequests(keys: string[]): Promise<number[]>;
  /** Each key's count in this minute's window, without counting: for limits on failures alone. */
  peekCounts(keys: string[]): Promise<number[]>;
  purge(): Promise<void>;
  close(): Promise<void>;
}

export interface GateSettings {
  nonceTtlSeconds: number;
  limitPerMinute: number;
}

export const NONCE_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;

/**
 * Rows each app's per-minute counter is spread over: concurrent calls of one app rarely meet on a
 * row, so none waits for another's commit (migration 0080).
 */
export const RATE_SHARDS = 16;

export function currentWindow(now = Date.now()): number {
  return Math.floor(now / 60000);
}

/** Seconds until the next one-minute window, when every rate limit's count starts again (Retry-After). */
export function secondsToNextWindow(nowMs = Date.now()): number {
  return Math.max(1, Math.ceil((60_000 - (nowMs % 60_000)) / 1000));
}

export function randomShard(): number {
  return Math.floor(Math.random() * RATE_SHARDS);
}

export function admissionOf(hits: number, fresh: boolean, limitPerMinute: number): Admission {
  if (hits > limitPerMinute) return 'limited';
  return fresh ? 'ok' : 'replayed';
}
