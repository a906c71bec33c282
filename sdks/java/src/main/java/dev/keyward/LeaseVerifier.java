package dev.keyward;

import com.fasterxml.jackson.databind.JsonNode;
import dev.keyward.LeaseVerificationException.Reason;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.Signature;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Verifies an offline lease where the software runs, without calling the server: an EdDSA
 * (Ed25519) signature by a key of the saved JWKS, issuer {@code keyward}, header type
 * {@code keyward-lease+jwt}, {@code nbf} and {@code exp} around now, the application (when asked),
 * this machine's fingerprint and a license not ended.
 *
 * <p>The checks run in this order and the first that fails answers (sdks/conformance/README.md):
 * {@code malformed} (no compact JWS, header or payload no JSON), {@code signature} (alg not EdDSA),
 * {@code unknown-key}, {@code signature} (does not verify), {@code malformed} (typ, iss, a registered
 * claim missing), {@code not-yet-valid}, {@code expired}, {@code audience}, {@code malformed} (no
 * lease's shape), {@code fingerprint}, {@code license-ended}. No claim of an unverified token is
 * trusted. Time claims are whole seconds, without leeway.
 */
public final class LeaseVerifier {
    static final String ISSUER = "keyward";
    static final String TYP = "keyward-lease+jwt";
    private static final Pattern PART = Pattern.compile("[A-Za-z0-9_-]*");

    private LeaseVerifier() {}

    /** Verifies {@code token} now, for any application. */
    public static LeaseClaims verify(String token, Jwks jwks, String fingerprint) throws LeaseVerificationException {
        return verify(token, jwks, fingerprint, null, Instant.now());
    }

    /** Verifies {@code token} now; {@code audience} (the appKey) is unchecked when null. */
    public static LeaseClaims verify(String token, Jwks jwks, String fingerprint, String audience)
            throws LeaseVerificationException {
        return verify(token, jwks, fingerprint, audience, Instant.now());
    }

    /**
     * Verifies {@code token} at {@code now}.
     *
     * @param token the compact JWS of the check-out's {@code offlineLease}
     * @param jwks the server's key set, as saved
     * @param fingerprint this machine's: a lease for another machine is refused
     * @param audience the appKey the lease must be for; unchecked when null
     * @param now the clock to verify at
     * @return the lease's claims
     * @throws LeaseVerificationException with the reason when the lease is refused
     */
    public static LeaseClaims verify(String token, Jwks jwks, String fingerprint, String audience, Instant now)
            throws LeaseVerificationException {
        Objects.requireNonNull(jwks, "jwks");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(now, "now");
        long nowSeconds = now.getEpochSecond();
        long nowMillis = now.toEpochMilli();

        if (token == null) throw refuse(Reason.MALFORMED, "no token");
        String[] parts = token.split("\\.", -1);
        if (parts.length != 3 || parts[0].isEmpty() || parts[1].isEmpty()
                || !PART.matcher(parts[0]).matches() || !PART.matcher(parts[1]).matches()
                || !PART.matcher(parts[2]).matches()) {
            throw refuse(Reason.MALFORMED, "not a compact JWS");
        }
        JsonNode header = jsonObject(parts[0]);
        JsonNode payload = jsonObject(parts[1]);
        if (header == null || payload == null) throw refuse(Reason.MALFORMED, "its header or payload is no JSON object");

        // Another algorithm (none, HS256…) is no signature of a Keyward key, whatever the token claims.
        if (!"EdDSA".equals(Json.text(header, "alg"))) throw refuse(Reason.SIGNATURE, "alg is not EdDSA");
        String kid = Json.text(header, "kid");
        List<JsonNode> candidates = kid == null ? List.of() : jwks.ed25519Keys(kid);
        if (candidates.isEmpty()) throw refuse(Reason.UNKNOWN_KEY, "no key of the set has kid " + kid);
        byte[] signature = base64Url(parts[2]);
        byte[] signed = (parts[0] + "." + parts[1]).getBytes(StandardCharsets.US_ASCII);
        if (signature == null || !verifiesWithAny(candidates, signed, signature)) {
            throw refuse(Reason.SIGNATURE, "the signature does not verify");
        }

        // Signed by Keyward: the claims may now be read.
        String typ = Json.text(header, "typ");
        if (typ == null || !TYP.equals(normalizedTyp(typ))) throw refuse(Reason.MALFORMED, "typ is not " + TYP);
        if (!ISSUER.equals(Json.text(payload, "iss"))) throw refuse(Reason.MALFORMED, "iss is not " + ISSUER);
        for (String claim : List.of("sub", "jti", "aud", "iat", "nbf", "exp")) {
            if (!payload.has(claim)) throw refuse(Reason.MALFORMED, "the claim " + claim + " is missing");
        }
        for (String claim : List.of("iat", "nbf", "exp")) {
            if (!payload.get(claim).isNumber()) throw refuse(Reason.MALFORMED, "the claim " + claim + " is no number");
        }
        if (payload.get("nbf").doubleValue() > nowSeconds) throw refuse(Reason.NOT_YET_VALID, "nbf is later than now");
        if (payload.get("exp").doubleValue() <= nowSeconds) throw refuse(Reason.EXPIRED, "exp is past");
        if (audience != null && !hasAudience(payload.get("aud"), audience)) {
            throw refuse(Reason.AUDIENCE, "the lease is another application's");
        }

        LeaseClaims claims = asLeaseClaims(payload);
        if (claims == null) throw refuse(Reason.MALFORMED, "its claims are not an offline lease");
        if (!fingerprint.equals(claims.fingerprint())) {
            throw refuse(Reason.FINGERPRINT, "it was checked out for another machine");
        }
        // A lease signed before the server bounded exp by the license's end may outlive the license.
        JsonNode endDate = payload.get("limits").get("endDate");
        if (endDate.isNumber() && nowMillis > endDate.doubleValue()) {
            throw refuse(Reason.LICENSE_ENDED, "the license ended at " + Instant.ofEpochMilli(endDate.longValue()));
        }
        return claims;
    }

    private static LeaseVerificationException refuse(Reason reason, String message) {
        return new LeaseVerificationException(reason, message);
    }

    private static byte[] base64Url(String part) {
        try {
            return Base64.getUrlDecoder().decode(part);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private static JsonNode jsonObject(String part) {
        byte[] bytes = base64Url(part);
        JsonNode node = bytes == null ? null : Json.parse(bytes);
        return node != null && node.isObject() ? node : null;
    }

    private static boolean verifiesWithAny(List<JsonNode> keys, byte[] signed, byte[] signature) {
        if (signature.length != 64) return false;
        for (JsonNode key : keys) {
            try {
                Signature verifier = Signature.getInstance("Ed25519");
                verifier.initVerify(Jwks.publicKeyOf(key));
                verifier.update(signed);
                if (verifier.verify(signature)) return true;
            } catch (GeneralSecurityException | RuntimeException e) {
                // A key that cannot verify is no signature of this token.
            }
        }
        return false;
    }

    /** RFC 7515 §4.1.9 media types: case-insensitive, "application/" may be left out. */
    private static String normalizedTyp(String typ) {
        String lower = typ.toLowerCase(Locale.ROOT);
        return lower.startsWith("application/") ? lower.substring("application/".length()) : lower;
    }

    private static boolean hasAudience(JsonNode aud, String audience) {
        if (aud.isTextual()) return aud.textValue().equals(audience);
        if (aud.isArray()) {
            for (JsonNode one : aud) if (one.isTextual() && one.textValue().equals(audience)) return true;
        }
        return false;
    }

    /** The claims, when they have the lease's shape; null otherwise. */
    private static LeaseClaims asLeaseClaims(JsonNode payload) {
        LeaseClaims.Holder holder = holderOf(payload.get("holder"));
        JsonNode product = payload.get("product");
        JsonNode limits = payload.get("limits");
        JsonNode endDate = limits == null ? null : limits.get("endDate");
        JsonNode bound = payload.get("expBound");
        LeaseClaims.ExpBound expBound = bound == null || !bound.isTextual()
                ? null : LeaseClaims.ExpBound.fromWire(bound.textValue()).orElse(null);
        boolean ok = holder != null
                && isText(payload, "sub") && isText(payload, "jti") && isText(payload, "aud")
                && isText(payload, "fingerprint") && isText(payload, "assetNum")
                && product != null && product.isObject()
                && limits != null && limits.isObject()
                && endDate != null && (endDate.isNull() || endDate.isNumber())
                // Absent from leases signed before the claim existed; anything else is no lease of ours.
                && (bound == null || expBound != null);
        return ok ? new LeaseClaims(payload.deepCopy(), holder, expBound) : null;
    }

    private static LeaseClaims.Holder holderOf(JsonNode holder) {
        if (holder == null || !holder.isObject()) return null;
        String kind = Json.text(holder, "kind");
        if ("lock".equals(kind) && isText(holder, "assetNum")) {
            return new LeaseClaims.Holder(LeaseClaims.Holder.Kind.LOCK, Json.text(holder, "assetNum"), null, null);
        }
        if ("member".equals(kind) && isText(holder, "memberGlobalId") && isText(holder, "enterpriseGlobalId")) {
            return new LeaseClaims.Holder(LeaseClaims.Holder.Kind.MEMBER, null,
                    Json.text(holder, "memberGlobalId"), Json.text(holder, "enterpriseGlobalId"));
        }
        return null;
    }

    private static boolean isText(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value != null && value.isTextual();
    }
}
