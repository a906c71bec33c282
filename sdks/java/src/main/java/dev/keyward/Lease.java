package dev.keyward;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A seat checked out for this machine. It lives while heartbeats reach the server
 * ({@link #startHeartbeat}), and {@link #close()} checks it in, so try-with-resources returns the
 * seat when the program is done:
 *
 * <pre>{@code
 * try (Lease lease = keyward.checkOut(assetNum, "P-MODELER", machineId)) {
 *     lease.startHeartbeat((ended, why) -> stopWorking(why.getMessage()));
 *     lease.consume(1); // a metered feature
 * }
 * }</pre>
 *
 * <p>Thread-safe. Every call that the server answers with {@code 90008}, {@code 90009} or
 * {@code 90010} ends the lease ({@link #state()} {@link State#ENDED}) and stops its heartbeat.
 */
public final class Lease implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Lease.class.getName());
    private static final SecureRandom KEYS = new SecureRandom();

    /** Where a lease is in its life. */
    public enum State {
        /** Checked out and, as far as this program knows, alive. */
        ACTIVE,
        /** Checked in by this program. */
        CHECKED_IN,
        /** Ended by the server: revoked, expired or unknown to it. */
        ENDED
    }

    private final KeywardSession session;
    private final String fingerprint;
    private final String leaseId;
    private final String status;
    private final String assetNum;
    private final Product product;
    private final Limits limits;
    private final OfflineLease offlineLease;
    private volatile Instant expiresAt;
    private volatile Duration heartbeatInterval;
    private volatile State state = State.ACTIVE;
    private volatile KeywardException endedBy;

    private final Object loopLock = new Object();
    private boolean looping;
    private ScheduledFuture<?> nextBeat;
    private LeaseListener listener;
    private final AtomicInteger heartbeatCount = new AtomicInteger();

    Lease(KeywardSession session, String fingerprint, JsonNode data) {
        this.session = session;
        this.fingerprint = fingerprint;
        this.leaseId = Json.text(data, "leaseId");
        if (leaseId == null) throw new KeywardException("200", "the check-out answered no leaseId", "", 200, null);
        this.status = Json.text(data, "status");
        this.assetNum = Json.text(data, "assetNum");
        this.product = Product.of(data.get("product"));
        this.limits = Limits.of(data.get("limits"));
        String token = Json.text(data, "offlineLease");
        this.offlineLease = token == null ? null : new OfflineLease(token);
        this.expiresAt = Json.epochMillis(data, "expiresAt");
        this.heartbeatInterval = Duration.ofSeconds(Json.number(data, "heartbeatIntervalSeconds", 60));
    }

    public String leaseId() {
        return leaseId;
    }

    /** The machine the lease was checked out for. */
    public String fingerprint() {
        return fingerprint;
    }

    /** {@code granted} (a new seat) or {@code resumed} (this holder and machine's live lease). */
    public String status() {
        return status;
    }

    public boolean resumed() {
        return "resumed".equals(status);
    }

    /** The asset whose product the lease runs. */
    public String assetNum() {
        return assetNum;
    }

    public Product product() {
        return product;
    }

    public Limits limits() {
        return limits;
    }

    /**
     * The signed lease for running offline, when the check-out asked for offline days: verify it with
     * {@link OfflineLease#verify} and save it beside the JWKS.
     */
    public Optional<OfflineLease> offlineLease() {
        return Optional.ofNullable(offlineLease);
    }

    /** The lease lives until then without another heartbeat. */
    public Instant expiresAt() {
        return expiresAt;
    }

    /** How often the server asks for a heartbeat (it may change with each answer). */
    public Duration heartbeatInterval() {
        return heartbeatInterval;
    }

    public State state() {
        return state;
    }

    /** The server's answer that ended the lease, when it has ended. */
    public Optional<KeywardException> endedBy() {
        return Optional.ofNullable(endedBy);
    }

    /** Heartbeats the background loop has completed. */
    public int heartbeatCount() {
        return heartbeatCount.get();
    }

    /**
     * One heartbeat now: extends the lease. Throws {@link KeywardException} {@code 90009} when the
     * license was withdrawn (the message says why), {@code 90010} when the lease expired, and
     * {@code 90008} when the server no longer knows it; the lease has then ended.
     */
    public Heartbeat heartbeat() {
        JsonNode data = call("heartbeat", fingerprintBody());
        Duration interval = Duration.ofSeconds(Json.number(data, "heartbeatIntervalSeconds", heartbeatInterval.getSeconds()));
        Instant expires = Json.epochMillis(data, "expiresAt");
        if (expires != null) expiresAt = expires;
        if (!interval.isZero() && !interval.isNegative()) heartbeatInterval = interval;
        return new Heartbeat(leaseId, expiresAt, heartbeatInterval, Json.number(data, "usedSeconds", 0));
    }

    /**
     * Adds {@code amount} (1 – 10⁹) to the product's consumption; refused with {@code 90007}, and
     * nothing added, past the license's amount. Counted once: the call carries a new random {@code
     * Idempotency-Key}, the same on each of its retries, so an attempt whose answer was lost is
     * answered, not counted, when sent again.
     */
    public Consumption consume(long amount) {
        return consume(amount, newIdempotencyKey());
    }

    /**
     * {@link #consume(long)} with the caller's {@code Idempotency-Key}: keep a consume's key to send
     * it again after a {@link KeywardNetworkException} (from another process, say) and have the
     * server count it once. The server keeps a key 24 hours; the same key with another lease or
     * amount is refused ({@code 90000}).
     *
     * @param idempotencyKey 1–255 printable ASCII characters without spaces
     */
    public Consumption consume(long amount, String idempotencyKey) {
        if (amount < 1 || amount > 1_000_000_000L) throw new IllegalArgumentException("amount must be 1 to 10^9");
        Objects.requireNonNull(idempotencyKey, "idempotencyKey");
        if (idempotencyKey.isEmpty() || idempotencyKey.length() > 255
                || !idempotencyKey.chars().allMatch(c -> c >= 0x21 && c <= 0x7e)) {
            throw new IllegalArgumentException("an idempotency key is 1–255 printable ASCII characters without spaces");
        }
        ObjectNode body = fingerprintBody();
        body.put("amount", amount);
        JsonNode data = call("consume", body, idempotencyKey);
        return new Consumption(Json.number(data, "consumed", 0), Json.number(data, "limit"), Json.number(data, "remaining"));
    }

    /**
     * Ends the lease and charges its use; stops the heartbeat first. An offline lease keeps its seat
     * until its expiry ({@link CheckIn#seatFreeAt()}) unless the application allows early return.
     */
    public CheckIn checkIn() {
        stopHeartbeat();
        JsonNode data = call("check-in", fingerprintBody());
        state = State.CHECKED_IN;
        session.forget(this);
        return new CheckIn(Json.number(data, "usedSeconds", 0), Json.epochMillis(data, "seatFreeAt"));
    }

    /** Starts the background heartbeat at the server's interval, telling nobody when the lease ends. */
    public void startHeartbeat() {
        startHeartbeat((lease, reason) -> {});
    }

    /**
     * Starts the background heartbeat: one every {@link #heartbeatInterval()} (the next one interval
     * after the last one ended), each on a daemon thread of the session's, the first one interval
     * from now. A beat that hangs (up to the request timeout, and its retries) delays this lease's
     * next beat, not another lease's. It stops itself when the server ends the lease and
     * tells {@code listener}; failures that do not end the lease are retried at the next interval.
     */
    public void startHeartbeat(LeaseListener listener) {
        if (listener == null) throw new NullPointerException("listener");
        synchronized (loopLock) {
            if (state != State.ACTIVE) throw new IllegalStateException("the lease is " + state.name().toLowerCase());
            if (looping) throw new IllegalStateException("the heartbeat is already running");
            this.listener = listener;
            looping = true;
            scheduleNext();
        }
    }

    /** Stops the background heartbeat; a heartbeat in flight finishes. Nothing happens when none runs. */
    public void stopHeartbeat() {
        synchronized (loopLock) {
            looping = false;
            if (nextBeat != null) nextBeat.cancel(false);
            nextBeat = null;
        }
    }

    public boolean isHeartbeating() {
        synchronized (loopLock) {
            return looping;
        }
    }

    /**
     * Stops the heartbeat and checks the lease in, unless it was checked in or the server ended it
     * already. A {@code 90008} answer (the server ended it meanwhile) is no error here; no answer at
     * all is thrown as {@link KeywardNetworkException} (the seat is then free when the lease expires).
     */
    @Override
    public void close() {
        stopHeartbeat();
        if (state != State.ACTIVE) return;
        try {
            checkIn();
        } catch (KeywardException e) {
            if (!e.endsLease()) throw e;
        }
    }

    @Override
    public String toString() {
        return "Lease[" + leaseId + ", " + state.name().toLowerCase() + ", asset " + assetNum + "]";
    }

    // ---- internals ----

    private void scheduleNext() {
        long millis = Math.max(1, heartbeatInterval.toMillis());
        nextBeat = session.scheduleBeat(this::beat, millis);
    }

    private void beat() {
        LeaseListener told;
        synchronized (loopLock) {
            if (!looping) return;
            told = listener;
        }
        try {
            Heartbeat heartbeat = heartbeat();
            heartbeatCount.incrementAndGet();
            tell(() -> told.onHeartbeat(this, heartbeat));
        } catch (KeywardException e) {
            if (e.endsLease()) {
                tell(() -> told.onEnded(this, e));
                return;
            }
            tell(() -> told.onHeartbeatFailed(this, e));
        } catch (RuntimeException e) {
            tell(() -> told.onHeartbeatFailed(this, e));
        }
        synchronized (loopLock) {
            if (looping) {
                try {
                    scheduleNext();
                } catch (RuntimeException e) {
                    looping = false; // the session was closed meanwhile
                }
            }
        }
    }

    private void tell(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "a LeaseListener of lease " + leaseId + " threw", e);
        }
    }

    private ObjectNode fingerprintBody() {
        ObjectNode body = Json.MAPPER.createObjectNode();
        body.put("fingerprint", fingerprint);
        return body;
    }

    /** A new {@code Idempotency-Key}: 128 bits from a CSPRNG, base64url (22 characters). */
    public static String newIdempotencyKey() {
        byte[] bytes = new byte[16];
        KEYS.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    private JsonNode call(String operation, ObjectNode body) {
        return call(operation, body, null);
    }

    private JsonNode call(String operation, ObjectNode body, String idempotencyKey) {
        String path = "/runtime/v1/leases/" + URLEncoder.encode(leaseId, StandardCharsets.UTF_8).replace("+", "%20")
                + "/" + operation;
        try {
            return session.call(path, body, null, idempotencyKey);
        } catch (KeywardException e) {
            if (e.endsLease()) {
                endedBy = e;
                state = State.ENDED;
                session.forget(this);
                stopHeartbeat();
            }
            throw e;
        }
    }
}
