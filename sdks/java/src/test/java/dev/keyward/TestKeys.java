package dev.keyward;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.security.interfaces.EdECPublicKey;
import java.util.Base64;

/** Ed25519 keys made in the test, their JWKs, and leases signed with them. */
final class TestKeys {
    static final ObjectMapper MAPPER = new ObjectMapper();
    final KeyPair pair;
    final String kid;

    TestKeys(String kid) throws Exception {
        this.pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        this.kid = kid;
    }

    /** RFC 8032 encoding of the public point: y little-endian, the top bit x's parity. */
    String x() {
        EdECPublicKey key = (EdECPublicKey) pair.getPublic();
        byte[] bigEndian = key.getPoint().getY().toByteArray();
        byte[] encoded = new byte[32];
        for (int i = 0; i < 32 && i < bigEndian.length; i++) encoded[i] = bigEndian[bigEndian.length - 1 - i];
        if (key.getPoint().isXOdd()) encoded[31] |= (byte) 0x80;
        return Base64.getUrlEncoder().withoutPadding().encodeToString(encoded);
    }

    boolean xOdd() {
        return ((EdECPublicKey) pair.getPublic()).getPoint().isXOdd();
    }

    ObjectNode jwk() {
        ObjectNode jwk = MAPPER.createObjectNode();
        jwk.put("kty", "OKP").put("crv", "Ed25519").put("x", x()).put("kid", kid).put("alg", "EdDSA").put("use", "sig");
        return jwk;
    }

    static Jwks jwksOf(TestKeys... keys) {
        ObjectNode set = MAPPER.createObjectNode();
        for (TestKeys key : keys) set.withArray("keys").add(key.jwk());
        return Jwks.parse(set.toString());
    }

    ObjectNode header() {
        ObjectNode header = MAPPER.createObjectNode();
        header.put("alg", "EdDSA").put("kid", kid).put("typ", "keyward-lease+jwt");
        return header;
    }

    /** A lease's claims as the server signs them, valid from 1800000000 - 3600 for a day. */
    static ObjectNode claims() {
        ObjectNode claims = MAPPER.createObjectNode();
        claims.put("iss", "keyward").put("sub", "lease-1").put("jti", "lease-1").put("aud", "kw_app")
                .put("iat", 1_799_996_400L).put("nbf", 1_799_996_400L).put("exp", 1_800_082_800L);
        claims.putObject("holder").put("kind", "lock").put("assetNum", "A-1");
        claims.put("fingerprint", "fp-machine-0001").put("assetNum", "A-1");
        claims.putObject("product").put("crmProductId", "P-1").putNull("productUri").put("productName", "Modeler");
        ObjectNode limits = claims.putObject("limits");
        limits.put("concurrent", 1).putNull("timeDurationSeconds").put("amount", 100)
                .put("startDate", 1_797_408_000_000L).put("endDate", 1_805_184_000_000L);
        claims.put("expBound", "offline-days");
        return claims;
    }

    String sign(ObjectNode header, ObjectNode claims) throws Exception {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        String input = b64.encodeToString(header.toString().getBytes(StandardCharsets.UTF_8)) + "."
                + b64.encodeToString(claims.toString().getBytes(StandardCharsets.UTF_8));
        Signature signer = Signature.getInstance("Ed25519");
        signer.initSign(pair.getPrivate());
        signer.update(input.getBytes(StandardCharsets.US_ASCII));
        return input + "." + b64.encodeToString(signer.sign());
    }

    String sign(ObjectNode claims) throws Exception {
        return sign(header(), claims);
    }

    /** A pool grant's header, signed by this (vendor's) key. */
    ObjectNode grantHeader() {
        return header().put("typ", "keyward-grant+jwt");
    }

    /** This key as a pool grant certifies a relay's: kty, crv, x, kid. */
    ObjectNode relayJwk() {
        ObjectNode jwk = MAPPER.createObjectNode();
        jwk.put("kty", "OKP").put("crv", "Ed25519").put("x", x()).put("kid", kid);
        return jwk;
    }

    /**
     * A pool grant's claims certifying {@code relay}, as the server signs them: valid from
     * 1799913600 to 1802592000, 5 seats of lock A-1's product P-1 ({@link #claims()}'s), any machine.
     */
    static ObjectNode grantClaims(TestKeys relay) {
        ObjectNode grant = MAPPER.createObjectNode();
        grant.put("iss", "keyward").put("sub", "relay-1").put("jti", "grant-1")
                .put("iat", 1_799_913_600L).put("nbf", 1_799_913_600L).put("exp", 1_802_592_000L);
        ObjectNode onRelay = grant.putObject("relay");
        onRelay.set("key", relay.relayJwk());
        onRelay.put("fingerprint", "fp-relay-host");
        grant.putArray("licenses").addObject().put("assetNum", "A-1").put("crmProductId", "P-1").put("seats", 5);
        grant.putNull("machines");
        grant.putObject("overage").put("policy", "refuse").put("seats", 0);
        return grant;
    }

    /** A lease this (relay's) key signs, carrying {@code grant} in its header. */
    String signRelayLease(String grant, ObjectNode claims) throws Exception {
        return sign(header().put("grant", grant), claims);
    }

}
