package dev.keyward;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/**
 * The license's limits as the lease carries them; null where the license sets none.
 *
 * @param concurrent seats
 * @param timeDurationSeconds accumulated use allowed, in seconds
 * @param amount what {@code consume} may add up to
 * @param startDate when the license starts
 * @param endDate when the license ends
 */
public record Limits(Long concurrent, Long timeDurationSeconds, Long amount, Instant startDate, Instant endDate) {
    static Limits of(JsonNode node) {
        return new Limits(
                Json.number(node, "concurrent"),
                Json.number(node, "timeDurationSeconds"),
                Json.number(node, "amount"),
                Json.epochMillis(node, "startDate"),
                Json.epochMillis(node, "endDate"));
    }
}
