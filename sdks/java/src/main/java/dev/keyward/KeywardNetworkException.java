package dev.keyward;

/**
 * No answer from Keyward: the connection was refused or dropped, the call timed out, or the thread
 * was interrupted while waiting. Unlike {@link KeywardException} this says nothing about the
 * license: retry later (a lease survives a lost heartbeat or four).
 */
public class KeywardNetworkException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public KeywardNetworkException(String message, Throwable cause) {
        super(message, cause);
    }
}
