package dev.keyward;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/**
 * A webhook Keyward sent, verified: the body's fields (docs/webhooks.md lists the types and their
 * data). Act once per {@link #id()}: a delivery may come more than once.
 *
 * @param id the event id, equal to the {@code webhook-id} header
 * @param type {@code order.completed}, {@code lease.denied}, …
 * @param timestamp when it occurred; null when the body has no time that reads
 * @param scope the channels, enterprise and app it concerns
 * @param data the event's own fields
 * @param requestId the request that caused it, or null
 * @param json the whole body
 */
public record WebhookEvent(String id, String type, Instant timestamp, JsonNode scope, JsonNode data, String requestId,
        JsonNode json) {}
