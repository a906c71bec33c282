package dev.keyward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

class WebhookVerifierTest {
    private static final byte[] KEY = "a webhook secret of the test".getBytes(StandardCharsets.UTF_8);
    private static final String SECRET = "whsec_" + Base64.getEncoder().encodeToString(KEY);
    private static final Instant NOW = Instant.ofEpochSecond(1_800_000_000L);
    private static final String BODY = "{\"id\":\"evt_1\",\"type\":\"asset.locked\",\"timestamp\":\"2027-01-15T08:00:00.000Z\","
            + "\"scope\":{\"channels\":[\"CRM\"]},\"data\":{\"assetNum\":\"Ä-1\"},\"requestId\":null}";

    private static String sign(byte[] key, String id, long timestamp, byte[] body) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        mac.update((id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8));
        return "v1," + Base64.getEncoder().encodeToString(mac.doFinal(body));
    }

    @Test
    void headersInAnyCaseAndAsListsAreRead() throws Exception {
        byte[] body = BODY.getBytes(StandardCharsets.UTF_8);
        Map<String, List<String>> headers = Map.of(
                "Webhook-Id", List.of("evt_1"),
                "WEBHOOK-TIMESTAMP", List.of("1800000000"),
                "webhook-signature", List.of(sign(KEY, "evt_1", 1_800_000_000L, body)));
        WebhookEvent event = new WebhookVerifier(SECRET).verify(body, headers, NOW);
        assertEquals("evt_1", event.id());
        assertEquals("asset.locked", event.type());
        assertEquals("Ä-1", event.data().get("assetNum").asText());
        assertEquals(null, event.requestId());
        assertEquals(Instant.parse("2027-01-15T08:00:00Z"), event.timestamp());
        // The same body as a String: its UTF-8 bytes are what was signed.
        Map<String, String> plain = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        plain.put("webhook-id", "evt_1");
        plain.put("webhook-timestamp", "1800000000");
        plain.put("webhook-signature", "v1a,xyz " + sign(KEY, "evt_1", 1_800_000_000L, body));
        assertEquals("evt_1", new WebhookVerifier(SECRET).verify(BODY, plain, NOW).id());
    }

    @Test
    void theToleranceIsTheVerifiers() throws Exception {
        byte[] body = BODY.getBytes(StandardCharsets.UTF_8);
        long sent = 1_800_000_000L - 400;
        Map<String, String> headers = Map.of("webhook-id", "evt_1", "webhook-timestamp", String.valueOf(sent),
                "webhook-signature", sign(KEY, "evt_1", sent, body));
        assertThrows(WebhookVerificationException.class, () -> new WebhookVerifier(SECRET).verify(body, headers, NOW));
        new WebhookVerifier(List.of(SECRET), Duration.ofSeconds(400)).verify(body, headers, NOW);
        assertThrows(WebhookVerificationException.class,
                () -> new WebhookVerifier(List.of(SECRET), Duration.ofSeconds(399)).verify(body, headers, NOW));
    }

    @Test
    void malformedHeadersAreRefused() throws Exception {
        byte[] body = BODY.getBytes(StandardCharsets.UTF_8);
        WebhookVerifier verifier = new WebhookVerifier(SECRET);
        String signature = sign(KEY, "evt_1", 1_800_000_000L, body);
        assertThrows(WebhookVerificationException.class, () -> verifier.verify(body,
                Map.of("webhook-id", "evt_1", "webhook-timestamp", "1.8e9", "webhook-signature", signature), NOW));
        assertThrows(WebhookVerificationException.class, () -> verifier.verify(body,
                Map.of("webhook-id", "", "webhook-timestamp", "1800000000", "webhook-signature", signature), NOW));
        assertThrows(WebhookVerificationException.class, () -> verifier.verify(body,
                Map.of("webhook-id", "evt_1", "webhook-timestamp", "99999999999999999999", "webhook-signature", signature),
                NOW));
        // Signed, but no JSON body.
        byte[] text = "hello".getBytes(StandardCharsets.UTF_8);
        assertThrows(WebhookVerificationException.class, () -> verifier.verify(text, Map.of("webhook-id", "evt_1",
                "webhook-timestamp", "1800000000", "webhook-signature", sign(KEY, "evt_1", 1_800_000_000L, text)), NOW));
    }

    @Test
    void aSecretThatIsNoBase64IsRefusedAtOnce() {
        assertThrows(IllegalArgumentException.class, () -> new WebhookVerifier("whsec_not base64!"));
        assertThrows(IllegalArgumentException.class, () -> new WebhookVerifier("whsec_"));
        assertThrows(IllegalArgumentException.class, () -> new WebhookVerifier());
    }
}
