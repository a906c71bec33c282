package dev.keyward;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.keyward.LeaseVerificationException.Reason;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Signature;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Offline activation beyond the vectors: requests, typed codes, and answers signed here. */
class ActivationTest {
    private static final Instant NOW = Instant.ofEpochSecond(1_800_000_000L);
    private static final String FP = "fp-machine-0001";
    private static final String LEASE_ID = "01938f2e-7c1a-7000-8000-00000000b002";

    private static ActivationRequest request() {
        return ActivationRequest.builder().appKey("kw_app").assetNum("A-1").crmProductId("P-1").days(7)
                .fingerprint(FP).createdAt(NOW.minusSeconds(60)).build();
    }

    /** A key whose kid is base64url, as a thumbprint is: its first 4 bytes name it in a typed answer. */
    private static TestKeys key(int seed) throws Exception {
        byte[] kid = new byte[32];
        new Random(seed).nextBytes(kid);
        return new TestKeys(Base64.getUrlEncoder().withoutPadding().encodeToString(kid));
    }

    /** A typed answer as the server signs it. */
    private static String typedAnswer(TestKeys key, ActivationRequest request, long issuedAt, long expiresAt,
                                      int expBound, String appKey, byte[] fingerprintHash) throws Exception {
        byte[] body = new ActivationMessages.Writer()
                .u8(ActivationMessages.KIND_LEASE).u8(1)
                .bytes(ActivationMessages.kidPrefix(key.kid), 4, "kid")
                .bytes(ActivationMessages.uuidBytes(LEASE_ID), 16, "leaseId")
                .u32(issuedAt).u32(expiresAt).u8(expBound)
                .bytes(request.nonce(), 8, "nonce")
                .bytes(fingerprintHash, 10, "fingerprintHash")
                .bytes(ActivationMessages.binding(appKey, request.assetNum(), request.crmProductId()), 6, "binding")
                .done();
        Signature signer = Signature.getInstance("Ed25519");
        signer.initSign(key.pair.getPrivate());
        signer.update(ActivationMessages.typedLeaseSigningInput(body));
        byte[] signature = signer.sign();
        byte[] all = new byte[body.length + signature.length];
        System.arraycopy(body, 0, all, 0, body.length);
        System.arraycopy(signature, 0, all, body.length, signature.length);
        return TypedCode.encode(all);
    }

    private static String typedAnswer(TestKeys key, ActivationRequest request) throws Exception {
        return typedAnswer(key, request, NOW.getEpochSecond() - 30, NOW.getEpochSecond() + 7 * 86_400, 0,
                request.appKey(), request.fingerprintHash());
    }

    /** The activated lease's claims as the runtime signs them for an activation. */
    private static ObjectNode jwsClaims(ActivationRequest request) {
        ObjectNode claims = TestKeys.claims();
        claims.put("sub", LEASE_ID).put("jti", LEASE_ID).put("aud", request.appKey());
        claims.put("fingerprint", ActivationMessages.activatedFingerprint(request.fingerprintHash()));
        claims.put("assetNum", request.assetNum());
        ((ObjectNode) claims.get("holder")).put("assetNum", request.assetNum());
        ((ObjectNode) claims.get("product")).put("crmProductId", request.crmProductId());
        claims.putObject("activation").put("nonce", ActivationMessages.nonceText(request.nonce()));
        return claims;
    }

    private static LeaseVerificationException refused(String answer, ActivationRequest request, Jwks jwks,
                                                      String fingerprint) {
        return assertThrows(LeaseVerificationException.class,
                () -> ActivationVerifier.verify(answer, request, jwks, fingerprint, NOW));
    }

    @Test
    void aRequestChecksItsFields() {
        ActivationRequest.Builder ok = ActivationRequest.builder().appKey("kw_app").assetNum("A-1")
                .crmProductId("P-1").fingerprint(FP);
        assertThrows(IllegalArgumentException.class, () -> ok.days(0).build());
        assertThrows(IllegalArgumentException.class, () -> ok.days(366).build());
        assertEquals(365, ok.days(365).build().days());
        assertEquals(1, ok.days(1).build().days());
        assertThrows(IllegalArgumentException.class, () -> ok.nonce(new byte[7]).build());
        ok.nonce(null);
        assertThrows(IllegalArgumentException.class, () -> ok.assetNum("x".repeat(256)).build());
        assertEquals(255, ok.assetNum("é".repeat(127) + "x").build().assetNum().getBytes(StandardCharsets.UTF_8).length);
        assertThrows(IllegalArgumentException.class, () -> ok.assetNum("").build());
        assertThrows(IllegalArgumentException.class, () -> ActivationRequest.builder().appKey("kw_app")
                .assetNum("A-1").crmProductId("P-1").days(3).build(), "no fingerprint");
    }

