package dev.keyward;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every case of sdks/conformance/activation.json, read from the repository at test time: a case
 * or a field added there that this test does not judge fails, so the SDK never passes by skipping.
 */
class ActivationConformanceTest {
    private static final HexFormat HEX = HexFormat.of();
    private static final Set<String> SECTIONS = Set.of("requests", "typedCodes", "answers", "returns");

    @TestFactory
    Stream<DynamicTest> activation(@TempDir Path dir) throws Exception {
        JsonNode vectors = Conformance.read("activation.json");
        assertEquals(1, vectors.get("version").asInt(), "activation.json version this SDK reads");
        Instant now = Instant.ofEpochSecond(vectors.get("now").asLong());
        // Loaded as a machine loads the key set its software shipped with.
        Path saved = dir.resolve("jwks.json");
        Files.writeString(saved, vectors.get("jwks").toString(), StandardCharsets.UTF_8);
        Jwks jwks = Jwks.load(saved);

        List<DynamicTest> tests = new ArrayList<>();
        for (String field : iterable(vectors.fieldNames())) {
            if (!Set.of("version", "now", "jwks").contains(field) && !SECTIONS.contains(field)) {
                tests.add(DynamicTest.dynamicTest("section " + field, () -> fail("activation.json's " + field
                        + " is not judged by this SDK's test")));
            }
        }
        for (String section : SECTIONS) {
            assertTrue(vectors.path(section).isArray() && vectors.get(section).size() > 0, "activation.json " + section);
            for (JsonNode c : vectors.get(section)) {
                String name = section + " " + c.get("name").asText();
                switch (section) {
                    case "requests" -> tests.add(DynamicTest.dynamicTest(name, () -> judgeRequest(c, dir)));
                    case "typedCodes" -> tests.add(DynamicTest.dynamicTest(name, () -> judgeTypedCode(c)));
                    case "answers" -> tests.add(DynamicTest.dynamicTest(name, () -> judgeAnswer(c, jwks, now)));
                    case "returns" -> tests.add(DynamicTest.dynamicTest(name, () -> judgeReturn(c)));
                    default -> fail(section);
                }
            }
        }
        return tests.stream();
    }

    private static void judgeRequest(JsonNode c, Path dir) throws Exception {
        onlyFields(c, "name", "description", "fields", "fingerprintHash", "code");
        JsonNode f = c.get("fields");
        onlyFields(f, "appKey", "assetNum", "crmProductId", "days", "createdAt", "nonce", "fingerprint");
        ActivationRequest request = ActivationRequest.builder()
                .appKey(f.get("appKey").asText())
                .assetNum(f.get("assetNum").asText())
                .crmProductId(f.get("crmProductId").asText())
                .days(f.get("days").asInt())
                .createdAt(Instant.ofEpochSecond(f.get("createdAt").asLong()))
                .nonce(HEX.parseHex(f.get("nonce").asText()))
                .fingerprint(f.get("fingerprint").asText())
                .build();
        String code = c.get("code").asText();
        assertEquals(code, request.code(), "the typed code");
        assertEquals(c.get("fingerprintHash").asText(), HEX.formatHex(request.fingerprintHash()));
        assertTrue(request.isFor(f.get("fingerprint").asText()));

        // Read back from its code, from its file's text, and from the file saved and loaded.
        ActivationRequest read = ActivationRequest.read(code);
        assertSameFields(f, c.get("fingerprintHash").asText(), read);
        assertEquals(request, read);
        assertSameFields(f, c.get("fingerprintHash").asText(), ActivationRequest.read(request.fileJson()));
        Path file = dir.resolve(c.get("name").asText() + ".json");
        request.save(file);
        assertSameFields(f, c.get("fingerprintHash").asText(), ActivationRequest.load(file));
        JsonNode json = Json.parse(Files.readString(file, StandardCharsets.UTF_8));
        assertEquals("activation-request", json.get("keyward").asText());
        assertEquals(1, json.get("version").asInt());
        assertEquals(code, json.get("code").asText());
        assertEquals(f.get("days").asInt(), json.get("days").asInt());
        assertEquals(Instant.ofEpochSecond(f.get("createdAt").asLong()), Instant.parse(json.get("createdAt").asText()));
    }

