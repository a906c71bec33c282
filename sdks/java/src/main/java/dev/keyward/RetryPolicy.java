package dev.keyward;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

/**
 * When a runtime call (check-out, heartbeat, consume, check-in) is sent again: when no answer came
 * (the connection was refused, reset or closed, or the request timed out before an answer) and when
 * the server answered HTTP 429 (rate limited) or 503 (overloaded). A refusal is never sent again: an
 * envelope with a business code (HTTP 299), any other 4xx, a 500. Each attempt carries a fresh
 * {@code g_nonce}; a consume keeps one {@code Idempotency-Key} across its attempts, so the server
 * counts it once however many of them reached it.
 *
 * <p>Retry n waits a random time between 0 and {@code initialBackoff·2ⁿ⁻¹}, at most {@code
 * maxBackoff} ("full jitter": a fleet that failed together does not come back together), or the
 * server's {@code Retry-After} when longer, cut to {@code maxRetryAfter}. No retry is made whose wait
 * would end more than {@code maxElapsed} after the call began; the last failure is thrown.
 *
 * <pre>{@code
 * KeywardSession.builder()...
 *     .retryPolicy(RetryPolicy.builder().maxAttempts(6).maxElapsed(Duration.ofMinutes(2)).build())
 * }</pre>
 */
public final class RetryPolicy {
    private static final RetryPolicy DEFAULTS = builder().build();
    private static final RetryPolicy NONE = builder().maxAttempts(1).build();

    private final int maxAttempts;
    private final Duration initialBackoff;
    private final Duration maxBackoff;
    private final Duration maxRetryAfter;
    private final Duration maxElapsed;

    private RetryPolicy(Builder builder) {
        this.maxAttempts = builder.maxAttempts;
        this.initialBackoff = builder.initialBackoff;
        this.maxBackoff = builder.maxBackoff;
        this.maxRetryAfter = builder.maxRetryAfter;
        this.maxElapsed = builder.maxElapsed;
    }

    /** Four attempts within a minute: backoff from 500 ms up to 8 s, Retry-After up to 30 s. */
    public static RetryPolicy defaults() {
        return DEFAULTS;
    }

    /** Every call sent once. */
    public static RetryPolicy none() {
        return NONE;
    }

    public static Builder builder() {
        return new Builder();
    }

    public int maxAttempts() {
        return maxAttempts;
    }

    public Duration initialBackoff() {
        return initialBackoff;
    }

    public Duration maxBackoff() {
        return maxBackoff;
    }

    public Duration maxRetryAfter() {
        return maxRetryAfter;
    }

    public Duration maxElapsed() {
        return maxElapsed;
    }

    /** The pause before retry number {@code retry} (1 for the first), given the server's Retry-After. */
    Duration waitBefore(int retry, Duration retryAfter) {
        long ceiling = maxBackoff.toMillis();
        if (retry - 1 < 62) {
            long grown = initialBackoff.toMillis() << Math.min(retry - 1, 30);
            if (grown >= 0 && grown < ceiling) ceiling = grown;
        }
        Duration wait = Duration.ofMillis(ThreadLocalRandom.current().nextLong(ceiling + 1));
        if (retryAfter != null) {
            Duration asked = retryAfter.compareTo(maxRetryAfter) > 0 ? maxRetryAfter : retryAfter;
            if (asked.compareTo(wait) > 0) wait = asked;
        }
        return wait;
    }

    @Override
    public String toString() {
        return "RetryPolicy[maxAttempts=" + maxAttempts + ", initialBackoff=" + initialBackoff + ", maxBackoff="
                + maxBackoff + ", maxRetryAfter=" + maxRetryAfter + ", maxElapsed=" + maxElapsed + "]";
    }

    public static final class Builder {
        private int maxAttempts = 4;
        private Duration initialBackoff = Duration.ofMillis(500);
        private Duration maxBackoff = Duration.ofSeconds(8);
        private Duration maxRetryAfter = Duration.ofSeconds(30);
        private Duration maxElapsed = Duration.ofMinutes(1);

        private Builder() {}

        /** Attempts in all, the first included (4 unless set); 1 sends each call once. */
        public Builder maxAttempts(int maxAttempts) {
            if (maxAttempts < 1) throw new IllegalArgumentException("maxAttempts must be at least 1");
            this.maxAttempts = maxAttempts;
            return this;
        }

        /** The first retry's backoff ceiling, doubled for each retry after (500 ms unless set). */
        public Builder initialBackoff(Duration initialBackoff) {
            this.initialBackoff = nonNegative(initialBackoff, "initialBackoff");
            return this;
        }

        /** The backoff's ceiling never grows past this (8 s unless set). */
        public Builder maxBackoff(Duration maxBackoff) {
            this.maxBackoff = nonNegative(maxBackoff, "maxBackoff");
            return this;
        }

        /** A longer Retry-After is cut to this (30 s unless set). */
        public Builder maxRetryAfter(Duration maxRetryAfter) {
            this.maxRetryAfter = nonNegative(maxRetryAfter, "maxRetryAfter");
            return this;
        }

        /** No retry whose wait would end later than this after the call began (1 min unless set). */
        public Builder maxElapsed(Duration maxElapsed) {
            this.maxElapsed = nonNegative(maxElapsed, "maxElapsed");
            return this;
        }

        public RetryPolicy build() {
            return new RetryPolicy(this);
        }

        private static Duration nonNegative(Duration value, String name) {
            Objects.requireNonNull(value, name);
            if (value.isNegative()) throw new IllegalArgumentException(name + " must not be negative");
            return value;
        }
    }
}