    @Test
    void eachRequestHasItsOwnNonceAndIsDatedNow() {
        Instant before = Instant.now().minusSeconds(1);
        ActivationRequest a = ActivationRequest.create("kw_app", "A-1", "P-1", 7, FP);
        ActivationRequest b = ActivationRequest.create("kw_app", "A-1", "P-1", 7, FP);
        assertFalse(java.util.Arrays.equals(a.nonce(), b.nonce()));
        assertNotEquals(a.code(), b.code());
        assertTrue(!a.createdAt().isBefore(before) && a.createdAt().isBefore(Instant.now().plusSeconds(1)));
        assertEquals(0, a.createdAt().getNano());
        assertTrue(a.isFor(FP));
        assertFalse(a.isFor("fp-another"));
        // The request carries the fingerprint's hash, never the fingerprint.
        assertFalse(a.fileJson().contains(FP));
        byte[] nonce = a.nonce();
        nonce[0] ^= 1;
        assertNotEquals(nonce[0], a.nonce()[0], "the request's nonce cannot be changed from outside");
    }

    @Test
    void aPendingRequestIsSavedAndLoadedWithItsNonce(@TempDir Path dir) throws Exception {
        ActivationRequest request = request();
        Path file = dir.resolve("state/request.json");
        request.save(file);
        ActivationRequest loaded = ActivationRequest.load(file);
        assertEquals(request, loaded);
        assertArrayEquals(request.nonce(), loaded.nonce());
        JsonNode json = Json.parse(Files.readString(file));
        assertEquals("activation-request", json.get("keyward").asText());
        assertEquals("kw_app", json.get("appKey").asText());
        assertEquals("A-1", json.get("assetNum").asText());
        assertEquals("P-1", json.get("crmProductId").asText());
        assertEquals(7, json.get("days").asInt());
        assertEquals("2027-01-15T07:59:00.000Z", json.get("createdAt").asText());
        // The answer to the loaded request is the answer to the one made.
        TestKeys key = key(1);
        assertEquals(LEASE_ID, ActivationVerifier.verify(typedAnswer(key, request), loaded, TestKeys.jwksOf(key), FP, NOW)
                .leaseId());

        Files.writeString(file, "{\"keyward\":\"activation-answer\",\"code\":\"" + request.code() + "\"}");
        IOException e = assertThrows(IOException.class, () -> ActivationRequest.load(file));
        assertTrue(e.getMessage().contains("not a Keyward activation request"), e.getMessage());
    }

    @Test
    void aReaderNamesAnotherKindAndRefusesAnotherVersion() throws Exception {
        TestKeys key = key(2);
        ActivationFormatException answer = assertThrows(ActivationFormatException.class,
                () -> ActivationRequest.read(typedAnswer(key, request())));
        assertEquals("this is an activation answer, not an activation request", answer.getMessage());
        byte[] bytes = TypedCode.decode(request().code());
        bytes[1] = 2;
        ActivationFormatException version = assertThrows(ActivationFormatException.class,
                () -> ActivationRequest.read(TypedCode.encode(bytes)));
        assertTrue(version.getMessage().contains("version 2"), version.getMessage());
        assertTrue(version.group().isEmpty());
        byte[] cut = java.util.Arrays.copyOf(TypedCode.decode(request().code()), 30);
        assertTrue(assertThrows(ActivationFormatException.class, () -> ActivationRequest.read(TypedCode.encode(cut)))
                .getMessage().contains("cut short"));
        assertThrows(ActivationFormatException.class, () -> ActivationRequest.read("{not json"));
    }

    @Test
    void typedCodesRoundTripAndForgiveWhatPeopleType() throws Exception {
        Random random = new Random(7);
        for (int length = 1; length <= 64; length++) {
            byte[] bytes = new byte[length];
            random.nextBytes(bytes);
            String code = TypedCode.encode(bytes);
            assertTrue(code.matches("([0-9A-HJKMNP-TV-Z]{6}-)*[0-9A-HJKMNP-TV-Z]{2,6}"), code);
            assertArrayEquals(bytes, TypedCode.decode(code));
            String sloppy = code.toLowerCase().replace('0', 'o').replace('1', 'l').replace("-", " ");
            assertArrayEquals(bytes, TypedCode.decode(" " + sloppy + "\n"));
            assertArrayEquals(bytes, TypedCode.decode(code.replace("-", "")));
        }
        assertTrue(assertThrows(ActivationFormatException.class, () -> TypedCode.decode(" - ")).group().isEmpty());
    }

