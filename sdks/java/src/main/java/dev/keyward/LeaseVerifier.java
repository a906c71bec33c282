package dev.keyward;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import dev.keyward.LeaseVerificationException.Reason;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.PublicKey;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Verifies an offline lease where the software runs, without calling the server: an EdDSA
 * (Ed25519) signature by a key of the saved JWKS, issuer {@code keyward}, header type
 * {@code keyward-lease+jwt}, {@code nbf} and {@code exp} around now, the application (when asked),
 * this machine's fingerprint and a license not ended.
 *
 * <p>The checks run in this order and the first that fails answers (sdks/conformance/README.md):
 * {@code malformed} (no compact JWS of three segments each exactly unpadded base64url; header or
 * payload no UTF-8 JSON object, or one naming a member twice; {@code crit} in the header),
 * {@code signature} (alg not EdDSA), {@code unknown-key}, {@code signature} (does not verify),
 * {@code malformed} (typ, iss, a registered claim missing, sub/jti/aud no strings, a time no whole
 * seconds from 0 to the end of year 9999), {@code not-yet-valid}, {@code expired}, {@code audience},
 * {@code malformed} (no lease's shape), {@code fingerprint}, {@code license-ended}. No claim of an
 * unverified token is trusted. Time claims are whole seconds, without leeway.
 *
 * <p>Thread-safe; the key set's keys are decoded once ({@link Jwks}), and a call parses the token
 * and checks one Ed25519 signature.
 */
public final class LeaseVerifier {
    static final String ISSUER = "keyward";
    static final String TYP = "keyward-lease+jwt";
    /** The latest time a lease may name: 9999-12-31T23:59:59Z. */
    static final long LAST_SECOND = 253_402_300_799L;
    /** A header or payload: one JSON object, a name given twice refused (Jackson would keep the last). */
    private static final ObjectReader STRICT = Json.MAPPER.reader()
            .with(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

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
        byte[][] bytes = new byte[3][];
        for (int i = 0; i < 3 && parts.length == 3; i++) bytes[i] = segmentBytes(parts[i]);
        if (parts.length != 3 || bytes[0] == null || bytes[1] == null || bytes[2] == null) {
            throw refuse(Reason.MALFORMED, "not a compact JWS of three base64url segments");
        }
        JsonNode header = jsonObject(bytes[0]);
        JsonNode payload = jsonObject(bytes[1]);
        if (header == null || payload == null) {
            throw refuse(Reason.MALFORMED, "its header or payload is no JSON object naming each member once");
        }
        // A lease uses no extension (RFC 7515 §4.1.11).
        if (header.has("crit")) throw refuse(Reason.MALFORMED, "its header names critical extensions");

        // Another algorithm (none, HS256…) is no signature of a Keyward key, whatever the token claims.
        if (!"EdDSA".equals(Json.text(header, "alg"))) throw refuse(Reason.SIGNATURE, "alg is not EdDSA");
        String kid = Json.text(header, "kid");
        List<PublicKey> candidates = kid == null ? List.of() : jwks.ed25519Keys(kid);
        if (candidates.isEmpty()) throw refuse(Reason.UNKNOWN_KEY, "no key of the set has kid " + kid);
        byte[] signed = (parts[0] + "." + parts[1]).getBytes(StandardCharsets.US_ASCII);
        if (!jwks.verifies(candidates, signed, bytes[2])) {
            throw refuse(Reason.SIGNATURE, "the signature does not verify");
        }

        // Signed by Keyward: the claims may now be read.
        String typ = Json.text(header, "typ");
        if (typ == null || !TYP.equals(normalizedTyp(typ))) throw refuse(Reason.MALFORMED, "typ is not " + TYP);
        if (!ISSUER.equals(Json.text(payload, "iss"))) throw refuse(Reason.MALFORMED, "iss is not " + ISSUER);
        for (String claim : List.of("sub", "jti", "aud", "iat", "nbf", "exp")) {
            if (!payload.has(claim)) throw refuse(Reason.MALFORMED, "the claim " + claim + " is missing");
        }
        for (String claim : List.of("sub", "jti", "aud")) {
            if (!payload.get(claim).isTextual()) throw refuse(Reason.MALFORMED, "the claim " + claim + " is no string");
        }
        for (String claim : List.of("iat", "nbf", "exp")) {
            if (!isWholeSeconds(payload.get(claim))) {
                throw refuse(Reason.MALFORMED, "the claim " + claim + " is no whole seconds from 0 to " + LAST_SECOND);
            }
        }
        if (payload.get("nbf").doubleValue() > nowSeconds) throw refuse(Reason.NOT_YET_VALID, "nbf is later than now");
        if (payload.get("exp").doubleValue() <= nowSeconds) throw refuse(Reason.EXPIRED, "exp is past");
        if (audience != null && !audience.equals(payload.get("aud").textValue())) {
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

    /**
     * One segment's bytes, when the segment is exactly their unpadded base64url: the URL alphabet
     * only (no '=', '+', '/', whitespace or line break) and zero unused bits, so one token has one
     * text. Null otherwise.
     */
    static byte[] segmentBytes(String part) {
        for (int i = 0; i < part.length(); i++) {
            char c = part.charAt(i);
            if (!(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_')) {
                return null;
            }
        }
        byte[] bytes;
        try {
            bytes = Base64.getUrlDecoder().decode(part);
        } catch (IllegalArgumentException e) {
            return null;
        }
        // Java's decoder ignores the unused bits of the last character: encoding again tells.
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes).equals(part) ? bytes : null;
    }

    /** A header or payload: UTF-8 JSON of one object (no byte order mark), no name given twice. */
    private static JsonNode jsonObject(byte[] bytes) {
        // Jackson skips a byte order mark, and reads an overlong form or an encoded surrogate as a
        // character: the JDK's decoder refuses both, as UTF-8 does.
        if (bytes.length >= 3 && (bytes[0] & 0xff) == 0xef && (bytes[1] & 0xff) == 0xbb && (bytes[2] & 0xff) == 0xbf) {
            return null;
        }
        try {
            StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes));
        } catch (CharacterCodingException e) {
            return null;
        }
        try {
            JsonNode node = STRICT.readTree(bytes);
            return node != null && node.isObject() ? node : null;
        } catch (IOException e) {
            return null;
        }
    }

    /** A time claim: a whole number of seconds from 1970 to the end of year 9999, however JSON writes it. */
    private static boolean isWholeSeconds(JsonNode value) {
        if (value.isIntegralNumber()) {
            return value.canConvertToLong() && value.longValue() >= 0 && value.longValue() <= LAST_SECOND;
        }
        if (!value.isNumber()) return false;
        double seconds = value.doubleValue();
        return seconds == Math.rint(seconds) && seconds >= 0 && seconds <= LAST_SECOND;
    }

    /** RFC 7515 §4.1.9 media types: case-insensitive, "application/" may be left out. */
    private static String normalizedTyp(String typ) {
        String lower = typ.toLowerCase(Locale.ROOT);
        return lower.startsWith("application/") ? lower.substring("application/".length()) : lower;
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
