package dev.keyward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every case of sdks/conformance/leases.json, relay-leases.json and webhooks.json, read from the
 * repository at test time: a case added there is run here, and one this SDK does not judge as
 * expected fails.
 */
class ConformanceTest {

    @TestFactory
    Stream<DynamicTest> leases(@TempDir Path dir) throws Exception {
        return leaseCases("leases.json", "lease ", dir);
    }

    /** The leases a relay signed: verified with the vendor's key set alone, exactly as leases.json's. */
    @TestFactory
    Stream<DynamicTest> relayLeases(@TempDir Path dir) throws Exception {
        return leaseCases("relay-leases.json", "relay lease ", dir);
    }

    private static Stream<DynamicTest> leaseCases(String file, String prefix, Path dir) throws Exception {
        JsonNode vectors = Conformance.read(file);
        assertEquals(1, vectors.get("version").asInt(), file + " version this SDK reads");
        // Loaded as an SDK loads a saved JWKS file.
        Path saved = dir.resolve("jwks.json");
        Files.writeString(saved, vectors.get("jwks").toString(), StandardCharsets.UTF_8);
        Jwks jwks = Jwks.load(saved);
        List<DynamicTest> tests = new ArrayList<>();
        for (JsonNode c : vectors.get("cases")) {
            tests.add(DynamicTest.dynamicTest(prefix + c.get("name").asText(), () -> judgeLease(jwks, c)));
        }
        assertFalse(tests.isEmpty(), file + " has no case");
        return tests.stream();
    }

    private static void judgeLease(Jwks jwks, JsonNode c) {
        String token = c.get("token").asText();
        String fingerprint = c.get("fingerprint").asText();
        String audience = c.hasNonNull("audience") ? c.get("audience").asText() : null;
        Instant now = Instant.ofEpochSecond(c.get("now").asLong());
        JsonNode expect = c.get("expect");
        assertNotNull(expect, "a case without expect");
        if (expect.get("valid").asBoolean()) {
            LeaseClaims claims;
            try {
                claims = LeaseVerifier.verify(token, jwks, fingerprint, audience, now);
            } catch (LeaseVerificationException e) {
                throw new AssertionError("expected valid, refused: " + e.getMessage(), e);
            }
            for (var field : iterable(expect.fieldNames())) {
                switch (field) {
                    case "valid" -> { }
                    case "sub" -> {
                        assertEquals(expect.get("sub").asText(), claims.subject());
                        assertEquals(expect.get("sub").asText(), claims.leaseId());
                    }
                    case "assetNum" -> assertEquals(expect.get("assetNum").asText(), claims.assetNum());
                    case "holderKind" -> assertEquals(expect.get("holderKind").asText(), claims.holder().kind().wire());
                    case "expBound" -> assertEquals(
                            expect.get("expBound").isNull() ? null : expect.get("expBound").asText(),
                            claims.expBound().map(LeaseClaims.ExpBound::wire).orElse(null));
                    default -> fail("expect." + field + " is not compared by this SDK's test");
                }
            }
        } else {
            String reason = expect.get("reason").asText();
            assertTrue(LeaseVerificationException.Reason.fromWire(reason).isPresent(), "unknown reason " + reason);
            LeaseVerificationException e = assertThrows(LeaseVerificationException.class,
                    () -> LeaseVerifier.verify(token, jwks, fingerprint, audience, now));
            assertEquals(reason, e.reason().wire(), e.getMessage());
        }
    }

    @TestFactory
    Stream<DynamicTest> webhooks() throws Exception {
        JsonNode vectors = Conformance.read("webhooks.json");
        assertEquals(1, vectors.get("version").asInt(), "webhooks.json version this SDK reads");
        long tolerance = vectors.get("toleranceSeconds").asLong();
        assertEquals(WebhookVerifier.DEFAULT_TOLERANCE.getSeconds(), tolerance, "the default tolerance");
        List<DynamicTest> tests = new ArrayList<>();
        for (JsonNode c : vectors.get("cases")) {
            tests.add(DynamicTest.dynamicTest("webhook " + c.get("name").asText(), () -> judgeWebhook(c)));
        }
        assertFalse(tests.isEmpty(), "webhooks.json has no case");
        return tests.stream();
    }

    private static void judgeWebhook(JsonNode c) {
        List<String> secrets = new ArrayList<>();
        c.get("secrets").forEach(s -> secrets.add(s.asText()));
        WebhookVerifier verifier = new WebhookVerifier(secrets.toArray(String[]::new));
        Map<String, String> headers = new HashMap<>();
        c.get("headers").fields().forEachRemaining(e -> headers.put(e.getKey(), e.getValue().asText()));
        String body = c.get("body").asText();
        Instant now = Instant.ofEpochSecond(c.get("now").asLong());
        JsonNode expect = c.get("expect");
        if (expect.get("valid").asBoolean()) {
            WebhookEvent event;
            try {
                event = verifier.verify(body, headers, now);
            } catch (WebhookVerificationException e) {
                throw new AssertionError("expected valid, refused: " + e.getMessage(), e);
            }
            for (var field : iterable(expect.fieldNames())) {
                switch (field) {
                    case "valid" -> { }
                    case "id" -> assertEquals(expect.get("id").asText(), event.id());
                    case "type" -> assertEquals(expect.get("type").asText(), event.type());
                    default -> fail("expect." + field + " is not compared by this SDK's test");
                }
            }
        } else {
            assertThrows(WebhookVerificationException.class, () -> verifier.verify(body, headers, now));
        }
    }

    @Test
    void everyReasonOfTheReadmeIsOneOfOurs() throws Exception {
        String readme = Files.readString(Conformance.dir().resolve("README.md"), StandardCharsets.UTF_8);
        // The leases' table (reason, when) and the relay leases' (step, reason, when).
        assertTrue(reasonsOfTable(readme, "| reason ", 1) >= 8, "the leases' table of reasons");
        assertTrue(reasonsOfTable(readme, "| step ", 2) >= 6, "the relay leases' table of reasons");
    }

    /** Checks every `reason` of a README table's column; answers how many it read. */
    private static int reasonsOfTable(String readme, String head, int column) {
        int table = readme.indexOf(head);
        assertTrue(table >= 0, "the README's table " + head);
        int checked = 0;
        for (String line : readme.substring(table).split("\n")) {
            if (!line.startsWith("|")) break;
            java.util.regex.Matcher reason = java.util.regex.Pattern.compile("`([a-z-]+)`")
                    .matcher(line.split("\\|")[column]);
            while (reason.find()) {
                assertTrue(LeaseVerificationException.Reason.fromWire(reason.group(1)).isPresent(),
                        "reason " + reason.group(1));
                checked++;
            }
        }
        return checked;
    }

    private static <T> Iterable<T> iterable(java.util.Iterator<T> iterator) {
        return () -> iterator;
    }
}
