package com.example.app;

import dev.keyward.ActivationRequest;
import dev.keyward.Jwks;
import dev.keyward.Keyward;
import dev.keyward.KeywardSession;
import java.time.Instant;

/**
 * A program built against the installed SDK, as a customer builds one: the jar from a Maven
 * repository, Jackson beside it. Prints what it used; exits non-zero when something is off.
 */
public final class Consumer {
    private Consumer() {}

    public static void main(String[] args) throws Exception {
        Jwks jwks = Jwks.parse("{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\","
                + "\"x\":\"6SVDqvbVE-VLwIL4TKinRPng9SGZ-yhduJKFSNiXRBA\",\"kid\":\"k1\",\"alg\":\"EdDSA\",\"use\":\"sig\"}]}");
        ActivationRequest request = ActivationRequest.builder()
                .appKey("kw_app").assetNum("8000000001").crmProductId("demo-simulator").days(7)
                .fingerprint("fp-1").createdAt(Instant.parse("2027-01-15T08:00:00Z")).build();
        if (!ActivationRequest.read(request.code()).equals(request)) throw new AssertionError("the request code");
        try (KeywardSession session = KeywardSession.builder()
                .baseUrl("https://keyward.example.com").appKey("kw_app").appSecret("s").build()) {
            System.out.println("keyward-java " + Keyward.VERSION + " in " + Keyward.class.getModule()
                    + ": keys " + jwks.keyIds() + ", request " + request.code().substring(0, 13) + "…, session for "
                    + session.baseUrl());
        }
    }
}
