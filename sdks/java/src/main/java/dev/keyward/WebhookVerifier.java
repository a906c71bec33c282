package dev.keyward;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Verifies Keyward's webhooks on the vendor's back end, by the Standard Webhooks scheme: the
 * {@code webhook-signature} header must hold a {@code v1,} HMAC-SHA256 of {@code id.timestamp.body}
 * under one of the endpoint's secrets ({@code whsec_…}; two while a rotation overlaps), compared in
 * constant time; {@code webhook-timestamp} must be within the tolerance (300 s) of now either way;
 * and the event's id must be the {@code webhook-id}.
 *
 * <pre>{@code
 * WebhookVerifier verifier = new WebhookVerifier(System.getenv("WEBHOOK_SECRET"));
 * try {
 *     WebhookEvent event = verifier.verify(rawBody, headers);
 *     handleOnce(event.id(), event.type(), event.data());
 *     status = 204;
 * } catch (WebhookVerificationException e) {
 *     status = 400;
 * }
 * }</pre>
 *
 * Verify the raw body, byte for byte, before parsing it. Immutable and thread-safe.
 */
public final class WebhookVerifier {
    /** The tolerance unless told: five minutes either way. */
    public static final Duration DEFAULT_TOLERANCE = Duration.ofSeconds(300);
    private static final String PREFIX = "whsec_";

    private final List<byte[]> keys;
    private final long toleranceSeconds;

    /** A verifier for one secret or more ({@code whsec_…}), with the default tolerance. */
    public WebhookVerifier(String... secrets) {
        this(List.of(secrets), DEFAULT_TOLERANCE);
    }

    /**
     * A verifier for {@code secrets} ({@code whsec_…}, or their base64 part alone) and a tolerance.
     *
     * @throws IllegalArgumentException when a secret is not base64
     */
    public WebhookVerifier(Collection<String> secrets, Duration tolerance) {
        if (secrets.isEmpty()) throw new IllegalArgumentException("no webhook secret");
        List<byte[]> decoded = new ArrayList<>();
        for (String secret : secrets) {
            String base64 = Objects.requireNonNull(secret, "secret").startsWith(PREFIX)
                    ? secret.substring(PREFIX.length()) : secret;
            try {
                decoded.add(Base64.getDecoder().decode(base64));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("a webhook secret is not whsec_ and base64", e);
            }
            if (decoded.get(decoded.size() - 1).length == 0) throw new IllegalArgumentException("an empty webhook secret");
        }
        this.keys = List.copyOf(decoded);
        this.toleranceSeconds = tolerance.getSeconds();
    }

    /**
     * Verifies a webhook now. {@code headers} maps header names (any case) to a value or to a list of
     * values (the first counts): a servlet's, {@code com.sun.net.httpserver.Headers}, a plain map.
     */
    public WebhookEvent verify(String body, Map<String, ?> headers) throws WebhookVerificationException {
        return verify(body.getBytes(StandardCharsets.UTF_8), headers, Instant.now());
    }

    public WebhookEvent verify(String body, Map<String, ?> headers, Instant now) throws WebhookVerificationException {
        return verify(body.getBytes(StandardCharsets.UTF_8), headers, now);
    }

    public WebhookEvent verify(byte[] body, Map<String, ?> headers) throws WebhookVerificationException {
        return verify(body, headers, Instant.now());
    }

    public WebhookEvent verify(byte[] body, Map<String, ?> headers, Instant now) throws WebhookVerificationException {
        return verify(body, header(headers, "webhook-id"), header(headers, "webhook-timestamp"),
                header(headers, "webhook-signature"), now);
    }

    /** Verifies a webhook at {@code now} from its three headers' values. */
    public WebhookEvent verify(byte[] body, String webhookId, String webhookTimestamp, String webhookSignature,
            Instant now) throws WebhookVerificationException {
        String id = required("webhook-id", webhookId);
        String timestamp = required("webhook-timestamp", webhookTimestamp);
        String signatureHeader = required("webhook-signature", webhookSignature);
        if (!timestamp.matches("[0-9]{1,18}")) throw new WebhookVerificationException("invalid webhook-timestamp header");
        if (Math.abs(now.getEpochSecond() - Long.parseLong(timestamp)) > toleranceSeconds) {
            throw new WebhookVerificationException("webhook-timestamp too far from now");
        }
        List<byte[]> signatures = new ArrayList<>();
        for (String entry : signatureHeader.split(" ")) {
            if (entry.startsWith("v1,")) signatures.add(entry.substring(3).getBytes(StandardCharsets.US_ASCII));
        }
        byte[] signed = signedContent(id, timestamp, body);
        for (byte[] key : keys) {
            byte[] expected = Base64.getEncoder().encode(hmac(key, signed)); // ASCII of the base64 text
            boolean match = false;
            for (byte[] signature : signatures) match |= MessageDigest.isEqual(signature, expected);
            if (match) return eventOf(id, body);
        }
        throw new WebhookVerificationException("no matching signature");
    }

    /** An event's ISO 8601 time ({@code 2027-01-15T07:59:58.000Z}); null when it has none that reads. */
    private static Instant instant(String text) {
        if (text == null) return null;
        try {
            return java.time.OffsetDateTime.parse(text).toInstant();
        } catch (java.time.format.DateTimeParseException e) {
            return null;
        }
    }

    private static WebhookEvent eventOf(String id, byte[] body) throws WebhookVerificationException {
        JsonNode event = Json.parse(body);
        if (event == null || !event.isObject()) throw new WebhookVerificationException("the body is no JSON object");
        if (!id.equals(Json.text(event, "id"))) throw new WebhookVerificationException("webhook-id differs from the event id");
        JsonNode scope = event.get("scope");
        JsonNode data = event.get("data");
        return new WebhookEvent(id, Json.text(event, "type"), instant(Json.text(event, "timestamp")),
                scope == null ? Json.MAPPER.nullNode() : scope, data == null ? Json.MAPPER.nullNode() : data,
                Json.text(event, "requestId"), event);
    }

    private static byte[] signedContent(String id, String timestamp, byte[] body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(body.length + 64);
        out.writeBytes((id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8));
        out.writeBytes(body);
        return out.toByteArray();
    }

    private static byte[] hmac(byte[] key, byte[] content) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(content);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is missing from this JDK", e);
        }
    }

    private static String required(String name, String value) throws WebhookVerificationException {
        if (value == null || value.isEmpty()) throw new WebhookVerificationException("missing " + name + " header");
        return value;
    }

    private static String header(Map<String, ?> headers, String name) {
        Object value = headers.get(name);
        if (value == null) {
            for (Map.Entry<String, ?> entry : headers.entrySet()) {
                if (entry.getKey() != null && entry.getKey().equalsIgnoreCase(name)) {
                    value = entry.getValue();
                    break;
                }
            }
        }
        if (value instanceof Collection<?> values) value = values.isEmpty() ? null : values.iterator().next();
        if (value instanceof String[] values) value = values.length == 0 ? null : values[0];
        return value == null ? null : value.toString();
    }
}
