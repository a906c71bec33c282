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
import java.security.GeneralSecurityException;
import java.security.PublicKey;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

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
 * <p>A relay's lease (signed inside a closed network by a relay's own key) carries in its protected
 * header {@code grant}: the compact JWS of the pool grant the vendor signed for that relay, which
 * certifies the relay's key. It verifies against the vendor's key set alone. After {@code alg}, the
 * grant is checked as a lease is: {@code malformed} (no string, or no compact JWS by the same
 * rules), {@code signature} (alg), {@code unknown-key} (its kid in the set), {@code signature},
 * {@code malformed} (typ {@code keyward-grant+jwt}, no pool grant's claims), {@code not-yet-valid},
 * {@code grant-expired}; then the lease's kid must be the relay key's ({@code unknown-key}) and its
 * signature verify with that key ({@code signature}); and past the lease's shape, it must say no
 * more than the grant gives ({@code beyond-grant}: its exp, its license and product, its seats, its
 * machine), before {@code fingerprint}.
 *
 * <p>Thread-safe; the key set's keys are decoded once ({@link Jwks}), a few relay keys are kept
 * decoded, and a call parses the token and checks one Ed25519 signature (two for a relay's lease).
 */
public final class LeaseVerifier {
    static final String ISSUER = "keyward";
    static final String TYP = "keyward-lease+jwt";
    /** The {@code typ} of a pool grant's header. */
    static final String GRANT_TYP = "keyward-grant+jwt";
    /** The header parameter of a relay's lease that carries its pool grant. */
    static final String GRANT_HEADER = "grant";
    /** The most seats a grant gives one license. */
    static final long MAX_GRANTED_SEATS = 1_000_000_000L;
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

        Compact lease = compact(token, "");
        JsonNode header = lease.header();
        JsonNode payload = lease.payload();

        // Another algorithm (none, HS256…) is no signature of a Keyward key, whatever the token claims.
        if (!"EdDSA".equals(Json.text(header, "alg"))) throw refuse(Reason.SIGNATURE, "alg is not EdDSA");
        // A relay's lease: its grant is checked first, and certifies the one key that may have signed it.
        Grant grant = header.has(GRANT_HEADER) ? verifiedGrant(header.get(GRANT_HEADER), jwks, nowSeconds) : null;
        // A key is chosen by kid alone: without one, no key is tried.
        String kid = Json.text(header, "kid");
        if (kid == null) throw refuse(Reason.UNKNOWN_KEY, "its header names no key (kid)");
        List<PublicKey> candidates;
        if (grant == null) {
            candidates = jwks.ed25519Keys(kid);
            if (candidates.isEmpty()) throw refuse(Reason.UNKNOWN_KEY, "no key of the set has kid " + kid);
        } else if (!kid.equals(grant.relayKid())) {
            throw refuse(Reason.UNKNOWN_KEY, "it is not signed by the relay key its grant certifies");
        } else {
            PublicKey relayKey = relayKeyOf(grant.relayKey());
            if (relayKey == null) throw refuse(Reason.SIGNATURE, "the relay key its grant certifies is no Ed25519 key");
            candidates = List.of(relayKey);
        }
        if (!jwks.verifies(candidates, lease.signingInput(), lease.signature())) {
            throw refuse(Reason.SIGNATURE, "the signature does not verify");
        }

        // Signed by Keyward, or by the relay its grant certifies: the claims may now be read.
        if (!typIs(header, TYP)) throw refuse(Reason.MALFORMED, "typ is not " + TYP);
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
        String beyond = grant == null ? null : grant.beyond(payload);
        if (beyond != null) throw refuse(Reason.BEYOND_GRANT, beyond);
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

    /** A compact JWS past its form: its signing input as written, its header, payload and signature. */
    private record Compact(byte[] signingInput, JsonNode header, JsonNode payload, byte[] signature) {}

    /**
     * The first check, before any key, of a lease or of the grant a relay's lease carries
     * ({@code about} is "" or "its grant: ", for the message): three segments, each exactly
     * base64url, the header and the payload JSON objects naming each member once, and no
     * {@code crit} in the header (neither uses an extension, RFC 7515 §4.1.11).
     */
    private static Compact compact(String token, String about) throws LeaseVerificationException {
        if (token == null) throw refuse(Reason.MALFORMED, about + "no token");
        String[] parts = token.split("\\.", -1);
        byte[][] bytes = new byte[3][];
        for (int i = 0; i < 3 && parts.length == 3; i++) bytes[i] = segmentBytes(parts[i]);
        if (parts.length != 3 || bytes[0] == null || bytes[1] == null || bytes[2] == null) {
            throw refuse(Reason.MALFORMED, about + "not a compact JWS of three base64url segments");
        }
        JsonNode header = jsonObject(bytes[0]);
        JsonNode payload = jsonObject(bytes[1]);
        if (header == null || payload == null) {
            throw refuse(Reason.MALFORMED, about + "its header or payload is no JSON object naming each member once");
        }
        if (header.has("crit")) throw refuse(Reason.MALFORMED, about + "its header names critical extensions");
        byte[] signingInput = (parts[0] + "." + parts[1]).getBytes(StandardCharsets.US_ASCII);
        return new Compact(signingInput, header, payload, bytes[2]);
    }

    /** A license a pool grant gives: its lock, its product (null: a license without one), its seats. */
    private record GrantedLicense(String assetNum, String crmProductId, long seats) {
        /** Whether a lease of this lock and {@code product.crmProductId} is this license's: null matches null. */
        boolean covers(String leaseAssetNum, JsonNode leaseProduct) {
            if (!assetNum.equals(leaseAssetNum) || leaseProduct == null) return false;
            return crmProductId == null ? leaseProduct.isNull() : crmProductId.equals(leaseProduct.textValue());
        }
    }

    /**
     * A pool grant past its checks: what its relay's leases are held to.
     *
     * @param nbf the grant's start, in seconds
     * @param exp the grant's end, in seconds
     * @param relayKey the relay's public JWK (kty OKP, crv Ed25519, x of 32 bytes, kid)
     * @param licenses what it gives, at least one
     * @param machines the machines the relay may serve; null: any machine of its network
     */
    private record Grant(long nbf, long exp, JsonNode relayKey, List<GrantedLicense> licenses, Set<String> machines) {
        String relayKid() {
            return Json.text(relayKey, "kid");
        }

        /** Why a lease of its relay (of a lease's shape) says more than the grant gives; null when it does not. */
        String beyond(JsonNode lease) {
            if (lease.get("exp").longValue() > exp) return "it runs past its grant";
            String assetNum = Json.text(lease, "assetNum");
            JsonNode product = lease.get("product").get("crmProductId");
            GrantedLicense license = licenses.stream()
                    .filter(granted -> granted.covers(assetNum, product)).findFirst().orElse(null);
            if (license == null) return "its license and product are not in its grant";
            // A lease without a seat count (null: unlimited) says more than any grant gives.
            JsonNode seats = lease.get("limits").get("concurrent");
            if (seats == null || !seats.isNumber() || seats.doubleValue() > license.seats()) {
                return "it names more seats than its grant gives";
            }
            if (machines != null && !machines.contains(Json.text(lease, "fingerprint"))) {
                return "its machine is not on its grant's list";
            }
            return null;
        }
    }

    /**
     * The pool grant a relay's lease carries, checked as a lease is up to its times: its form, a
     * vendor key of the set and its signature, its type and claims, then its period.
     */
    private static Grant verifiedGrant(JsonNode value, Jwks jwks, long nowSeconds) throws LeaseVerificationException {
        if (!value.isTextual()) throw refuse(Reason.MALFORMED, "its grant is no string");
        Compact compact = compact(value.textValue(), "its grant: ");
        JsonNode header = compact.header();
        if (!"EdDSA".equals(Json.text(header, "alg"))) throw refuse(Reason.SIGNATURE, "its grant's alg is not EdDSA");
        String kid = Json.text(header, "kid");
        if (kid == null) throw refuse(Reason.UNKNOWN_KEY, "its grant names no key (kid)");
        List<PublicKey> candidates = jwks.ed25519Keys(kid);
        if (candidates.isEmpty()) throw refuse(Reason.UNKNOWN_KEY, "no key of the set has its grant's kid " + kid);
        if (!jwks.verifies(candidates, compact.signingInput(), compact.signature())) {
            throw refuse(Reason.SIGNATURE, "its grant's signature does not verify");
        }
        // Signed by the vendor: the grant's claims may now be read.
        if (!typIs(header, GRANT_TYP)) throw refuse(Reason.MALFORMED, "its grant's typ is not " + GRANT_TYP);
        Grant grant = asGrant(compact.payload());
        if (grant == null) throw refuse(Reason.MALFORMED, "its grant's claims are not a pool grant");
        if (grant.nbf() > nowSeconds) throw refuse(Reason.NOT_YET_VALID, "its grant is valid from " + grant.nbf());
        if (grant.exp() <= nowSeconds) throw refuse(Reason.GRANT_EXPIRED, "its grant ended at " + grant.exp());
        return grant;
    }

    /** The claims of a pool grant, when they have its shape; null otherwise. */
    private static Grant asGrant(JsonNode payload) {
        if (!ISSUER.equals(Json.text(payload, "iss")) || !isText(payload, "sub") || !isText(payload, "jti")) {
            return null;
        }
        for (String claim : List.of("iat", "nbf", "exp")) {
            JsonNode time = payload.get(claim);
            if (time == null || !isWholeSeconds(time)) return null;
        }
        JsonNode relay = payload.get("relay");
        JsonNode key = relay == null ? null : relay.get("key");
        if (relay == null || !relay.isObject() || !isRelayKey(key) || !isText(relay, "fingerprint")) return null;

        JsonNode licenses = payload.get("licenses");
        if (licenses == null || !licenses.isArray() || licenses.isEmpty()) return null;
        List<GrantedLicense> granted = new ArrayList<>();
        for (JsonNode license : licenses) {
            JsonNode product = license.get("crmProductId");
            JsonNode seats = license.get("seats");
            if (!license.isObject() || !isText(license, "assetNum")
                    || product == null || !(product.isNull() || product.isTextual())
                    || seats == null || !isWholeNumber(seats, 1, MAX_GRANTED_SEATS)) {
                return null;
            }
            granted.add(new GrantedLicense(Json.text(license, "assetNum"), product.textValue(), seats.longValue()));
        }

        JsonNode machines = payload.get("machines");
        Set<String> listed = null;
        if (machines != null && !machines.isNull()) {
            if (!machines.isArray()) return null;
            List<String> fingerprints = new ArrayList<>();
            for (JsonNode machine : machines) {
                if (!machine.isTextual()) return null;
                fingerprints.add(machine.textValue());
            }
            listed = Set.copyOf(fingerprints);
        }
        return new Grant(payload.get("nbf").longValue(), payload.get("exp").longValue(), key.deepCopy(),
                List.copyOf(granted), listed);
    }

    /** A relay's public key: OKP, Ed25519, x exactly the unpadded base64url of 32 bytes, and a kid. */
    private static boolean isRelayKey(JsonNode key) {
        if (key == null || !key.isObject()) return false;
        String x = Json.text(key, "x");
        byte[] point = x == null || x.length() != 43 ? null : segmentBytes(x);
        return "OKP".equals(Json.text(key, "kty")) && "Ed25519".equals(Json.text(key, "crv"))
                && point != null && point.length == 32 && isText(key, "kid");
    }

    /** How many decoded relay keys are kept: a relay signs with one key for its grant's life. */
    private static final int RELAY_KEYS_KEPT = 16;
    /** Decoded relay keys by their x, the oldest first; guarded by itself. */
    private static final Map<String, PublicKey> RELAY_KEYS = new LinkedHashMap<>();

    /** The JDK's key (SunEC) for a relay's JWK, decoded once while among the last few; null when it is none. */
    private static PublicKey relayKeyOf(JsonNode jwk) {
        String x = Json.text(jwk, "x");
        synchronized (RELAY_KEYS) {
            PublicKey key = RELAY_KEYS.get(x);
            if (key != null) return key;
        }
        PublicKey key;
        try {
            key = Jwks.publicKeyOf(jwk);
        } catch (GeneralSecurityException | RuntimeException e) {
            return null;
        }
        synchronized (RELAY_KEYS) {
            if (RELAY_KEYS.size() >= RELAY_KEYS_KEPT && !RELAY_KEYS.containsKey(x)) {
                Iterator<String> oldest = RELAY_KEYS.keySet().iterator();
                oldest.next();
                oldest.remove();
            }
            RELAY_KEYS.put(x, key);
        }
        return key;
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
        return isWholeNumber(value, 0, LAST_SECOND);
    }

    /** A JSON number whose value is a whole number from min to max ({@code 10.0} is one, {@code 10.5} not). */
    private static boolean isWholeNumber(JsonNode value, long min, long max) {
        if (value.isIntegralNumber()) {
            return value.canConvertToLong() && value.longValue() >= min && value.longValue() <= max;
        }
        if (!value.isNumber()) return false;
        double number = value.doubleValue();
        return number == Math.rint(number) && number >= min && number <= max;
    }

    /** Whether the header's typ is {@code expected} (RFC 7515 §4.1.9 media types: any case, "application/" or not). */
    private static boolean typIs(JsonNode header, String expected) {
        String typ = Json.text(header, "typ");
        if (typ == null) return false;
        String lower = typ.toLowerCase(Locale.ROOT);
        return (lower.startsWith("application/") ? lower.substring("application/".length()) : lower).equals(expected);
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
