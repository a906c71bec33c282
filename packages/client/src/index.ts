export { createKeywardClient, type KeywardClient, type KeywardClientOptions } from './client.js';
export { KeywardApiError, KeywardAuthError, type FailureEnvelope } from './errors.js';
export type { KeywardPaths } from './paths.js';
export type { components, paths } from './schema.js';
export { requestAppToken, requestToken, type TokenRequestOptions, type TokenResponse } from './token.js';
