package dev.keyward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.keyward.LeaseVerificationException.Reason;
import java.time.Instant;
import java.util.Base64;
import org.junit.jupiter.api.Test;

/**
 * Leases a relay signs, carrying the pool grant the vendor signed for it (header {@code grant}):
 * the order of the checks around the grant, what the grant bounds, and that a relay's key and a
 * vendor's are never taken one for the other (sdks/conformance/README.md, relay-leases.json; the
 * vectors themselves run in ConformanceTest).
 */
class RelayLeaseTest {
    private static final Instant NOW = Instant.ofEpochSecond(1_800_000_000L);
    private static final String FP = "fp-machine-0001";

    private final TestKeys vendor = new TestKeys("vendor-key");
    private final TestKeys relay = new TestKeys("relay-key");
    private final Jwks jwks = TestKeys.jwksOf(vendor);

    RelayLeaseTest() throws Exception {}

    private String grant(ObjectNode claims) throws Exception {
        return vendor.sign(vendor.grantHeader(), claims);
    }

    private String grant() throws Exception {
        return grant(TestKeys.grantClaims(relay));
    }

    private Reason reasonOf(String token, String fingerprint, String audience) {
        return assertThrows(LeaseVerificationException.class,
                () -> LeaseVerifier.verify(token, jwks, fingerprint, audience, NOW)).reason();
    }

    private Reason reasonOf(String token) {
        return reasonOf(token, FP, "kw_app");
    }

    @Test
    void theNewReasonsCarryTheWireNamesOfEverySdk() {
        assertEquals("grant-expired", Reason.GRANT_EXPIRED.wire());
        assertEquals("beyond-grant", Reason.BEYOND_GRANT.wire());
        assertEquals(Reason.GRANT_EXPIRED, Reason.fromWire("grant-expired").orElseThrow());
        assertEquals(Reason.BEYOND_GRANT, Reason.fromWire("beyond-grant").orElseThrow());
    }

    @Test
    void aRelaysLeaseVerifiesWithTheVendorsKeySetAlone() throws Exception {
        String token = relay.signRelayLease(grant(), TestKeys.claims());
        for (int i = 0; i < 3; i++) {
            LeaseClaims claims = LeaseVerifier.verify(token, jwks, FP, "kw_app", NOW);
            assertEquals("lease-1", claims.leaseId());
            assertEquals("A-1", claims.assetNum());
        }
        // The relay's key is in no key set: alone, it verifies nothing.
        assertEquals(Reason.UNKNOWN_KEY, reasonOf(relay.sign(TestKeys.claims())));
        // Up to as many seats as the grant gives, on a listed machine, up to the grant's end.
        ObjectNode atTheBounds = TestKeys.claims().put("exp", 1_802_592_000L);
        ((ObjectNode) atTheBounds.get("limits")).put("concurrent", 5);
        ObjectNode listing = TestKeys.grantClaims(relay);
        listing.putArray("machines").add("fp-other").add(FP);
        LeaseVerifier.verify(relay.signRelayLease(grant(listing), atTheBounds), jwks, FP, "kw_app", NOW);
    }

    @Test
    void aRelaysKeyAndAVendorsAreNeverTakenOneForTheOther() throws Exception {
        // The relay's key certified under the vendor key's own kid.
        TestKeys sameKid = new TestKeys("vendor-key");
        String certified = grant(TestKeys.grantClaims(sameKid));
        String relayLease = sameKid.signRelayLease(certified, TestKeys.claims());
        String vendorLease = vendor.sign(TestKeys.claims());
        for (int i = 0; i < 2; i++) {
            assertEquals("lease-1", LeaseVerifier.verify(relayLease, jwks, FP, "kw_app", NOW).leaseId());
            assertEquals("lease-1", LeaseVerifier.verify(vendorLease, jwks, FP, "kw_app", NOW).leaseId());
            // The relay's signature without its grant: checked with the vendor's key of that kid.
            assertEquals(Reason.SIGNATURE, reasonOf(sameKid.sign(TestKeys.claims())));
            // The vendor's lease with a grant added: checked with the relay's key alone.
            assertEquals(Reason.SIGNATURE, reasonOf(vendor.signRelayLease(certified, TestKeys.claims())));
            // A vendor's signature remembered vouches for no relay lease bearing it, nor the other way.
            String[] vendorParts = vendorLease.split("\\.");
            String[] relayParts = relayLease.split("\\.");
            assertEquals(Reason.SIGNATURE, reasonOf(relayParts[0] + "." + relayParts[1] + "." + vendorParts[2]));
            assertEquals(Reason.SIGNATURE, reasonOf(vendorParts[0] + "." + vendorParts[1] + "." + relayParts[2]));
        }
    }

