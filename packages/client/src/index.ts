export { createKeywardClient, type KeywardClient, type KeywardClientOptions } from './client.js';
export {
  KeywardApiError,
  KeywardAuthError,
  KeywardLeaseError,
  type FailureEnvelope,
  type LeaseFailure,
} from './errors.js';
export {
  LEASE_EXP_BOUNDS,
  LEASE_ISSUER,
  LEASE_TYP,
  type LeaseExpBound,
  type LeaseHolderClaim,
  type OfflineLeaseClaims,
} from './lease-claims.js';
export {
  GRANT_HEADER,
  GRANT_TYP,
  type GrantedLicense,
  type PoolGrantClaims,
  type RelayPublicJwk,
} from './pool-grant.js';
export { DEFAULT_RETRY_POLICY, newIdempotencyKey, type RetryPolicy } from './retry.js';
export type { KeywardPaths } from './paths.js';
export type { components, paths } from './schema.js';
export { requestAppToken, requestToken, type TokenRequestOptions, type TokenResponse } from './token.js';
export { verifyLease, verifyPoolGrant, type LeaseKeys, type VerifyLeaseOptions } from './verify-lease.js';
export type { JSONWebKeySet } from 'jose';
export {
  verifyWebhook,
  WebhookVerificationError,
  type VerifyWebhookOptions,
  type WebhookEvent,
} from './verify-webhook.js';
export {
  createActivationRequest,
  readActivationRequest,
  returnCodeFor,
  verifyActivation,
  type ActivatedLease,
  type ActivationAnswerFile,
  type ActivationRequestFile,
  type PendingActivation,
} from './activation/activation.js';
export {
  ActivationFormatError,
  activatedFingerprint,
  bindingOf,
  bytesOfTyped,
  decodeRequest,
  decodeReturnCode,
  decodeTypedLease,
  encodeRequest,
  encodeReturnCode,
  encodeTypedLeaseBody,
  fingerprintHashOf,
  kidPrefixOf,
  MAX_ACTIVATION_DAYS,
  nonceText,
  typedLeaseSigningInput,
  type ActivationRequest,
  type ReturnCode,
  type TypedLeaseBody,
} from './activation/messages.js';
export { decodeTyped, encodeTyped, TypedCodeError } from './activation/typed-code.js';