    private static void assertSameFields(JsonNode f, String fingerprintHash, ActivationRequest read) {
        assertEquals(f.get("appKey").asText(), read.appKey());
        assertEquals(f.get("assetNum").asText(), read.assetNum());
        assertEquals(f.get("crmProductId").asText(), read.crmProductId());
        assertEquals(f.get("days").asInt(), read.days());
        assertEquals(f.get("createdAt").asLong(), read.createdAt().getEpochSecond());
        assertEquals(f.get("nonce").asText(), HEX.formatHex(read.nonce()));
        assertEquals(fingerprintHash, HEX.formatHex(read.fingerprintHash()));
    }

    private static void judgeTypedCode(JsonNode c) throws Exception {
        onlyFields(c, "name", "description", "text", "expect");
        JsonNode expect = c.get("expect");
        String text = c.get("text").asText();
        if (expect.has("bytes")) {
            onlyFields(expect, "bytes");
            assertEquals(expect.get("bytes").asText(), HEX.formatHex(TypedCode.decode(text)));
        } else {
            onlyFields(expect, "error", "group");
            assertTrue(expect.get("error").asBoolean(), "expect.error");
            ActivationFormatException e = assertThrows(ActivationFormatException.class, () -> TypedCode.decode(text));
            if (expect.has("group")) {
                assertEquals(expect.get("group").asInt(), e.group().orElse(0), e.getMessage());
                assertTrue(e.getMessage().contains("group " + expect.get("group").asInt()), e.getMessage());
            }
        }
    }

    private static void judgeAnswer(JsonNode c, Jwks jwks, Instant vectorsNow) throws Exception {
        onlyFields(c, "name", "description", "request", "fingerprint", "answer", "now", "expect");
        ActivationRequest request = ActivationRequest.read(c.get("request").asText());
        String fingerprint = c.get("fingerprint").asText();
        String answer = c.get("answer").asText();
        Instant now = c.has("now") ? Instant.ofEpochSecond(c.get("now").asLong()) : vectorsNow;
        JsonNode expect = c.get("expect");
        if (expect.get("valid").asBoolean()) {
            onlyFields(expect, "valid", "leaseId", "expiresAt", "expBound");
            ActivatedLease lease;
            try {
                lease = ActivationVerifier.verify(answer, request, jwks, fingerprint, now);
            } catch (LeaseVerificationException e) {
                throw new AssertionError("expected valid, refused: " + e.getMessage(), e);
            }
            assertEquals(expect.get("leaseId").asText(), lease.leaseId());
            assertEquals(expect.get("expiresAt").asLong(), lease.expiresAt().getEpochSecond());
            assertEquals(expect.get("expBound").asText(), lease.expBound().wire());
            assertEquals(request.appKey(), lease.appKey());
            assertEquals(request.assetNum(), lease.assetNum());
            assertEquals(request.crmProductId(), lease.crmProductId());
            assertTrue(lease.issuedAt().isBefore(now) || lease.issuedAt().equals(now));
        } else {
            onlyFields(expect, "valid", "reason");
            String reason = expect.get("reason").asText();
            assertTrue(LeaseVerificationException.Reason.fromWire(reason).isPresent(), "unknown reason " + reason);
            LeaseVerificationException e = assertThrows(LeaseVerificationException.class,
                    () -> ActivationVerifier.verify(answer, request, jwks, fingerprint, now));
            assertEquals(reason, e.reason().wire(), e.getMessage());
        }
    }

    private static void judgeReturn(JsonNode c) throws Exception {
        onlyFields(c, "name", "description", "request", "leaseId", "code");
        ActivationRequest request = ActivationRequest.read(c.get("request").asText());
        String code = request.returnCode(c.get("leaseId").asText());
        assertEquals(c.get("code").asText(), code);
        // A return code is no request: a reader names what it is.
        ActivationFormatException e = assertThrows(ActivationFormatException.class, () -> ActivationRequest.read(code));
        assertTrue(e.getMessage().contains("return code"), e.getMessage());
    }

    private static void onlyFields(JsonNode node, String... known) {
        assertFalse(node == null || !node.isObject(), "an object");
        Set<String> allowed = Set.of(known);
        for (String field : iterable(node.fieldNames())) {
            assertTrue(allowed.contains(field), "\"" + field + "\" is not judged by this SDK's test");
        }
    }

    private static <T> Iterable<T> iterable(Iterator<T> iterator) {
        return () -> iterator;
    }
}