    @Test
    void theGrantIsCheckedBeforeTheLeasesKeyAndSignature() throws Exception {
        ObjectNode expiredGrant = TestKeys.grantClaims(relay).put("exp", 1_800_000_000L);
        ObjectNode laterGrant = TestKeys.grantClaims(relay).put("nbf", 1_800_000_001L);
        // A lease naming no key, or a key its grant does not certify: the grant answers first.
        String noKid = relay.sign(TestKeys.MAPPER.createObjectNode().put("alg", "EdDSA")
                .put("typ", "keyward-lease+jwt").put("grant", grant(expiredGrant)), TestKeys.claims());
        assertEquals(Reason.GRANT_EXPIRED, reasonOf(noKid));
        String forged = new TestKeys("another").signRelayLease(grant(laterGrant), TestKeys.claims());
        assertEquals(Reason.NOT_YET_VALID, reasonOf(forged));
        // alg first, then the grant.
        String hs = relay.sign(relay.header().put("alg", "HS256").put("grant", 42), TestKeys.claims());
        assertEquals(Reason.SIGNATURE, reasonOf(hs));
        // The grant's form, its key, its signature, its claims, its period, then the lease's key.
        String token = relay.signRelayLease(grant(), TestKeys.claims());
        String other = new TestKeys("relay-key").signRelayLease(grant(), TestKeys.claims());
        assertEquals(Reason.SIGNATURE, reasonOf(other), "the certified kid, another key");
        assertEquals(Reason.UNKNOWN_KEY, reasonOf(relay.sign(relay.header().put("kid", "relay-2")
                .put("grant", grant()), TestKeys.claims())));
        for (Object bad : new Object[] {null, 42, "", "a.b", token + ".x"}) {
            ObjectNode header = relay.header();
            if (bad == null) header.putNull("grant");
            else if (bad instanceof Integer n) header.put("grant", n);
            else header.put("grant", (String) bad);
            assertEquals(Reason.MALFORMED, reasonOf(relay.sign(header, TestKeys.claims())), "grant " + bad);
        }
        TestKeys stranger = new TestKeys("stranger");
        String strangersGrant = stranger.sign(stranger.grantHeader(), TestKeys.grantClaims(relay));
        assertEquals(Reason.UNKNOWN_KEY, reasonOf(relay.signRelayLease(strangersGrant, TestKeys.claims())));
        TestKeys impostor = new TestKeys("vendor-key");
        String impostorsGrant = impostor.sign(impostor.grantHeader(), TestKeys.grantClaims(relay));
        assertEquals(Reason.SIGNATURE, reasonOf(relay.signRelayLease(impostorsGrant, TestKeys.claims())));
        String leaseTyped = vendor.sign(vendor.header(), TestKeys.grantClaims(relay));
        assertEquals(Reason.MALFORMED, reasonOf(relay.signRelayLease(leaseTyped, TestKeys.claims())));
        String critical = vendor.sign(vendor.grantHeader().put("crit", "b64"), TestKeys.grantClaims(relay));
        assertEquals(Reason.MALFORMED, reasonOf(relay.signRelayLease(critical, TestKeys.claims())));
        // An expired grant answers before the lease's own claims are read.
        assertEquals(Reason.GRANT_EXPIRED, reasonOf(relay.signRelayLease(grant(expiredGrant),
                TestKeys.claims().put("exp", 1_700_000_000L).put("iss", "someone"))));
        // A typ in its media-type spelling is the same typ.
        String spelled = vendor.sign(vendor.grantHeader().put("typ", "application/Keyward-Grant+JWT"),
                TestKeys.grantClaims(relay));
        LeaseVerifier.verify(relay.signRelayLease(spelled, TestKeys.claims()), jwks, FP, "kw_app", NOW);
    }

