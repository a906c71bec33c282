package dev.keyward;

import java.time.Duration;
import java.time.Instant;

/**
 * A heartbeat's answer.
 *
 * @param leaseId the lease
 * @param expiresAt the lease now lives until then, unless another heartbeat extends it
 * @param heartbeatInterval when the server wants the next heartbeat
 * @param usedSeconds this lease's accumulated use
 */
public record Heartbeat(String leaseId, Instant expiresAt, Duration heartbeatInterval, long usedSeconds) {}
