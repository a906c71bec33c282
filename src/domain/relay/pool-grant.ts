// What a pool grant says is defined once, by the client that verifies the leases it certifies
// (packages/client, pool-grant.ts): the server signs exactly that shape.
export {
  GRANT_HEADER,
  GRANT_TYP,
  type GrantedLicense,
  type PoolGrantClaims,
  type RelayPublicJwk,
} from '../../keyward-client.js';