    @Test
    void anyOneCharacterTypedWrongNamesItsGroup() throws Exception {
        String code = request().code();
        String compact = code.replace("-", "");
        int tried = 0;
        for (int i = 0; i < compact.length(); i++) {
            for (char c : TypedCode.ALPHABET.toCharArray()) {
                if (c == compact.charAt(i)) continue;
                String wrong = compact.substring(0, i) + c + compact.substring(i + 1);
                ActivationFormatException e = assertThrows(ActivationFormatException.class, () -> TypedCode.decode(wrong),
                        "position " + i + " as " + c);
                assertEquals(i / 6 + 1, e.group().orElse(0), "position " + i + " as " + c);
                tried++;
            }
        }
        assertEquals(compact.length() * 31, tried);
    }

    @Test
    void aMistypedAnswerNamesTheGroupToTypeAgain() throws Exception {
        TestKeys key = key(3);
        String[] groups = typedAnswer(key, request()).split("-");
        char first = groups[4].charAt(0);
        groups[4] = (first == 'Z' ? 'Y' : TypedCode.ALPHABET.charAt(TypedCode.ALPHABET.indexOf(first) + 1))
                + groups[4].substring(1);
        LeaseVerificationException e = refused(String.join("-", groups), request(), TestKeys.jwksOf(key), FP);
        assertEquals(Reason.MALFORMED, e.reason());
        assertEquals(5, e.mistypedGroup().orElse(0));
        assertTrue(e.getMessage().startsWith("activation refused (malformed): group 5 does not check"), e.getMessage());
    }

    @Test
    void aTypedAnswerIsCheckedInItsOrder() throws Exception {
        TestKeys key = key(4);
        TestKeys other = key(5);
        Jwks jwks = TestKeys.jwksOf(key);
        ActivationRequest request = request();
        long now = NOW.getEpochSecond();
        byte[] fph = request.fingerprintHash();

        ActivatedLease lease = ActivationVerifier.verify(typedAnswer(key, request), request, jwks, FP, NOW);
        assertEquals(LEASE_ID, lease.leaseId());
        assertEquals(NOW.minusSeconds(30), lease.issuedAt());
        assertEquals(NOW.plus(Duration.ofDays(7)), lease.expiresAt());
        assertEquals(LeaseClaims.ExpBound.OFFLINE_DAYS, lease.expBound());
        assertEquals("kw_app", lease.appKey());
        assertTrue(lease.claims().isEmpty());
        assertEquals(LeaseClaims.ExpBound.TIME_DURATION, ActivationVerifier.verify(
                typedAnswer(key, request, now - 30, now + 60, 2, "kw_app", fph), request, jwks, FP, NOW).expBound());

        assertEquals(Reason.MALFORMED, refused(typedAnswer(key, request, now - 30, now + 60, 3, "kw_app", fph),
                request, jwks, FP).reason(), "an unknown bound");
        assertEquals(Reason.MALFORMED, refused(request.code(), request, jwks, FP).reason(), "a request is no answer");
        assertEquals(Reason.UNKNOWN_KEY, refused(typedAnswer(other, request), request, jwks, FP).reason());
        // Signed by a key of the set under another key's kid prefix: the signature is wrong.
        TestKeys impostor = new TestKeys(key.kid);
        assertEquals(Reason.SIGNATURE, refused(typedAnswer(impostor, request), request, jwks, FP).reason());
        // Every later check fails at once: the earliest answers.
        String late = typedAnswer(key, request, now + 10, now + 5, 0, "kw_other", new byte[10]);
        assertEquals(Reason.NOT_YET_VALID, refused(late, request, jwks, "fp-another").reason());
        String expired = typedAnswer(key, request, now - 30, now, 0, "kw_other", new byte[10]);
        assertEquals(Reason.EXPIRED, refused(expired, request, jwks, "fp-another").reason(), "exp at now");
        String otherApp = typedAnswer(key, request, now - 30, now + 60, 0, "kw_other", new byte[10]);
        assertEquals(Reason.REQUEST, refused(otherApp, request, jwks, "fp-another").reason());
        assertEquals(Reason.FINGERPRINT, refused(typedAnswer(key, request), request, jwks, "fp-another").reason());
        ActivationRequest otherProduct = ActivationRequest.builder().appKey("kw_app").assetNum("A-1")
                .crmProductId("P-2").days(7).fingerprint(FP).nonce(request.nonce()).build();
        assertEquals(Reason.REQUEST, refused(typedAnswer(key, request), otherProduct, jwks, FP).reason());
    }

