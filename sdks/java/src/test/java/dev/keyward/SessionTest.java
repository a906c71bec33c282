package dev.keyward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.keyward.StubKeyward.Reply;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class SessionTest {
    private StubKeyward stub;

    @BeforeEach
    void start() throws Exception {
        stub = new StubKeyward();
    }

    @AfterEach
    void stop() {
        stub.close();
    }

    /** A clock the test moves. */
    static final class MovableClock extends Clock {
        final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2027-01-15T08:00:00Z"));

        void advance(Duration by) {
            now.updateAndGet(t -> t.plus(by));
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now.get();
        }
    }

    private static CheckOutRequest request() {
        return CheckOutRequest.builder().assetNum("A-1").crmProductId("P-1").fingerprint("fp-machine-0001").build();
    }

    @Test
    void oneTokenServesEveryCallAndEachCallHasANonceOfItsOwn() throws Exception {
        try (KeywardSession keyward = stub.session().build()) {
            Lease lease = keyward.checkOut(request());
            for (int i = 0; i < 3; i++) lease.heartbeat();
        }
        assertEquals(1, stub.tokenRequests.size());
        StubKeyward.Request token = stub.tokenRequests.get(0);
        assertEquals("POST", token.method());
        assertEquals("Basic " + Base64.getEncoder().encodeToString("kw_app:s3cret".getBytes(StandardCharsets.UTF_8)),
                token.header("authorization"));
        assertEquals("application/x-www-form-urlencoded", token.header("content-type"));
        assertEquals("grant_type=client_credentials", token.body());
        // The check-out, three heartbeats, and the check-in of closing the session.
        assertEquals(5, stub.runtimeRequests.size());
        assertEquals(1, stub.runtimeRequests("/check-in").size());
        Set<String> nonces = new HashSet<>();
        for (StubKeyward.Request call : stub.runtimeRequests) {
            assertEquals("Bearer t1", call.header("authorization"));
            assertTrue(call.nonce().matches("[A-Za-z0-9_-]{8,64}"), call.nonce());
            nonces.add(call.nonce());
        }
        assertEquals(5, nonces.size(), "a nonce is used once");
    }

    @Test
    void aScopeIsAskedForWhenSet() {
        try (KeywardSession keyward = stub.session().scope("auth_runtime").build()) {
            keyward.appToken();
        }
        assertEquals("grant_type=client_credentials&scope=auth_runtime", stub.tokenRequests.get(0).body());
    }

    @Test
    void aStaleTokenIsReplacedAndTheCallRetriedOnceWithANewNonce() {
        try (KeywardSession keyward = stub.session().build()) {
            Lease lease = keyward.checkOut(request());
            // The server forgets t1 (revoked, restarted): heartbeats with it answer 60000.
            stub.runtime = (request, token) -> "t1".equals(token)
                    ? Reply.failure("60000", "application token check failed", "token unknown")
                    : Reply.ok(StubKeyward.HEARTBEAT);
            Heartbeat heartbeat = lease.heartbeat();
            assertEquals(Duration.ofSeconds(1), heartbeat.heartbeatInterval());
            assertEquals(60, heartbeat.usedSeconds());
        }
        assertEquals(2, stub.tokenRequests.size());
        List<StubKeyward.Request> beats = stub.runtimeRequests("/heartbeat");
        assertEquals(2, beats.size());
        assertEquals("Bearer t1", beats.get(0).header("authorization"));
        assertEquals("Bearer t2", beats.get(1).header("authorization"));
        assertNotEquals(beats.get(0).nonce(), beats.get(1).nonce());
        assertEquals(beats.get(0).body(), beats.get(1).body());
    }

    @Test
    void theRetryIsOnlyOnce() {
        try (KeywardSession keyward = stub.session().build()) {
            Lease lease = keyward.checkOut(request());
            stub.runtime = (request, token) -> Reply.failure("60000", "application token check failed", "no");
            KeywardException e = assertThrows(KeywardException.class, lease::heartbeat);
            assertEquals("60000", e.code());
            lease.stopHeartbeat();
            stub.runtime = (request, token) -> Reply.ok(StubKeyward.HEARTBEAT); // for the check-in on close
        }
        assertEquals(2, stub.runtimeRequests("/heartbeat").size());
        assertEquals(2, stub.tokenRequests.size());
    }

    @Test
    void aTokenJustIssuedAndRefusedIsNotAskedForAgain() {
        stub.runtime = (request, token) -> Reply.failure("60000", "application token check failed", "no");
        try (KeywardSession keyward = stub.session().build()) {
            assertEquals("60000", assertThrows(KeywardException.class, () -> keyward.checkOut(request())).code());
        }
        assertEquals(1, stub.tokenRequests.size());
        assertEquals(1, stub.runtimeRequests.size());
    }

    @Test
    void theTokenIsRenewedBeforeItExpires() {
        MovableClock clock = new MovableClock();
        stub.expiresIn = 120; // a tenth of it, 12 s, is the margin
        try (KeywardSession keyward = stub.session().clock(clock).build()) {
            assertEquals("t1", keyward.appToken());
            clock.advance(Duration.ofMillis(107_999));
            assertEquals("t1", keyward.appToken());
            clock.advance(Duration.ofMillis(1));
            assertEquals("t2", keyward.appToken());
            stub.expiresIn = 7200; // a minute is the margin
            clock.advance(Duration.ofSeconds(1000));
            assertEquals("t3", keyward.appToken());
            clock.advance(Duration.ofSeconds(7139));
            assertEquals("t3", keyward.appToken());
            clock.advance(Duration.ofSeconds(1));
            assertEquals("t4", keyward.appToken());
        }
    }

    @Test
    void aRefusalCarriesKeywardsCodeMessageCauseAndStatus() {
        stub.runtime = (request, token) -> Reply.failure("90005", "all 1 seats of the product are in use (1 in use)",
                "P-1 on A-1");
        try (KeywardSession keyward = stub.session().build()) {
            KeywardException e = assertThrows(KeywardException.class, () -> keyward.checkOut(request()));
            assertEquals("90005", e.code());
            assertEquals("all 1 seats of the product are in use (1 in use)", e.getMessage());
            assertEquals("P-1 on A-1", e.serverCause());
            assertEquals(299, e.httpStatus());
            assertEquals("req-90005", e.requestId().orElseThrow());
            assertFalse(e.endsLease());
        }
    }

    @Test
    void anAnswerThatIsNoEnvelopeIsARefusalWithItsStatus() {
        stub.runtime = (request, token) -> new Reply(502, "<html>bad gateway</html>", null);
        try (KeywardSession keyward = stub.session().build()) {
            KeywardException e = assertThrows(KeywardException.class, () -> keyward.checkOut(request()));
            assertEquals("502", e.code());
            assertEquals(502, e.httpStatus());
        }
    }

    @Test
    void noAnswerIsANetworkFailureNotARefusal() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        try (KeywardSession keyward = KeywardSession.builder().baseUrl("http://127.0.0.1:" + port)
                .appKey("kw_app").appSecret("s3cret").connectTimeout(Duration.ofSeconds(2)).build()) {
            RuntimeException e = assertThrows(RuntimeException.class, () -> keyward.checkOut(request()));
            assertTrue(e instanceof KeywardNetworkException, e.toString());
            assertFalse(e instanceof KeywardException);
        }
    }

    @Test
    void refusedCredentialsAreAnAuthException() {
        stub.tokenRefusal = new Reply(401, "{\"error\":\"invalid_client\",\"error_description\":\"client authentication failed\"}", null);
        try (KeywardSession keyward = stub.session().build()) {
            KeywardAuthException e = assertThrows(KeywardAuthException.class, () -> keyward.checkOut(request()));
            assertEquals("invalid_client", e.code());
            assertEquals("client authentication failed", e.getMessage());
            assertEquals(401, e.httpStatus());
        }
        assertTrue(stub.runtimeRequests.isEmpty());
    }

    @Test
    void aCheckOutSendsItsFieldsAndAnswersTheLease() {
        String offline = StubKeyward.LEASE.replace("\"offlineLease\":null", "\"offlineLease\":\"h.p.s\"")
                .replace("granted", "resumed");
        stub.runtime = (request, token) -> Reply.ok(request.path().endsWith("/leases") ? offline : StubKeyward.HEARTBEAT);
        try (KeywardSession keyward = stub.session().build()) {
            Lease lease = keyward.checkOut(CheckOutRequest.builder().userToken("member-token").assetNum("A-1")
                    .productUri("gms-1").fingerprint("fp-machine-0001").offlineDays(3).build());
            assertEquals("L-1", lease.leaseId());
            assertTrue(lease.resumed());
            assertEquals("A-1", lease.assetNum());
            assertEquals(Instant.ofEpochMilli(1_800_000_300_000L), lease.expiresAt());
            assertEquals(Duration.ofSeconds(1), lease.heartbeatInterval());
            assertEquals(new Product("P-1", "gms-1", "Modeler"), lease.product());
            assertEquals(1L, lease.limits().concurrent());
            assertNull(lease.limits().timeDurationSeconds());
            assertEquals("h.p.s", lease.offlineLease().orElseThrow().token());
            lease.heartbeat();
            assertEquals(Instant.ofEpochMilli(1_800_000_360_000L), lease.expiresAt());
        }
        StubKeyward.Request checkOut = stub.runtimeRequests.get(0);
        assertEquals("/runtime/v1/leases", checkOut.path());
        assertEquals("application/json", checkOut.header("content-type"));
        assertEquals("member-token", checkOut.header("usertoken"));
        JsonNode body = checkOut.json();
        assertEquals("fp-machine-0001", body.get("fingerprint").asText());
        assertEquals("gms-1", body.get("productUri").asText());
        assertEquals("A-1", body.get("assetNum").asText());
        assertEquals(3, body.get("offlineDays").asInt());
        assertFalse(body.has("crmProductId"));
        StubKeyward.Request heartbeat = stub.runtimeRequests.get(1);
        assertEquals("/runtime/v1/leases/L-1/heartbeat", heartbeat.path());
        assertNull(heartbeat.header("usertoken"), "the member's token goes with the check-out only");
        assertEquals("{\"fingerprint\":\"fp-machine-0001\"}", heartbeat.body());
    }

    @Test
    void anOnlineCheckOutSendsNoOfflineDays() {
        try (KeywardSession keyward = stub.session().build()) {
            keyward.checkOut("A-1", "P-1", "fp-machine-0001");
        }
        JsonNode body = stub.runtimeRequests.get(0).json();
        assertFalse(body.has("offlineDays"));
        assertEquals("P-1", body.get("crmProductId").asText());
        assertThrows(IllegalStateException.class,
                () -> CheckOutRequest.builder().assetNum("A-1").fingerprint("fp-machine-0001").build());
        assertThrows(IllegalStateException.class,
                () -> CheckOutRequest.builder().crmProductId("P-1").fingerprint("fp-machine-0001").build());
    }

    @Test
    void consumeAnswersWhatIsLeft() {
        stub.runtime = (request, token) -> Reply.ok(request.path().endsWith("/consume")
                ? "{\"consumed\":12,\"limit\":100,\"remaining\":88}" : StubKeyward.LEASE);
        try (KeywardSession keyward = stub.session().build()) {
            Lease lease = keyward.checkOut(request());
            assertEquals(new Consumption(12, 100L, 88L), lease.consume(2));
            assertThrows(IllegalArgumentException.class, () -> lease.consume(0));
        }
        assertEquals(2, stub.runtimeRequests("/consume").get(0).json().get("amount").asInt());
    }

    @Test
    void tryWithResourcesChecksTheLeaseInOnce() {
        stub.runtime = (request, token) -> Reply.ok(request.path().endsWith("/check-in")
                ? "{\"usedSeconds\":3,\"seatFreeAt\":1800000000000}"
                : request.path().endsWith("/leases") ? StubKeyward.LEASE : StubKeyward.HEARTBEAT);
        try (KeywardSession keyward = stub.session().build()) {
            Lease kept;
            try (Lease lease = keyward.checkOut(request())) {
                lease.startHeartbeat();
                assertTrue(lease.isHeartbeating());
                kept = lease;
            }
            assertEquals(Lease.State.CHECKED_IN, kept.state());
            assertFalse(kept.isHeartbeating());
            kept.close();
        }
        List<StubKeyward.Request> checkIns = stub.runtimeRequests("/check-in");
        assertEquals(1, checkIns.size());
        assertEquals("/runtime/v1/leases/L-1/check-in", checkIns.get(0).path());
        assertEquals("fp-machine-0001", checkIns.get(0).json().get("fingerprint").asText());
    }

    @Test
    void theBackgroundHeartbeatRunsAtTheServersIntervalAndStopsWhenRevoked() throws Exception {
        AtomicInteger beats = new AtomicInteger();
        stub.runtime = (request, token) -> {
            if (request.path().endsWith("/leases")) return Reply.ok(StubKeyward.LEASE);
            if (request.path().endsWith("/check-in")) return Reply.failure("90008", "no such lease", "L-1");
            return beats.incrementAndGet() <= 2 ? Reply.ok(StubKeyward.HEARTBEAT)
                    : Reply.failure("90009", "the lease was revoked: the asset was disabled", "A-1");
        };
        CountDownLatch ended = new CountDownLatch(1);
        AtomicReference<KeywardException> reason = new AtomicReference<>();
        List<Heartbeat> heard = new CopyOnWriteArrayList<>();
        long started = System.nanoTime();
        try (KeywardSession keyward = stub.session().build()) {
            Lease lease = keyward.checkOut(request());
            lease.startHeartbeat(new LeaseListener() {
                @Override
                public void onEnded(Lease which, KeywardException why) {
                    reason.set(why);
                    ended.countDown();
                }

                @Override
                public void onHeartbeat(Lease which, Heartbeat heartbeat) {
                    heard.add(heartbeat);
                }
            });
            assertTrue(ended.await(10, TimeUnit.SECONDS), "told of the revocation");
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertTrue(elapsedMs >= 2900, "three beats a second apart, not sooner: " + elapsedMs + " ms");
            assertEquals("90009", reason.get().code());
            assertEquals(Lease.State.ENDED, lease.state());
            assertEquals("90009", lease.endedBy().orElseThrow().code());
            assertEquals(2, lease.heartbeatCount());
            assertEquals(2, heard.size());
            assertFalse(lease.isHeartbeating());
            Thread.sleep(1500);
            assertEquals(3, stub.runtimeRequests("/heartbeat").size(), "no heartbeat after the revocation");
            lease.close();
            assertThrows(IllegalStateException.class, () -> lease.startHeartbeat());
        }
        assertTrue(stub.runtimeRequests("/check-in").isEmpty(), "an ended lease is not checked in");
    }

    @Test
    void aFailureThatDoesNotEndTheLeaseKeepsTheHeartbeatGoing() throws Exception {
        AtomicInteger beats = new AtomicInteger();
        stub.runtime = (request, token) -> {
            if (request.path().endsWith("/leases")) return Reply.ok(StubKeyward.LEASE);
            return beats.incrementAndGet() == 1 ? Reply.failure("500", "network error, retry", "req")
                    : Reply.ok(StubKeyward.HEARTBEAT);
        };
        CountDownLatch beat = new CountDownLatch(1);
        List<RuntimeException> failures = new CopyOnWriteArrayList<>();
        try (KeywardSession keyward = stub.session().build()) {
            Lease lease = keyward.checkOut(request());
            lease.startHeartbeat(new LeaseListener() {
                @Override
                public void onEnded(Lease which, KeywardException why) {}

                @Override
                public void onHeartbeat(Lease which, Heartbeat heartbeat) {
                    beat.countDown();
                }

                @Override
                public void onHeartbeatFailed(Lease which, RuntimeException failure) {
                    failures.add(failure);
                }
            });
            assertTrue(beat.await(10, TimeUnit.SECONDS));
            lease.stopHeartbeat();
            assertEquals(1, failures.size());
            assertEquals("500", ((KeywardException) failures.get(0)).code());
            assertEquals(Lease.State.ACTIVE, lease.state());
        }
    }

    @Test
    void aStoppedHeartbeatSendsNothing() throws Exception {
        try (KeywardSession keyward = stub.session().build()) {
            Lease lease = keyward.checkOut(request());
            lease.startHeartbeat();
            lease.stopHeartbeat();
            Thread.sleep(1500);
            assertEquals(0, lease.heartbeatCount());
            assertTrue(stub.runtimeRequests("/heartbeat").isEmpty());
        }
    }

    /** A lease of its own id for each check-out (L-1, L-2 …), heartbeats as {@code beat} answers. */
    private static StubKeyward.Runtime leasesNumbered(java.util.function.Function<String, Reply> beat) {
        AtomicInteger issued = new AtomicInteger();
        return (request, token) -> {
            if (request.path().endsWith("/leases")) {
                return Reply.ok(StubKeyward.LEASE.replace("\"L-1\"", "\"L-" + issued.incrementAndGet() + "\""));
            }
            String leaseId = request.path().split("/")[4];
            if (request.path().endsWith("/check-in")) return beat.apply(leaseId + "/check-in");
            return beat.apply(leaseId);
        };
    }

    @Test
    void aStuckHeartbeatDelaysNoOtherLease() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger stuckBeats = new AtomicInteger();
        stub.runtime = leasesNumbered(leaseId -> {
            if (leaseId.equals("L-1")) {
                stuckBeats.incrementAndGet();
                try {
                    release.await(20, TimeUnit.SECONDS); // no answer until the test is done
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return leaseId.endsWith("/check-in") ? Reply.ok("{\"usedSeconds\":3,\"seatFreeAt\":1800000000000}")
                    : Reply.ok(StubKeyward.HEARTBEAT);
        });
        try (KeywardSession keyward = stub.session().requestTimeout(Duration.ofSeconds(30)).build()) {
            Lease stuck = keyward.checkOut(request());
            Lease other = keyward.checkOut(request());
            CountDownLatch threeBeats = new CountDownLatch(3);
            stuck.startHeartbeat();
            other.startHeartbeat(new LeaseListener() {
                @Override
                public void onEnded(Lease which, KeywardException why) {}

                @Override
                public void onHeartbeat(Lease which, Heartbeat heartbeat) {
                    threeBeats.countDown();
                }
            });
            // A beat a second: three in well under five seconds, while L-1's first beat hangs.
            assertTrue(threeBeats.await(5, TimeUnit.SECONDS),
                    "the other lease beat " + other.heartbeatCount() + " times while L-1's call hung");
            assertEquals(1, stuckBeats.get(), "L-1 waits for its own beat's answer before the next");
            assertEquals(0, stuck.heartbeatCount());
            stuck.stopHeartbeat();
            other.stopHeartbeat();
            release.countDown();
        }
    }

    @Test
    void closingTheSessionChecksInItsOpenLeases() throws Exception {
        stub.runtime = leasesNumbered(call -> call.endsWith("/check-in")
                ? Reply.ok("{\"usedSeconds\":3,\"seatFreeAt\":1800000000000}") : Reply.ok(StubKeyward.HEARTBEAT));
        KeywardSession keyward = stub.session().build();
        Lease first = keyward.checkOut(request());
        Lease second = keyward.checkOut(request());
        Lease third = keyward.checkOut(request());
        first.startHeartbeat();
        third.checkIn();
        keyward.close();
        assertEquals(Lease.State.CHECKED_IN, first.state());
        assertEquals(Lease.State.CHECKED_IN, second.state());
        assertFalse(first.isHeartbeating());
        Set<String> checkedIn = new HashSet<>();
        for (StubKeyward.Request r : stub.runtimeRequests("/check-in")) checkedIn.add(r.path());
        assertEquals(Set.of("/runtime/v1/leases/L-1/check-in", "/runtime/v1/leases/L-2/check-in",
                "/runtime/v1/leases/L-3/check-in"), checkedIn);
        assertEquals(3, stub.runtimeRequests("/check-in").size(), "L-3, checked in already, is not again");
        keyward.close();
        assertEquals(3, stub.runtimeRequests("/check-in").size(), "closing twice checks in nothing more");
        assertThrows(IllegalStateException.class, () -> keyward.checkOut(request()));
    }

    @Test
    void aFailedCheckInOnCloseIsThrownAfterTheOthersAreMade() {
        stub.runtime = leasesNumbered(call -> call.equals("L-1/check-in") ? Reply.DROP
                : call.endsWith("/check-in") ? Reply.ok("{\"usedSeconds\":3,\"seatFreeAt\":1800000000000}")
                : Reply.ok(StubKeyward.HEARTBEAT));
        KeywardSession keyward = stub.session().retryPolicy(RetryPolicy.none()).build();
        Lease dropped = keyward.checkOut(request());
        Lease answered = keyward.checkOut(request());
        assertThrows(KeywardNetworkException.class, keyward::close);
        assertEquals(Lease.State.CHECKED_IN, answered.state());
        assertEquals(Lease.State.ACTIVE, dropped.state());
        assertThrows(IllegalStateException.class, () -> keyward.checkOut(request()));
    }

    @Test
    void aLeaseTheServerEndedIsNotCheckedInOnClose() {
        stub.runtime = leasesNumbered(call -> Reply.failure("90009", "the lease was revoked", "A-1"));
        KeywardSession keyward = stub.session().build();
        Lease lease = keyward.checkOut(request());
        assertThrows(KeywardException.class, lease::heartbeat);
        keyward.close();
        assertEquals(Lease.State.ENDED, lease.state());
        assertTrue(stub.runtimeRequests("/check-in").isEmpty());
    }

    @Test
    void aClosedSessionChecksOutNothing() {
        KeywardSession keyward = stub.session().build();
        keyward.close();
        assertThrows(IllegalStateException.class, () -> keyward.checkOut(request()));
        assertTrue(stub.runtimeRequests.isEmpty());
    }

    @Test
    void theServersKeySetIsFetchedWithoutAToken() {
        try (KeywardSession keyward = stub.session().build()) {
            assertEquals(List.of("k1"), keyward.fetchJwks().keyIds());
            stub.jwks = "{\"not\":\"a key set\"}";
            assertThrows(KeywardException.class, keyward::fetchJwks);
        }
        assertTrue(stub.tokenRequests.isEmpty());
    }
}
