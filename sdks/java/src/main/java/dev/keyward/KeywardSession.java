package dev.keyward;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.http.HttpTimeoutException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLHandshakeException;

/**
 * A licensed program's connection to Keyward's license runtime: the application's token (client
 * credentials, renewed before it expires), a fresh {@code g_nonce} on every call, and one retry with
 * a new token when the server says the token is stale ({@code 60000}). Runtime calls are sent again
 * as its {@link RetryPolicy} says when no answer came or the server answered 429 or 503, never after
 * a refusal. Check-outs answer a {@link Lease}, whose heartbeats this session schedules: each beat on a
 * daemon thread of its own, so a lease whose call is stuck (a slow network, retries) delays no other.
 *
 * <pre>{@code
 * try (KeywardSession keyward = KeywardSession.builder()
 *         .baseUrl("https://keyward.example.com").appKey(appKey).appSecret(appSecret).build();
 *      Lease lease = keyward.checkOut(assetNum, "P-MODELER", machineId)) {
 *     lease.startHeartbeat((ended, why) -> stopWorking(why.getMessage()));
 *     work();
 * } // checks the lease in, then closes the session
 * }</pre>
 *
 * <p>A session is thread-safe; share one per process. Closing it checks in every lease it checked
 * out that is still open (as Python's {@code with session:} does), all at once, then stops its
 * heartbeat threads.
 */
public final class KeywardSession implements AutoCloseable {
    private static final String USER_AGENT = "keyward-java/" + Keyward.VERSION;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final URI baseUrl;
    private final String basicCredentials;
    private final String scope;
    private final HttpClient http;
    private final Duration requestTimeout;
    private final Clock clock;
    private final RetryPolicy retryPolicy;
    private final Sleeper sleeper;
    private final TokenSource tokens;
    private final Object schedulerLock = new Object();
    /** Times the heartbeats; a beat itself runs on {@link #beats}. */
    private ScheduledThreadPoolExecutor scheduler;
    /** Runs each beat (and each check-in on close) on a thread of its own, made when needed. */
    private ThreadPoolExecutor beats;
    /** Leases checked out and neither checked in nor ended: close() checks them in. */
    private final Set<Lease> open = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closing = new AtomicBoolean();
    private volatile boolean closed;