    @Test
    void theSignedLeaseAndTheAnswerFileAreVerifiedAsALease() throws Exception {
        TestKeys key = key(6);
        Jwks jwks = TestKeys.jwksOf(key);
        ActivationRequest request = request();
        String jws = key.sign(jwsClaims(request));
        ObjectNode file = TestKeys.MAPPER.createObjectNode();
        file.put("keyward", "activation-answer").put("version", 1).put("leaseId", LEASE_ID).put("lease", jws)
                .put("code", typedAnswer(key, request)).put("expiresAt", "2027-01-16T08:00:00.000Z");

        for (String answer : new String[] {jws, "  " + jws + "\n", file.toPrettyString()}) {
            ActivatedLease lease = ActivationVerifier.verify(answer, request, jwks, FP, NOW);
            assertEquals(LEASE_ID, lease.leaseId());
            assertEquals(Instant.ofEpochSecond(1_800_082_800L), lease.expiresAt());
            assertEquals("A-1", lease.assetNum());
            assertEquals("P-1", lease.crmProductId());
            assertEquals("Modeler", lease.claims().orElseThrow().product().productName());
        }

        assertEquals(Reason.FINGERPRINT, refused(jws, request, jwks, "fp-another").reason());
        ObjectNode otherApp = jwsClaims(request).put("aud", "kw_other");
        assertEquals(Reason.AUDIENCE, refused(key.sign(otherApp), request, jwks, FP).reason());
        ObjectNode otherLock = jwsClaims(request).put("assetNum", "A-2");
        assertEquals(Reason.REQUEST, refused(key.sign(otherLock), request, jwks, FP).reason());
        ObjectNode otherProduct = jwsClaims(request);
        ((ObjectNode) otherProduct.get("product")).put("crmProductId", "P-2");
        assertEquals(Reason.REQUEST, refused(key.sign(otherProduct), request, jwks, FP).reason());
        ObjectNode noNonce = jwsClaims(request);
        noNonce.remove("activation");
        assertEquals(Reason.REQUEST, refused(key.sign(noNonce), request, jwks, FP).reason(), "an online lease");
        // The raw fingerprint in place of fph1: is no activated lease of this machine.
        ObjectNode rawFingerprint = jwsClaims(request).put("fingerprint", FP);
        assertEquals(Reason.FINGERPRINT, refused(key.sign(rawFingerprint), request, jwks, FP).reason());

        assertEquals(Reason.MALFORMED, refused("{\"keyward\":", request, jwks, FP).reason());
        assertEquals(Reason.MALFORMED, refused(request.fileJson(), request, jwks, FP).reason());
        assertEquals(Reason.MALFORMED, refused("a.b", request, jwks, FP).reason());
    }

    @Test
    void theActivatedFingerprintIsTheHashInBase32() {
        byte[] hash = java.util.HexFormat.of().parseHex("08c92c0158de32f310b2");
        String fph = ActivationMessages.activatedFingerprint(hash);
        assertTrue(fph.matches("fph1:[0-9A-HJKMNP-TV-Z]{16}"), fph);
        assertEquals("fph1:134JR0ARVRSF645J", fph);
    }

    @Test
    void theReturnCodeNamesTheLeaseTheNonceAndTheMachine() throws Exception {
        ActivationRequest request = request();
        byte[] bytes = TypedCode.decode(request.returnCode(LEASE_ID));
        assertEquals(36, bytes.length);
        assertEquals(0x58, bytes[0]);
        assertEquals(1, bytes[1]);
        assertEquals(LEASE_ID, ActivationMessages.uuidText(java.util.Arrays.copyOfRange(bytes, 2, 18)));
        assertArrayEquals(request.nonce(), java.util.Arrays.copyOfRange(bytes, 18, 26));
        assertArrayEquals(request.fingerprintHash(), java.util.Arrays.copyOfRange(bytes, 26, 36));
        assertThrows(IllegalArgumentException.class, () -> request.returnCode("lease-1"));
    }
}