    @Test
    void aGrantWithoutThePoolGrantsShapeIsMalformed() throws Exception {
        ObjectNode[] bad = new ObjectNode[16];
        for (int i = 0; i < bad.length; i++) bad[i] = TestKeys.grantClaims(relay);
        bad[0].put("iss", "someone");
        bad[1].put("sub", 7);
        bad[2].remove("jti");
        bad[3].put("nbf", 1_799_913_600.5);
        bad[4].put("exp", "later");
        ((ObjectNode) bad[5].get("relay")).remove("fingerprint");
        ((ObjectNode) bad[6].get("relay").get("key")).put("crv", "X25519");
        // 31 bytes, then 32 with unused bits set (the last character's two lowest).
        ((ObjectNode) bad[7].get("relay").get("key")).put("x", Base64.getUrlEncoder().withoutPadding()
                .encodeToString(new byte[31]));
        String x = relay.x();
        ((ObjectNode) bad[8].get("relay").get("key")).put("x", x.substring(0, 42) + "B");
        ((ObjectNode) bad[9].get("relay").get("key")).remove("kid");
        bad[10].putArray("licenses");
        ((ObjectNode) bad[11].get("licenses").get(0)).put("seats", 0);
        ((ObjectNode) bad[12].get("licenses").get(0)).put("seats", 2.5);
        ((ObjectNode) bad[13].get("licenses").get(0)).remove("crmProductId");
        bad[14].put("machines", "fp-machine-0001");
        bad[15].putArray("machines").add(1);
        for (int i = 0; i < bad.length; i++) {
            assertEquals(Reason.MALFORMED, reasonOf(relay.signRelayLease(grant(bad[i]), TestKeys.claims())),
                    "grant " + i + ": " + bad[i]);
        }
        // Whole numbers however JSON writes them; machines absent is any machine.
        ObjectNode written = TestKeys.grantClaims(relay).put("exp", 1.802592E9);
        ((ObjectNode) written.get("licenses").get(0)).put("seats", 5.0);
        written.remove("machines");
        LeaseVerifier.verify(relay.signRelayLease(grant(written), TestKeys.claims()), jwks, FP, "kw_app", NOW);
    }

    @Test
    void aLeaseSaysNoMoreThanItsGrantGives() throws Exception {
        ObjectNode claims = TestKeys.claims().put("exp", 1_802_592_001L);
        assertEquals(Reason.BEYOND_GRANT, reasonOf(relay.signRelayLease(grant(), claims)), "past the grant");
        for (Object seats : new Object[] {6, null, "1", "absent"}) {
            ObjectNode more = TestKeys.claims();
            ObjectNode limits = (ObjectNode) more.get("limits");
            if (seats == null) limits.putNull("concurrent");
            else if (seats instanceof Integer n) limits.put("concurrent", n);
            else if (seats.equals("absent")) limits.remove("concurrent");
            else limits.put("concurrent", (String) seats);
            assertEquals(Reason.BEYOND_GRANT, reasonOf(relay.signRelayLease(grant(), more)), "seats " + seats);
        }
        ObjectNode anotherLock = TestKeys.claims().put("assetNum", "A-2");
        assertEquals(Reason.BEYOND_GRANT, reasonOf(relay.signRelayLease(grant(), anotherLock)));
        ObjectNode anotherProduct = TestKeys.claims();
        ((ObjectNode) anotherProduct.get("product")).put("crmProductId", "P-2");
        assertEquals(Reason.BEYOND_GRANT, reasonOf(relay.signRelayLease(grant(), anotherProduct)));
        ObjectNode listing = TestKeys.grantClaims(relay);
        listing.putArray("machines").add("fp-other");
        assertEquals(Reason.BEYOND_GRANT, reasonOf(relay.signRelayLease(grant(listing), TestKeys.claims())));

        // A license without a product: null matches null alone.
        ObjectNode productless = TestKeys.grantClaims(relay);
        ((ObjectNode) productless.get("licenses").get(0)).putNull("crmProductId");
        ObjectNode nullProduct = TestKeys.claims();
        ((ObjectNode) nullProduct.get("product")).putNull("crmProductId");
        LeaseVerifier.verify(relay.signRelayLease(grant(productless), nullProduct), jwks, FP, "kw_app", NOW);
        assertEquals(Reason.BEYOND_GRANT, reasonOf(relay.signRelayLease(grant(productless), TestKeys.claims())));
        ObjectNode noProductId = TestKeys.claims();
        ((ObjectNode) noProductId.get("product")).remove("crmProductId");
        assertEquals(Reason.BEYOND_GRANT, reasonOf(relay.signRelayLease(grant(productless), noProductId)));
    }

