package dev.keyward;

import java.time.Duration;

/**
 * The token endpoint refused the application's credentials: an RFC 6749 error such as
 * {@code invalid_client} (wrong appKey or appSecret) or {@code temporarily_unavailable} (too many
 * token requests, HTTP 429). {@link #code()} is the RFC 6749 error, {@link #getMessage()} its
 * description.
 */
public class KeywardAuthException extends KeywardException {
    private static final long serialVersionUID = 1L;

    public KeywardAuthException(String error, String description, int httpStatus, String requestId) {
        super(error, description, "", httpStatus, requestId);
    }

    /** With the server's {@code Retry-After}, or null when it gave none. */
    public KeywardAuthException(String error, String description, int httpStatus, String requestId,
            Duration retryAfter) {
        super(error, description, "", httpStatus, requestId, retryAfter);
    }
}
