package dev.keyward;

import com.fasterxml.jackson.databind.JsonNode;
import dev.keyward.LeaseVerificationException.Reason;
import java.security.PublicKey;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Verifies an activation's answer on the machine that asked (docs/activation.md), without the
 * server: its typed code, the answer file's text or the signed lease (JWS) alone. It must be signed
 * by a key of the key set the software shipped with, answer this very request (its nonce, app, lock
 * and product), be for this machine and be in its time.
 *
 * <p>A typed answer is refused, in this order: {@code malformed} (a group does not check, the code
 * is cut short, or it is no answer; {@link LeaseVerificationException#mistypedGroup()} names the
 * group), {@code unknown-key}, {@code signature}, {@code not-yet-valid}, {@code expired},
 * {@code request} (the nonce or the binding differs), {@code fingerprint}. An answer file or a JWS is
 * verified as an offline lease ({@link LeaseVerifier}, with {@code fph1:…} as the fingerprint and
 * the request's appKey as the audience), then refused with {@code request} when its
 * {@code activation.nonce}, {@code assetNum} or {@code crmProductId} differ from the request's.
 *
 * <pre>{@code
 * ActivationRequest request = ActivationRequest.load(dir.resolve("request.json"));
 * try {
 *     ActivatedLease lease = ActivationVerifier.verify(typed, request, Jwks.load(shippedJwks), machineId);
 *     runUntil(lease.expiresAt());
 * } catch (LeaseVerificationException e) {
 *     refuse(e.getMessage()); // "activation refused (malformed): group 5 does not check: …"
 * }
 * }</pre>
 */
public final class ActivationVerifier {
    private ActivationVerifier() {}

    /** Verifies {@code answer} now. */
    public static ActivatedLease verify(String answer, ActivationRequest request, Jwks jwks, String fingerprint)
            throws LeaseVerificationException {
        return verify(answer, request, jwks, fingerprint, Instant.now());
    }

    /**
     * Verifies {@code answer} at {@code now}.
     *
     * @param answer the typed code, the answer file's text or the JWS of its {@code lease}
     * @param request the machine's pending request, as saved
     * @param jwks the server's key set, as shipped with the software
     * @param fingerprint this machine's (the same the request was made with)
     * @param now the clock to verify at
     * @return the activated lease
     * @throws LeaseVerificationException with the reason when the answer is refused
     */
    public static ActivatedLease verify(String answer, ActivationRequest request, Jwks jwks, String fingerprint,
                                        Instant now) throws LeaseVerificationException {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(jwks, "jwks");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(now, "now");
        if (answer == null) throw refuse(Reason.MALFORMED, "no answer", null);
        String text = answer.trim();
        String lease = text;
        if (text.startsWith("{")) {
            JsonNode file = Json.parse(text);
            if (file == null) throw refuse(Reason.MALFORMED, "the answer file is not JSON", null);
            lease = Json.text(file, "lease");
            if (!"activation-answer".equals(Json.text(file, "keyward")) || lease == null) {
                throw refuse(Reason.MALFORMED, "the file is not a Keyward activation answer", null);
            }
        }
        if (lease.split("\\.", -1).length != 3) return verifyTyped(lease, request, jwks, fingerprint, now);
        return verifyJws(lease, request, jwks, fingerprint, now);
    }

    private static ActivatedLease verifyTyped(String code, ActivationRequest request, Jwks jwks, String fingerprint,
                                              Instant now) throws LeaseVerificationException {
        ActivationMessages.TypedLease typed;
        try {
            typed = ActivationMessages.decodeTypedLease(TypedCode.decode(code));
        } catch (ActivationFormatException e) {
            throw refuse(Reason.MALFORMED, e.getMessage(), e);
        }
        List<PublicKey> keys = jwks.ed25519KeysWithKidPrefix(typed.kidPrefix());
        if (keys.isEmpty()) throw refuse(Reason.UNKNOWN_KEY, "no key of the key set signed it", null);
        if (!Jwks.verifiesWithAny(keys, ActivationMessages.typedLeaseSigningInput(typed.signed()), typed.signature())) {
            throw refuse(Reason.SIGNATURE, "its signature does not verify", null);
        }
        long nowSeconds = now.getEpochSecond();
        if (typed.issuedAt() > nowSeconds) throw refuse(Reason.NOT_YET_VALID, "it is dated in the future", null);
        if (typed.expiresAt() <= nowSeconds) throw refuse(Reason.EXPIRED, "it has expired", null);
        byte[] binding = ActivationMessages.binding(request.appKey(), request.assetNum(), request.crmProductId());
        if (!Arrays.equals(typed.nonce(), request.nonce()) || !Arrays.equals(typed.binding(), binding)) {
            throw refuse(Reason.REQUEST, "it answers another activation request", null);
        }
        if (!Arrays.equals(typed.fingerprintHash(), ActivationMessages.fingerprintHash(fingerprint))) {
            throw refuse(Reason.FINGERPRINT, "it was activated for another machine", null);
        }
        return new ActivatedLease(typed.leaseId(), Instant.ofEpochSecond(typed.issuedAt()),
                Instant.ofEpochSecond(typed.expiresAt()), LeaseClaims.ExpBound.values()[typed.expBound()],
                request.assetNum(), request.crmProductId(), request.appKey(), Optional.empty());
    }

    private static ActivatedLease verifyJws(String token, ActivationRequest request, Jwks jwks, String fingerprint,
                                            Instant now) throws LeaseVerificationException {
        String activated = ActivationMessages.activatedFingerprint(ActivationMessages.fingerprintHash(fingerprint));
        LeaseClaims claims = LeaseVerifier.verify(token, jwks, activated, request.appKey(), now);
        String nonce = Json.text(claims.json().get("activation"), "nonce");
        if (nonce == null || !nonce.equals(ActivationMessages.nonceText(request.nonce()))
                || !request.assetNum().equals(claims.assetNum())
                || !request.crmProductId().equals(claims.product().crmProductId())) {
            throw refuse(Reason.REQUEST, "it answers another activation request", null);
        }
        return new ActivatedLease(claims.leaseId(), claims.issuedAt(), claims.expiresAt(),
                claims.expBound().orElse(LeaseClaims.ExpBound.OFFLINE_DAYS), claims.assetNum(),
                request.crmProductId(), request.appKey(), Optional.of(claims));
    }

    private static LeaseVerificationException refuse(Reason reason, String message, ActivationFormatException cause) {
        return new LeaseVerificationException(reason, message, cause);
    }
}
