package dev.keyward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.keyward.LeaseVerificationException.Reason;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LeaseVerifierTest {
    private static final Instant NOW = Instant.ofEpochSecond(1_800_000_000L);
    private static final String FP = "fp-machine-0001";

    private static Reason reasonOf(String token, Jwks jwks, String fingerprint, String audience, Instant now) {
        return assertThrows(LeaseVerificationException.class,
                () -> LeaseVerifier.verify(token, jwks, fingerprint, audience, now)).reason();
    }

    @Test
    void reasonsCarryTheWireNamesOfEverySdk() {
        assertEquals("malformed", Reason.MALFORMED.wire());
        assertEquals("signature", Reason.SIGNATURE.wire());
        assertEquals("unknown-key", Reason.UNKNOWN_KEY.wire());
        assertEquals("not-yet-valid", Reason.NOT_YET_VALID.wire());
        assertEquals("expired", Reason.EXPIRED.wire());
        assertEquals("audience", Reason.AUDIENCE.wire());
        assertEquals("fingerprint", Reason.FINGERPRINT.wire());
        assertEquals("license-ended", Reason.LICENSE_ENDED.wire());
        assertEquals("request", Reason.REQUEST.wire());
        assertEquals(Reason.LICENSE_ENDED, Reason.fromWire("license-ended").orElseThrow());
        assertTrue(Reason.fromWire("LICENSE_ENDED").isEmpty());
    }

    @Test
    void keysOfEitherParityOfXVerify() throws Exception {
        boolean sawOdd = false;
        boolean sawEven = false;
        for (int i = 0; i < 64 && !(sawOdd && sawEven); i++) {
            TestKeys key = new TestKeys("k" + i);
            LeaseClaims claims = LeaseVerifier.verify(key.sign(TestKeys.claims()), TestKeys.jwksOf(key), FP, "kw_app", NOW);
            assertEquals("lease-1", claims.leaseId());
            sawOdd |= key.xOdd();
            sawEven |= !key.xOdd();
        }
        assertTrue(sawOdd && sawEven, "made keys of both parities");
    }

    @Test
    void theClaimsAreAnswered() throws Exception {
        TestKeys key = new TestKeys("k");
        LeaseClaims claims = LeaseVerifier.verify(key.sign(TestKeys.claims()), TestKeys.jwksOf(key), FP, null, NOW);
        assertEquals("kw_app", claims.audience());
        assertEquals("keyward", claims.issuer());
        assertEquals(Instant.ofEpochSecond(1_800_082_800L), claims.expiresAt());
        assertEquals(LeaseClaims.Holder.Kind.LOCK, claims.holder().kind());
        assertEquals("A-1", claims.holder().assetNum());
        assertEquals(new Product("P-1", null, "Modeler"), claims.product());
        assertEquals(100L, claims.limits().amount());
        assertEquals(null, claims.limits().timeDurationSeconds());
        assertEquals(Instant.ofEpochMilli(1_805_184_000_000L), claims.limits().endDate());
        assertEquals(LeaseClaims.ExpBound.OFFLINE_DAYS, claims.expBound().orElseThrow());
    }

    @Test
    void aKeyIsChosenByKidAlone() throws Exception {
        TestKeys signer = new TestKeys("a");
        TestKeys other = new TestKeys("b");
        // The signer's key published under another kid: the token's kid finds the wrong key.
        ObjectNode header = signer.header().put("kid", "b");
        assertEquals(Reason.SIGNATURE, reasonOf(signer.sign(header, TestKeys.claims()),
                TestKeys.jwksOf(signer, other), FP, null, NOW));
        ObjectNode noKid = signer.header();
        noKid.remove("kid");
        assertEquals(Reason.UNKNOWN_KEY, reasonOf(signer.sign(noKid, TestKeys.claims()),
                TestKeys.jwksOf(signer), FP, null, NOW));
    }

    @Test
    void theFirstFailingCheckAnswers() throws Exception {
        TestKeys key = new TestKeys("k");
        Jwks jwks = TestKeys.jwksOf(key);
        // alg before kid: HS256 naming an unknown kid is a signature refusal.
        ObjectNode hs = key.header().put("alg", "HS256").put("kid", "nobody");
        assertEquals(Reason.SIGNATURE, reasonOf(key.sign(hs, TestKeys.claims()), jwks, FP, null, NOW));
        // kid before the signature.
        String forged = key.sign(key.header().put("kid", "nobody"), TestKeys.claims());
        forged = forged.substring(0, forged.lastIndexOf('.') + 1) + "A".repeat(86);
        assertEquals(Reason.UNKNOWN_KEY, reasonOf(forged, jwks, FP, null, NOW));
        // The signature before any claim: an expired lease for another machine, tampered.
        String token = key.sign(TestKeys.claims().put("exp", 1_700_000_000L));
        String tampered = token.substring(0, token.lastIndexOf('.') + 1) + "A".repeat(86);
        assertEquals(Reason.SIGNATURE, reasonOf(tampered, jwks, "another", null, NOW));
        // typ before time.
        assertEquals(Reason.MALFORMED, reasonOf(key.sign(key.header().put("typ", "JWT"),
                TestKeys.claims().put("exp", 1_700_000_000L)), jwks, FP, null, NOW));
        // not-yet-valid before expired, expired before audience and fingerprint.
        assertEquals(Reason.NOT_YET_VALID, reasonOf(key.sign(TestKeys.claims().put("nbf", 1_800_000_001L)
                .put("exp", 1_700_000_000L)), jwks, "another", "kw_other", NOW));
        assertEquals(Reason.EXPIRED, reasonOf(key.sign(TestKeys.claims().put("exp", 1_700_000_000L)),
                jwks, "another", "kw_other", NOW));
        // audience before the lease's shape and the fingerprint.
        ObjectNode shapeless = TestKeys.claims();
        shapeless.remove("holder");
        assertEquals(Reason.AUDIENCE, reasonOf(key.sign(shapeless), jwks, "another", "kw_other", NOW));
        assertEquals(Reason.MALFORMED, reasonOf(key.sign(shapeless), jwks, "another", "kw_app", NOW));
        // fingerprint before the license's end.
        ObjectNode ended = TestKeys.claims();
        ((ObjectNode) ended.get("limits")).put("endDate", 1_700_000_000_000L);
        assertEquals(Reason.FINGERPRINT, reasonOf(key.sign(ended), jwks, "another", null, NOW));
        assertEquals(Reason.LICENSE_ENDED, reasonOf(key.sign(ended), jwks, FP, null, NOW));
    }

    @Test
    void timesAreWholeSecondsWithoutLeeway() throws Exception {
        TestKeys key = new TestKeys("k");
        Jwks jwks = TestKeys.jwksOf(key);
        LeaseVerifier.verify(key.sign(TestKeys.claims().put("nbf", 1_800_000_000L)), jwks, FP, null, NOW);
        assertEquals(Reason.NOT_YET_VALID, reasonOf(key.sign(TestKeys.claims().put("nbf", 1_800_000_001L)),
                jwks, FP, null, NOW.plusMillis(999)));
        assertEquals(Reason.EXPIRED, reasonOf(key.sign(TestKeys.claims().put("exp", 1_800_000_000L)),
                jwks, FP, null, NOW));
        LeaseVerifier.verify(key.sign(TestKeys.claims().put("exp", 1_800_000_001L)), jwks, FP, null, NOW.plusMillis(999));
        // The license's end is in milliseconds: ended only once it is earlier than now.
        ObjectNode atEnd = TestKeys.claims();
        ((ObjectNode) atEnd.get("limits")).put("endDate", NOW.toEpochMilli());
        LeaseVerifier.verify(key.sign(atEnd), jwks, FP, null, NOW);
        assertEquals(Reason.LICENSE_ENDED, reasonOf(key.sign(atEnd), jwks, FP, null, NOW.plusMillis(1)));
        ObjectNode noEnd = TestKeys.claims();
        ((ObjectNode) noEnd.get("limits")).putNull("endDate");
        LeaseVerifier.verify(key.sign(noEnd), jwks, FP, null, NOW);
    }

    @Test
    void missingOrMistypedClaimsAreMalformed() throws Exception {
        TestKeys key = new TestKeys("k");
        Jwks jwks = TestKeys.jwksOf(key);
        for (String claim : List.of("sub", "jti", "aud", "iat", "nbf", "exp", "fingerprint", "assetNum", "product",
                "limits")) {
            ObjectNode claims = TestKeys.claims();
            claims.remove(claim);
            assertEquals(Reason.MALFORMED, reasonOf(key.sign(claims), jwks, FP, null, NOW), "without " + claim);
        }
        assertEquals(Reason.MALFORMED, reasonOf(key.sign(TestKeys.claims().put("exp", "tomorrow")), jwks, FP, null, NOW));
        assertEquals(Reason.MALFORMED, reasonOf(key.sign(TestKeys.claims().put("iss", "someone")), jwks, FP, null, NOW));
        assertEquals(Reason.MALFORMED, reasonOf(key.sign(TestKeys.claims().put("expBound", "forever")), jwks, FP, null, NOW));
        assertEquals(Reason.MALFORMED, reasonOf(key.sign(TestKeys.claims().putNull("expBound")), jwks, FP, null, NOW));
        ObjectNode member = TestKeys.claims();
        member.putObject("holder").put("kind", "member").put("memberGlobalId", "m-1");
        assertEquals(Reason.MALFORMED, reasonOf(key.sign(member), jwks, FP, null, NOW));
        ObjectNode noEndDate = TestKeys.claims();
        ((ObjectNode) noEndDate.get("limits")).remove("endDate");
        assertEquals(Reason.MALFORMED, reasonOf(key.sign(noEndDate), jwks, FP, null, NOW));
        // A typ in its media-type spelling is the same typ.
        LeaseVerifier.verify(key.sign(key.header().put("typ", "application/Keyward-Lease+JWT"), TestKeys.claims()),
                jwks, FP, null, NOW);
    }

    @Test
    void notACompactJwsIsMalformed() throws Exception {
        TestKeys key = new TestKeys("k");
        Jwks jwks = TestKeys.jwksOf(key);
        String token = key.sign(TestKeys.claims());
        for (String bad : java.util.Arrays.asList("", "a.b", token + ".x", "###." + token.substring(token.indexOf('.') + 1),
                token.replaceFirst("^[^.]+", "bm90IGpzb24"), null)) {
            assertEquals(Reason.MALFORMED, reasonOf(bad, jwks, FP, null, NOW), String.valueOf(bad));
        }
    }

    @Test
    void aSavedKeySetAndLeaseReadBackVerify(@TempDir Path dir) throws Exception {
        TestKeys key = new TestKeys("k-saved");
        TestKeys.jwksOf(key, new TestKeys("k-other")).save(dir.resolve("keys/jwks.json"));
        new OfflineLease(key.sign(TestKeys.claims())).save(dir.resolve("lease.jws"));
        Jwks jwks = Jwks.load(dir.resolve("keys/jwks.json"));
        assertEquals(List.of("k-saved", "k-other"), jwks.keyIds());
        LeaseClaims claims = OfflineLease.load(dir.resolve("lease.jws")).verify(jwks, FP, "kw_app", NOW);
        assertEquals("A-1", claims.assetNum());
        try (var files = Files.list(dir)) {
            assertEquals(2, files.count(), "no temporary file left beside them");
        }
        // As every SDK: the key set is public (0644), the lease its owner's (0600).
        assertEquals("rw-r--r--", java.nio.file.attribute.PosixFilePermissions.toString(
                Files.getPosixFilePermissions(dir.resolve("keys/jwks.json"))));
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
                Files.getPosixFilePermissions(dir.resolve("lease.jws"))));
    }

    @Test
    void aFileThatIsNoKeySetIsRefusedWhenRead(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("jwks.json"), "{\"keys\": 3}");
        assertThrows(IOException.class, () -> Jwks.load(dir.resolve("jwks.json")));
        assertThrows(IllegalArgumentException.class, () -> Jwks.parse("[]"));
        assertThrows(IllegalArgumentException.class, () -> Jwks.parse("{\"keys\":[]} trailing"));
    }

    @Test
    void aRememberedSignatureVouchesForItsOwnTokenAlone() throws Exception {
        TestKeys key = new TestKeys("k");
        Jwks jwks = TestKeys.jwksOf(key);
        String token = key.sign(TestKeys.claims());
        for (int i = 0; i < 3; i++) assertEquals("lease-1", LeaseVerifier.verify(token, jwks, FP, "kw_app", NOW).leaseId());
        // The same signature under other claims, after it verified: still no signature of them.
        String[] parts = token.split("\\.");
        ObjectNode other = TestKeys.claims().put("fingerprint", "fp-another-machine");
        String[] signedOther = key.sign(other).split("\\.");
        String forged = signedOther[0] + "." + signedOther[1] + "." + parts[2];
        assertEquals(Reason.SIGNATURE, reasonOf(forged, jwks, FP, "kw_app", NOW));
        // Nor does it vouch under another key set holding another key with the same kid.
        TestKeys impostor = new TestKeys("k");
        assertEquals(Reason.SIGNATURE, reasonOf(token, TestKeys.jwksOf(impostor), FP, "kw_app", NOW));
    }

    @Test
    void oneKeySetVerifiesOnManyThreadsAtOnce() throws Exception {
        TestKeys key = new TestKeys("k");
        Jwks jwks = TestKeys.jwksOf(key);
        List<String> tokens = new java.util.ArrayList<>();
        for (int i = 0; i < 40; i++) tokens.add(key.sign(TestKeys.claims().put("sub", "lease-" + i).put("jti", "lease-" + i)));
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
        try {
            List<java.util.concurrent.Future<String>> answers = new java.util.ArrayList<>();
            for (int round = 0; round < 3; round++) {
                for (String token : tokens) {
                    answers.add(pool.submit(() -> LeaseVerifier.verify(token, jwks, FP, "kw_app", NOW).leaseId()));
                }
            }
            for (int i = 0; i < answers.size(); i++) assertEquals("lease-" + (i % 40), answers.get(i).get());
        } finally {
            pool.shutdownNow();
        }
    }
}
