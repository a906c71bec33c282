package dev.keyward;

/**
 * Told what the background heartbeat of a {@link Lease} meets. Called on the session's heartbeat
 * thread: hand long work to another thread.
 */
@FunctionalInterface
public interface LeaseListener {
    /**
     * The server ended the lease: revoked ({@code 90009}, with the reason in the message), expired
     * ({@code 90010}) or gone ({@code 90008}). The heartbeat has stopped; the program must stop
     * running the product (or check out again, which answers why not).
     */
    void onEnded(Lease lease, KeywardException reason);

    /** A heartbeat went through. */
    default void onHeartbeat(Lease lease, Heartbeat heartbeat) {}

    /**
     * A heartbeat failed without ending the lease: no answer ({@link KeywardNetworkException}), the
     * rate limit, a server fault. The loop goes on at the interval; the lease lives until
     * {@link Lease#expiresAt()} without a heartbeat.
     */
    default void onHeartbeatFailed(Lease lease, RuntimeException failure) {}
}