    private KeywardSession(Builder builder) {
        String base = Objects.requireNonNull(builder.baseUrl, "baseUrl").replaceAll("/+$", "");
        this.baseUrl = URI.create(base);
        if (baseUrl.getScheme() == null || baseUrl.getHost() == null) {
            throw new IllegalArgumentException("baseUrl must be an absolute http(s) URL: " + builder.baseUrl);
        }
        String appKey = Objects.requireNonNull(builder.appKey, "appKey");
        String appSecret = Objects.requireNonNull(builder.appSecret, "appSecret");
        // RFC 6749 §2.3.1: each part is form-encoded before the Basic encoding.
        String pair = URLEncoder.encode(appKey, StandardCharsets.UTF_8) + ":"
                + URLEncoder.encode(appSecret, StandardCharsets.UTF_8);
        this.basicCredentials = "Basic " + Base64.getEncoder().encodeToString(pair.getBytes(StandardCharsets.UTF_8));
        this.scope = builder.scope;
        this.requestTimeout = builder.requestTimeout;
        this.clock = builder.clock;
        this.retryPolicy = builder.retryPolicy;
        this.sleeper = builder.sleeper;
        this.http = builder.httpClient != null
                ? builder.httpClient
                : HttpClient.newBuilder()
                        .version(HttpClient.Version.HTTP_1_1)
                        .connectTimeout(builder.connectTimeout)
                        .build();
        this.tokens = new TokenSource();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Where the server answers, without a trailing slash. */
    public URI baseUrl() {
        return baseUrl;
    }

    /**
     * Checks out a lease: may this machine run the product? A refusal is a {@link KeywardException}
     * with the code ({@code 90001}–{@code 90007}, {@code 90011}); the same holder and machine again
     * while its lease lives answers that lease ({@link Lease#resumed()}).
     */
    public Lease checkOut(CheckOutRequest request) {
        ensureOpen();
        JsonNode data = call("/runtime/v1/leases", request.body(), request.userToken().orElse(null), null);
        Lease lease = new Lease(this, request.fingerprint(), data);
        open.add(lease);
        return lease;
    }

    /** Checks out a lock's lease for the product {@code crmProductId} on this machine, online only. */
    public Lease checkOut(String assetNum, String crmProductId, String fingerprint) {
        return checkOut(CheckOutRequest.builder()
                .assetNum(assetNum).crmProductId(crmProductId).fingerprint(fingerprint).build());
    }

    /**
     * The server's public keys ({@code /.well-known/jwks.json}), to verify offline leases with; save
     * them ({@link Jwks#save}) while online.
     */
    public Jwks fetchJwks() {
        HttpRequest request = HttpRequest.newBuilder(URI.create(baseUrl + "/.well-known/jwks.json"))
                .timeout(requestTimeout)
                .header("accept", "application/json")
                .header("user-agent", USER_AGENT)
                .GET()
                .build();
        HttpResponse<byte[]> response = send(request);
        if (response.statusCode() != 200) {
            throw new KeywardException(String.valueOf(response.statusCode()), "unexpected answer for the JWKS",
                    "HTTP " + response.statusCode(), response.statusCode(), requestIdOf(response));
        }
        try {
            return Jwks.parse(new String(response.body(), StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            throw new KeywardException("200", "the JWKS answer is no key set", e.getMessage(), 200, requestIdOf(response));
        }
    }

    /** A live app token, renewed when less than a minute (or a tenth of its life) is left. */
    public String appToken() {
        return tokens.lease().token;
    }

    /**
     * Checks in every lease this session checked out that is still open, at once (a stuck one
     * delays no other), then stops the heartbeats and their threads. Each check-in is
     * {@link Lease#close()}: a lease the server ended meanwhile is no error. When a check-in fails
     * (no answer, say: its seat is then free when the lease expires) the others are still made, and
     * the first failure is thrown once all were tried, the others suppressed in it. Closing twice
     * does nothing the second time.
     */
    @Override
    public void close() {
        if (!closing.compareAndSet(false, true)) return;
        List<Lease> leases = new ArrayList<>(open);
        open.clear();
        RuntimeException first = null;
        if (!leases.isEmpty()) {
            List<Future<?>> checkIns = new ArrayList<>();
            ExecutorService runner = beats();
            for (Lease lease : leases) checkIns.add(runner.submit(lease::close));
            for (Future<?> checkIn : checkIns) {
                RuntimeException failure = null;
                try {
                    checkIn.get();
                } catch (ExecutionException e) {
                    failure = e.getCause() instanceof RuntimeException
                            ? (RuntimeException) e.getCause() : new IllegalStateException(e.getCause());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    failure = new KeywardNetworkException("interrupted while checking leases in", e);
                }
                if (failure == null) continue;
                if (first == null) first = failure;
                else if (first != failure) first.addSuppressed(failure);
            }
        }
        closed = true;
        synchronized (schedulerLock) {
            if (scheduler != null) scheduler.shutdownNow();
            if (beats != null) beats.shutdownNow();
        }
        if (first != null) throw first;
    }

    // ---- internals shared with Lease ----

    /**
     * Runs {@code beat} after {@code millis} on a thread of its own: the scheduler's one thread only
     * hands it over, so it is never held by a call.
     */
    ScheduledFuture<?> scheduleBeat(Runnable beat, long millis) {
        synchronized (schedulerLock) {
            ensureOpen();
            if (scheduler == null) {
                scheduler = new ScheduledThreadPoolExecutor(1, daemonThreads("keyward-heartbeat-timer"));
                scheduler.setRemoveOnCancelPolicy(true);
                scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
            }
            ExecutorService runner = beats();
            return scheduler.schedule(() -> runner.execute(beat), millis, TimeUnit.MILLISECONDS);
        }
    }

    /** The threads beats and check-ins on close run on: as many as run at once, idle ones gone after a minute. */
    private ThreadPoolExecutor beats() {
        synchronized (schedulerLock) {
            if (beats == null) {
                beats = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS, new SynchronousQueue<>(),
                        daemonThreads("keyward-heartbeat-"));
            }
            return beats;
        }
    }

    private static ThreadFactory daemonThreads(String name) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, name.endsWith("-") ? name + count.incrementAndGet() : name);
            thread.setDaemon(true);
            return thread;
        };
    }

    /** The lease is over (checked in or ended by the server): close() has nothing to do for it. */
    void forget(Lease lease) {
        open.remove(lease);
    }

    Clock clock() {
        return clock;
    }

    void ensureOpen() {
        if (closing.get()) throw new IllegalStateException("the Keyward session is closed");
    }

    /**
     * One runtime call: a POST of {@code body} to {@code path} with the app token and a fresh nonce,
     * answering the envelope's {@code data}, sent again as the {@link RetryPolicy} says (with the same
     * {@code idempotencyKey}, when not null). The last failure is thrown when it gives up.
     */
    JsonNode call(String path, ObjectNode body, String userToken, String idempotencyKey) {
        byte[] json = Json.write(body).getBytes(StandardCharsets.UTF_8);
        long started = System.nanoTime();
        for (int attempt = 1; ; attempt++) {
            RuntimeException failure;
            Duration retryAfter = null;
            try {
                return attempt(path, json, userToken, idempotencyKey);
            } catch (KeywardException e) {
                if (e.httpStatus() != 429 && e.httpStatus() != 503) throw e;
                failure = e;
                retryAfter = e.retryAfter().orElse(null);
            } catch (KeywardNetworkException e) {
                if (!worthRetrying(e)) throw e;
                failure = e;
            }
            if (attempt >= retryPolicy.maxAttempts()) throw failure;
            Duration wait = retryPolicy.waitBefore(attempt, retryAfter);
            Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
            if (elapsed.plus(wait).compareTo(retryPolicy.maxElapsed()) > 0) throw failure;
            try {
                sleeper.sleep(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failure.addSuppressed(e);
                throw failure;
            }
        }
    }

    /**
     * One attempt. A {@code 60000} answer to a token that was not new discards it and sends the call
     * once more with a new token and a new nonce.
     */
    private JsonNode attempt(String path, byte[] json, String userToken, String idempotencyKey) {
        Token token = tokens.lease();
        HttpResponse<byte[]> response = send(runtimeRequest(path, json, token.token, userToken, idempotencyKey));
        KeywardException failure = failureOf(response);
        if (failure != null && KeywardException.APP_TOKEN_INVALID.equals(failure.code()) && !token.fresh) {
            tokens.discard(token.token);
            Token renewed = tokens.lease();
            response = send(runtimeRequest(path, json, renewed.token, userToken, idempotencyKey));
            failure = failureOf(response);
        }
        if (failure != null) throw failure;
        return dataOf(response);
    }

    /** Whether a call that got no answer may get one if sent again. */
    private static boolean worthRetrying(KeywardNetworkException e) {
        Throwable cause = e.getCause();
        // Interrupted: the program wants the thread back. A certificate not trusted stays so.
        return !(cause instanceof InterruptedException) && !(cause instanceof SSLHandshakeException);
    }

    /** Retry-After as delta-seconds or an HTTP date; null when absent or unreadable. */
    static Duration retryAfterOf(HttpResponse<?> response, Instant now) {
        String value = response.headers().firstValue("retry-after").orElse("").trim();
        if (value.isEmpty()) return null;
        if (value.chars().allMatch(Character::isDigit)) {
            try {
                return Duration.ofSeconds(Long.parseLong(value));
            } catch (NumberFormatException e) {
                return null;
            }
        }
        try {
            Duration until = Duration.between(now, ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME));
            return until.isNegative() ? Duration.ZERO : until;
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    private HttpRequest runtimeRequest(String path, byte[] json, String token, String userToken,
            String idempotencyKey) {
        URI uri = URI.create(baseUrl + path + "?g_nonce=" + freshNonce());
        HttpRequest.Builder request = HttpRequest.newBuilder(uri)
                .timeout(requestTimeout)
                .header("authorization", "Bearer " + token)
                .header("content-type", "application/json")
                .header("accept", "application/json")
                .header("user-agent", USER_AGENT)
                .POST(HttpRequest.BodyPublishers.ofByteArray(json));
        if (userToken != null) request.header("userToken", userToken);
        if (idempotencyKey != null) request.header("Idempotency-Key", idempotencyKey);
        return request.build();
    }

    /** 32 hex digits from a CSPRNG: within the server's 8–64 of {@code A-Za-z0-9_-}, used once. */
    static String freshNonce() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    private HttpResponse<byte[]> send(HttpRequest request) {
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw new KeywardNetworkException(
                    "no answer from Keyward at " + baseUrl + " (" + request.uri().getPath() + "): " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KeywardNetworkException("interrupted while waiting for Keyward", e);
        }
    }

    private static String requestIdOf(HttpResponse<?> response) {
        return response.headers().firstValue("x-request-id").orElse(null);
    }

    /** The failure an answer carries, or null for a success ({@code code} 0 on HTTP 200). */
    private KeywardException failureOf(HttpResponse<byte[]> response) {
        JsonNode body = Json.parse(response.body());
        int status = response.statusCode();
        Duration retryAfter = retryAfterOf(response, clock.instant());
        if (body != null && body.isObject()) {
            JsonNode code = body.get("code");
            if (status == 200 && code != null && code.isNumber() && code.intValue() == 0) return null;
            if (code != null && code.isTextual()) {
                return new KeywardException(code.textValue(), Json.text(body, "message"), Json.text(body, "cause"),
                        status, requestIdOf(response), retryAfter);
            }
        }
        return new KeywardException(String.valueOf(status), "unexpected answer", "HTTP " + status, status,
                requestIdOf(response), retryAfter);
    }

    private static JsonNode dataOf(HttpResponse<byte[]> response) {
        JsonNode data = Json.parse(response.body()).get("data");
        return data == null ? Json.MAPPER.nullNode() : data;
    }

    /** Waits between attempts. */
    interface Sleeper {
        void sleep(Duration wait) throws InterruptedException;
    }

    private static final class Token {
        final String token;
        /** Obtained for this call: a refusal of it is not cured by asking again. */
        final boolean fresh;

        Token(String token, boolean fresh) {
            this.token = token;
            this.fresh = fresh;
        }
    }

    /** The app token: obtained on first use, reused while it lives, renewed shortly before it expires. */
    private final class TokenSource {
        private String token;
        private Instant renewAt = Instant.MIN;

        synchronized Token lease() {
            if (token != null && clock.instant().isBefore(renewAt)) return new Token(token, false);
            renew();
            return new Token(token, true);
        }

        /** The server refused {@code refused}: the next lease asks for a new one. */
        synchronized void discard(String refused) {
            if (refused.equals(token)) token = null;
        }

        private void renew() {
            StringBuilder form = new StringBuilder("grant_type=client_credentials");
            if (scope != null) form.append("&scope=").append(URLEncoder.encode(scope, StandardCharsets.UTF_8));
            HttpRequest request = HttpRequest.newBuilder(URI.create(baseUrl + "/oauth2/token"))
                    .timeout(requestTimeout)
                    .header("authorization", basicCredentials)
                    .header("content-type", "application/x-www-form-urlencoded")
                    .header("accept", "application/json")
                    .header("user-agent", USER_AGENT)
                    .POST(HttpRequest.BodyPublishers.ofString(form.toString()))
                    .build();
            Instant asked = clock.instant();
            HttpResponse<byte[]> response = send(request);
            JsonNode body = Json.parse(response.body());
            String accessToken = Json.text(body, "access_token");
            Long expiresIn = Json.number(body, "expires_in");
            if (response.statusCode() != 200 || accessToken == null || expiresIn == null) {
                String error = Json.text(body, "error");
                String description = Json.text(body, "error_description");
                throw new KeywardAuthException(error == null ? "server_error" : error,
                        description == null ? "HTTP " + response.statusCode() : description,
                        response.statusCode(), requestIdOf(response), retryAfterOf(response, clock.instant()));
            }
            long lifetimeMs = expiresIn * 1000;
            // Renew a minute early, or at 90% of a short lifetime, so no call carries a dying token.
            long marginMs = Math.min(60_000, lifetimeMs / 10);
            token = accessToken;
            renewAt = asked.plusMillis(lifetimeMs - marginMs);
        }
    }

    public static final class Builder {
        private String baseUrl;
        private String appKey;
        private String appSecret;
        private String scope;
        private HttpClient httpClient;
        private Duration connectTimeout = Duration.ofSeconds(10);
        private Duration requestTimeout = Duration.ofSeconds(30);
        private Clock clock = Clock.systemUTC();
        private RetryPolicy retryPolicy = RetryPolicy.defaults();
        private Sleeper sleeper = wait -> Thread.sleep(wait.toMillis());

        private Builder() {}

        /** Where Keyward answers, e.g. {@code https://keyward.example.com}. */
        public Builder baseUrl(String baseUrl) {
            this.baseUrl = baseUrl;
            return this;
        }

        public Builder baseUrl(URI baseUrl) {
            this.baseUrl = baseUrl.toString();
            return this;
        }

        public Builder appKey(String appKey) {
            this.appKey = appKey;
            return this;
        }

        public Builder appSecret(String appSecret) {
            this.appSecret = appSecret;
            return this;
        }

        /** Scopes to ask for, space-separated; all of the application's when not set. */
        public Builder scope(String scope) {
            this.scope = scope;
            return this;
        }

        /** An HttpClient of the program's own (proxy, TLS settings); one of the SDK's otherwise. */
        public Builder httpClient(HttpClient httpClient) {
            this.httpClient = httpClient;
            return this;
        }

        /** Connecting to the server (10 s unless set); ignored with {@link #httpClient}. */
        public Builder connectTimeout(Duration connectTimeout) {
            this.connectTimeout = Objects.requireNonNull(connectTimeout);
            return this;
        }

        /** One attempt of a call (30 s unless set); the {@link RetryPolicy} bounds the retries. */
        public Builder requestTimeout(Duration requestTimeout) {
            this.requestTimeout = Objects.requireNonNull(requestTimeout);
            return this;
        }

        /**
         * When runtime calls are sent again ({@link RetryPolicy#defaults()} unless set: four attempts
         * within a minute); {@link RetryPolicy#none()} sends each once.
         */
        public Builder retryPolicy(RetryPolicy retryPolicy) {
            this.retryPolicy = Objects.requireNonNull(retryPolicy);
            return this;
        }

        /** How the session waits between attempts (tests keep time with it). */
        Builder sleeper(Sleeper sleeper) {
            this.sleeper = Objects.requireNonNull(sleeper);
            return this;
        }

        /** The clock token lifetimes are judged by (tests). */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock);
            return this;
        }

        public KeywardSession build() {
            return new KeywardSession(this);
        }
    }
}
