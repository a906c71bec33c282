package dev.keyward;

import java.time.Instant;
import java.util.Optional;

/**
 * What a verified activation answer says ({@link ActivationVerifier#verify}): the lease this machine
 * may run offline until {@link #expiresAt()}.
 *
 * @param leaseId the lease's id (a UUID), which its return code names
 * @param issuedAt when the server signed it
 * @param expiresAt the machine runs offline until then
 * @param expBound what set {@code expiresAt}: the days asked, the license's end or its usage time left
 * @param assetNum the lock's asset number
 * @param crmProductId the product
 * @param appKey the application
 * @param claims the signed lease's claims when the answer was its JWS or file; empty for a typed answer
 */
public record ActivatedLease(String leaseId, Instant issuedAt, Instant expiresAt, LeaseClaims.ExpBound expBound,
                             String assetNum, String crmProductId, String appKey, Optional<LeaseClaims> claims) {}
