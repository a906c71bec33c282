import type { components } from './schema.js';

export type FailureEnvelope = components['schemas']['FailureEnvelope'];

/**
 * A failure the server answered with its envelope: a business failure (HTTP 299, `code` from the
 * operation's table), an unknown path or method (404, 405) or the rate limit (429). Member op 1's
 * partial failure (60027) keeps its `data` (`succeeded` and `failed`).
 */
export class KeywardApiError extends Error {
  readonly code: string;
  override readonly cause: string;
  readonly data: unknown;

  constructor(
    envelope: FailureEnvelope,
    readonly status: number,
    readonly requestId: string | undefined,
  ) {
    super(envelope.message);
    this.name = 'KeywardApiError';
    this.code = envelope.code;
    this.cause = envelope.cause;
    this.data = envelope.data;
  }
}

/** An RFC 6749 §5.2 answer of the token endpoint (`invalid_client`, `invalid_grant` …). */
export class KeywardAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status: number,
  ) {
    super(`${error}: ${description}`);
    this.name = 'KeywardAuthError';
  }
}

/**
 * Why `verifyLease` refused a lease: `signature` (not signed by a published key, or not with
 * EdDSA), `expired`, `not-yet-valid`, `fingerprint` (checked out for another machine),
 * `unknown-key` (its kid is not in the key set), `malformed` (not a Keyward lease), `audience`
 * (another application's), `jwks-unavailable` (the key set could not be fetched or read),
 * `license-ended` (the license it came from ended: `limits.endDate` is past).
 */
export type LeaseFailure =
  | 'signature'
  | 'expired'
  | 'not-yet-valid'
  | 'fingerprint'
  | 'unknown-key'
  | 'malformed'
  | 'audience'
  | 'jwks-unavailable'
  | 'license-ended'
  /** A relay's lease whose pool grant has ended. */
  | 'grant-expired'
  /** A relay's lease that says more than its pool grant gives (license, seats, machine, time). */
  | 'beyond-grant'
  /** An activation answer to another request than the machine's own (verifyActivation). */
  | 'request';

/** A lease `verifyLease` refused, and why (`reason`). */
export class KeywardLeaseError extends Error {
  constructor(
    readonly reason: LeaseFailure,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
    this.name = 'KeywardLeaseError';
  }
}