    @Test
    void beyondGrantComesAfterTheLeasesClaimsAndBeforeItsMachine() throws Exception {
        ObjectNode listing = TestKeys.grantClaims(relay);
        listing.putArray("machines").add("fp-other");
        String grant = grant(listing);
        // expired, audience and the lease's shape before beyond-grant.
        assertEquals(Reason.EXPIRED, reasonOf(relay.signRelayLease(grant,
                TestKeys.claims().put("exp", 1_800_000_000L))));
        assertEquals(Reason.AUDIENCE, reasonOf(relay.signRelayLease(grant, TestKeys.claims()), FP, "kw_other"));
        ObjectNode shapeless = TestKeys.claims();
        shapeless.remove("holder");
        assertEquals(Reason.MALFORMED, reasonOf(relay.signRelayLease(grant, shapeless)));
        // beyond-grant before the fingerprint and the license's end.
        ObjectNode ended = TestKeys.claims();
        ((ObjectNode) ended.get("limits")).put("endDate", 1_700_000_000_000L);
        assertEquals(Reason.BEYOND_GRANT, reasonOf(relay.signRelayLease(grant, ended), "another", "kw_app"));
        // Within the grant: the fingerprint, then the license's end, as for any lease.
        assertEquals(Reason.FINGERPRINT, reasonOf(relay.signRelayLease(grant(), ended), "another", "kw_app"));
        assertEquals(Reason.LICENSE_ENDED, reasonOf(relay.signRelayLease(grant(), ended)));
    }

    @Test
    void aGrantCertifyingNoEd25519PointVerifiesNoLease() throws Exception {
        // y = 2^255 - 1, past the field's prime: 32 bytes of base64url, but no point.
        byte[] notAPoint = new byte[32];
        java.util.Arrays.fill(notAPoint, (byte) 0xff);
        notAPoint[31] = 0x7f;
        ObjectNode claims = TestKeys.grantClaims(relay);
        ((ObjectNode) claims.get("relay").get("key")).put("x",
                Base64.getUrlEncoder().withoutPadding().encodeToString(notAPoint));
        assertEquals(Reason.SIGNATURE, reasonOf(relay.signRelayLease(grant(claims), TestKeys.claims())));
    }

    @Test
    void manyRelaysVerifyOneAfterAnother() throws Exception {
        // More relays than keys kept decoded: each lease still verifies, the first again at the end.
        TestKeys[] relays = new TestKeys[20];
        String[] tokens = new String[relays.length];
        for (int i = 0; i < relays.length; i++) {
            relays[i] = new TestKeys("relay-" + i);
            tokens[i] = relays[i].signRelayLease(grant(TestKeys.grantClaims(relays[i])), TestKeys.claims());
        }
        for (int round = 0; round < 2; round++) {
            for (String token : tokens) {
                assertEquals("lease-1", LeaseVerifier.verify(token, jwks, FP, "kw_app", NOW).leaseId());
            }
        }
    }
}
