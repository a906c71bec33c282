package dev.keyward;

import java.time.Duration;
import java.util.Optional;

/**
 * Keyward answered and refused: a business failure (HTTP 299, {@code code} such as {@code "90005"}),
 * an unknown path, the rate limit ({@code "429"}), or an answer that was no Keyward envelope (its HTTP
 * status as the code). {@link #getMessage()} is the server's message, {@link #serverCause()} its
 * {@code cause}.
 *
 * <p>A call that never got an answer throws {@link KeywardNetworkException} instead, so a refusal
 * (do not run) is never mistaken for an outage (try again later).
 */
public class KeywardException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** No such lease: checked in, another machine's or another application's. */
    public static final String NO_SUCH_LEASE = "90008";
    /** The lease was revoked: the license was withdrawn, disabled or ended. */
    public static final String LEASE_REVOKED = "90009";
    /** The lease expired: its heartbeats stopped. */
    public static final String LEASE_EXPIRED = "90010";
    /** The app token was refused (stale or invalid). */
    public static final String APP_TOKEN_INVALID = "60000";

    private final String code;
    private final String serverCause;
    private final int httpStatus;
    private final String requestId;
    private final Duration retryAfter;

    public KeywardException(String code, String message, String serverCause, int httpStatus, String requestId) {
        this(code, message, serverCause, httpStatus, requestId, null);
    }

    /** With the server's {@code Retry-After} (HTTP 429, 503), or null when it gave none. */
    public KeywardException(String code, String message, String serverCause, int httpStatus, String requestId,
            Duration retryAfter) {
        super(message);
        this.code = code;
        this.serverCause = serverCause == null ? "" : serverCause;
        this.httpStatus = httpStatus;
        this.requestId = requestId;
        this.retryAfter = retryAfter;
    }

    /** Keyward's code, as the server sends it: digits in a string ({@code "90005"}). */
    public String code() {
        return code;
    }

    /** The server's {@code cause}: what exactly was wrong (may be empty). */
    public String serverCause() {
        return serverCause;
    }

    /** The HTTP status of the answer: 299 for a business failure. */
    public int httpStatus() {
        return httpStatus;
    }

    /** The server's request id ({@code x-request-id}), the id its logs and audit rows carry. */
    public Optional<String> requestId() {
        return Optional.ofNullable(requestId);
    }

    /**
     * How long the server asked to wait before trying again ({@code Retry-After} of a 429 or 503);
     * the session already retried as its {@link RetryPolicy} allows before throwing.
     */
    public Optional<Duration> retryAfter() {
        return Optional.ofNullable(retryAfter);
    }

    /**
     * Whether the lease is gone for good ({@code 90008}, {@code 90009}, {@code 90010}): the software
     * must stop using it, and check out again if it may.
     */
    public boolean endsLease() {
        return NO_SUCH_LEASE.equals(code) || LEASE_REVOKED.equals(code) || LEASE_EXPIRED.equals(code);
    }

    @Override
    public String toString() {
        String cause = serverCause.isEmpty() ? "" : " (" + serverCause + ")";
        return getClass().getName() + ": " + code + " " + getMessage() + cause;
    }
}
