package dev.keyward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keyward.StubKeyward.Reply;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The retry policy of runtime calls against the stub: what is sent again (no answer, 429, 503), what
 * is not (a refusal), how long it waits (Retry-After, backoff, maxElapsed), and a consume's
 * Idempotency-Key, one per call and the same on each of its attempts.
 */
class RetryTest {
    private static final Reply BUSY = Reply.failure("503", "the server is busy, retry later", "overloaded");
    private static final Reply LIMITED = Reply.failure("429", "too many requests", "rate limit");

    private StubKeyward stub;
    /** The answers the next runtime calls get (then the stub's usual ones). */
    private final Deque<Reply> script = new ArrayDeque<>();
    /** The pauses the session asked for, not taken. */
    private final List<Duration> waits = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        stub = new StubKeyward();
        stub.runtime = (request, token) -> {
            synchronized (script) {
                if (!request.path().endsWith("/leases") && !script.isEmpty()) return script.poll();
            }
            if (request.path().endsWith("/leases")) return Reply.ok(StubKeyward.LEASE);
            if (request.path().endsWith("/consume")) {
                return Reply.ok("{\"consumed\":" + request.json().get("amount").asLong() + ",\"limit\":100,\"remaining\":90}");
            }
            if (request.path().endsWith("/check-in")) return Reply.ok("{\"usedSeconds\":15,\"seatFreeAt\":1800000000000}");
            return Reply.ok(StubKeyward.HEARTBEAT);
        };
    }

    @AfterEach
    void stop() {
        stub.close();
    }

    private static Reply status(int status, Reply reply) {
        return new Reply(status, reply.body(), reply.requestId(), reply.headers());
    }

    private void answer(Reply... replies) {
        synchronized (script) {
            script.addAll(List.of(replies));
        }
    }

    private KeywardSession session(RetryPolicy policy) {
        return stub.session().retryPolicy(policy).sleeper(waits::add).build();
    }

    private Lease lease(KeywardSession keyward) {
        return keyward.checkOut("A-1", "P-1", "fp-this-machine");
    }

    private List<String> keys() {
        return stub.runtimeRequests("/consume").stream().map(r -> r.header("idempotency-key")).collect(Collectors.toList());
    }

    @Test
    void a503IsSentAgainWithAFreshNonceAndThenSucceeds() {
        try (KeywardSession keyward = session(RetryPolicy.defaults())) {
            Lease lease = lease(keyward);
            answer(status(503, BUSY), status(503, BUSY));
            assertEquals(60, lease.heartbeat().usedSeconds());
            List<StubKeyward.Request> sent = stub.runtimeRequests("/heartbeat");
            assertEquals(3, sent.size());
            assertEquals(3, sent.stream().map(StubKeyward.Request::nonce).distinct().count());
            assertEquals(2, waits.size());
            assertTrue(waits.get(0).compareTo(Duration.ofMillis(500)) <= 0, waits.toString());
            assertTrue(waits.get(1).compareTo(Duration.ofSeconds(1)) <= 0, waits.toString());
        }
    }

    @Test
    void retryAfterIsHonouredAndCapped() {
        RetryPolicy policy = RetryPolicy.builder().maxRetryAfter(Duration.ofSeconds(30)).maxElapsed(Duration.ofHours(1)).build();
        try (KeywardSession keyward = session(policy)) {
            Lease lease = lease(keyward);
            answer(status(429, LIMITED).with("Retry-After", "7"), status(503, BUSY).with("Retry-After", "120"));
            lease.consume(1);
            assertEquals(List.of(Duration.ofSeconds(7), Duration.ofSeconds(30)), waits);
            assertEquals(3, stub.runtimeRequests("/consume").size());
        }
    }

    @Test
    void aLostAnswerIsSentAgain() {
        try (KeywardSession keyward = session(RetryPolicy.defaults())) {
            Lease lease = lease(keyward);
            answer(Reply.DROP);
            assertEquals(15, lease.checkIn().usedSeconds());
            assertEquals(2, stub.runtimeRequests("/check-in").size());
        }
    }

    @Test
    void aRefusalIsNotSentAgain() {
        try (KeywardSession keyward = session(RetryPolicy.defaults())) {
            Lease lease = lease(keyward);
            answer(Reply.failure("90007", "the amount is consumed", "limit"));
            KeywardException refused = assertThrows(KeywardException.class, () -> lease.consume(5));
            assertEquals("90007", refused.code());
            assertEquals(1, stub.runtimeRequests("/consume").size());
            // Nor a 4xx other than 429, nor a 500.
            answer(status(400, Reply.failure("90000", "bad input", "amount")), status(500, Reply.failure("500", "fault", "r")));
            assertThrows(KeywardException.class, lease::heartbeat);
            assertThrows(KeywardException.class, lease::heartbeat);
            assertEquals(2, stub.runtimeRequests("/heartbeat").size());
            assertEquals(List.of(), waits);
        }
    }

    @Test
    void itGivesUpWithTheLastFailure() {
        try (KeywardSession keyward = session(RetryPolicy.defaults())) {
            Lease lease = lease(keyward);
            Reply busy = status(503, BUSY).with("Retry-After", "1");
            answer(busy, busy, busy, busy, busy);
            KeywardException failed = assertThrows(KeywardException.class, lease::heartbeat);
            assertEquals("503", failed.code());
            assertEquals(Duration.ofSeconds(1), failed.retryAfter().orElseThrow());
            assertEquals(4, stub.runtimeRequests("/heartbeat").size());
            assertEquals(3, waits.size());
        }
        // When the wait would end past maxElapsed.
        waits.clear();
        synchronized (script) {
            script.clear();
        }
        try (KeywardSession keyward = session(RetryPolicy.builder().maxElapsed(Duration.ofSeconds(10)).build())) {
            Lease lease = lease(keyward);
            answer(status(429, LIMITED).with("Retry-After", "20"));
            assertEquals("429", assertThrows(KeywardException.class, lease::heartbeat).code());
            assertEquals(List.of(), waits);
        }
        // RetryPolicy.none().
        try (KeywardSession keyward = session(RetryPolicy.none())) {
            Lease lease = lease(keyward);
            // (The sessions above checked their leases in when they closed.)
            int before = stub.runtimeRequests("/check-in").size();
            answer(Reply.DROP);
            assertThrows(KeywardNetworkException.class, lease::checkIn);
            assertEquals(before + 1, stub.runtimeRequests("/check-in").size());
        }
    }

    @Test
    void aConsumeKeepsItsKeyAcrossAttemptsAndGetsANewOnePerCall() {
        try (KeywardSession keyward = session(RetryPolicy.defaults())) {
            Lease lease = lease(keyward);
            answer(Reply.DROP, status(503, BUSY));
            lease.consume(2);
            lease.consume(2);
            List<String> keys = keys();
            assertEquals(4, keys.size());
            assertEquals(keys.get(0), keys.get(1));
            assertEquals(keys.get(1), keys.get(2));
            assertNotEquals(keys.get(2), keys.get(3));
            assertTrue(keys.get(0).matches("[A-Za-z0-9_-]{22}"), keys.get(0));
            assertEquals(4, stub.runtimeRequests("/consume").stream().map(StubKeyward.Request::nonce).distinct().count());
            lease.heartbeat();
            assertEquals(null, stub.runtimeRequests("/heartbeat").get(0).header("idempotency-key"));
        }
    }

    @Test
    void aConsumeTakesTheCallersKey() {
        try (KeywardSession keyward = session(RetryPolicy.defaults())) {
            Lease lease = lease(keyward);
            lease.consume(1, "job-42/step-3");
            assertEquals(List.of("job-42/step-3"), keys());
            for (String bad : List.of("", "with space", "x".repeat(256), "é")) {
                assertThrows(IllegalArgumentException.class, () -> lease.consume(1, bad));
            }
            assertEquals(1, keys().size());
        }
    }

    @Test
    void theBackoffIsJitteredDoublingAndCapped() {
        RetryPolicy policy = RetryPolicy.builder().initialBackoff(Duration.ofMillis(100)).maxBackoff(Duration.ofMillis(300)).build();
        for (int i = 0; i < 200; i++) {
            assertTrue(policy.waitBefore(1, null).toMillis() <= 100);
            assertTrue(policy.waitBefore(2, null).toMillis() <= 200);
            assertTrue(policy.waitBefore(40, null).toMillis() <= 300);
        }
        assertEquals(Duration.ofSeconds(5), policy.waitBefore(1, Duration.ofSeconds(5)));
    }
}
