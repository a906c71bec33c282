package dev.keyward;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/** A small local stand-in for Keyward's token endpoint and runtime, recording every request. */
final class StubKeyward implements AutoCloseable {
    static final ObjectMapper MAPPER = new ObjectMapper();

    /** One request as the stub saw it. */
    record Request(String method, String path, String query, Map<String, String> headers, String body) {
        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        String nonce() {
            for (String pair : query == null ? new String[0] : query.split("&")) {
                if (pair.startsWith("g_nonce=")) return pair.substring("g_nonce=".length());
            }
            return null;
        }

        JsonNode json() {
            try {
                return MAPPER.readTree(body);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }
    }

    /** An answer: status, JSON body, an x-request-id, and headers besides. Status 0: {@link #DROP}. */
    record Reply(int status, String body, String requestId, Map<String, String> headers) {
        /** No answer: the call is read, then the connection closed, as when a network fails. */
        static final Reply DROP = new Reply(0, "", null, Map.of());

        Reply(int status, String body, String requestId) {
            this(status, body, requestId, Map.of());
        }

        /** This reply with one more header. */
        Reply with(String name, String value) {
            Map<String, String> more = new java.util.HashMap<>(headers);
            more.put(name, value);
            return new Reply(status, body, requestId, Map.copyOf(more));
        }

        static Reply ok(String dataJson) {
            return new Reply(200, "{\"code\":0,\"message\":\"success\",\"data\":" + dataJson + "}", "req-ok");
        }

        static Reply failure(String code, String message, String cause) {
            return new Reply(299, "{\"code\":\"" + code + "\",\"message\":\"" + message + "\",\"cause\":\"" + cause + "\"}",
                    "req-" + code);
        }
    }

    interface Runtime {
        Reply answer(Request request, String bearerToken);
    }

    static final String LEASE = "{\"leaseId\":\"L-1\",\"status\":\"granted\",\"assetNum\":\"A-1\","
            + "\"expiresAt\":1800000300000,\"heartbeatIntervalSeconds\":1,"
            + "\"product\":{\"crmProductId\":\"P-1\",\"productUri\":\"gms-1\",\"productName\":\"Modeler\"},"
            + "\"limits\":{\"concurrent\":1,\"timeDurationSeconds\":null,\"amount\":100,\"startDate\":1797408000000,"
            + "\"endDate\":1805184000000},\"offlineLease\":null}";
    static final String HEARTBEAT = "{\"leaseId\":\"L-1\",\"expiresAt\":1800000360000,\"heartbeatIntervalSeconds\":1,"
            + "\"usedSeconds\":60}";

    private final HttpServer server;
    private final ExecutorService executor = Executors.newCachedThreadPool();
    final List<Request> tokenRequests = new CopyOnWriteArrayList<>();
    final List<Request> runtimeRequests = new CopyOnWriteArrayList<>();
    private final AtomicInteger tokensIssued = new AtomicInteger();
    volatile long expiresIn = 7200;
    volatile Reply tokenRefusal;
    volatile String jwks = "{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\","
            + "\"x\":\"6SVDqvbVE-VLwIL4TKinRPng9SGZ-yhduJKFSNiXRBA\",\"kid\":\"k1\",\"alg\":\"EdDSA\",\"use\":\"sig\"}]}";
    volatile Runtime runtime = (request, token) -> Reply.ok(request.path().endsWith("/leases") ? LEASE : HEARTBEAT);

    StubKeyward() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(executor);
        server.createContext("/oauth2/token", exchange -> {
            Request request = record(exchange);
            tokenRequests.add(request);
            Reply refusal = tokenRefusal;
            if (refusal != null) {
                send(exchange, refusal);
                return;
            }
            String token = "t" + tokensIssued.incrementAndGet();
            send(exchange, new Reply(200, "{\"access_token\":\"" + token + "\",\"token_type\":\"Bearer\",\"expires_in\":"
                    + expiresIn + ",\"scope\":\"auth_runtime\"}", null));
        });
        server.createContext("/runtime/v1/", exchange -> {
            Request request = record(exchange);
            runtimeRequests.add(request);
            String authorization = request.header("authorization");
            String token = authorization == null ? null : authorization.replaceFirst("^Bearer ", "");
            send(exchange, runtime.answer(request, token));
        });
        server.createContext("/.well-known/jwks.json", exchange -> {
            record(exchange);
            send(exchange, new Reply(200, jwks, null));
        });
        server.start();
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    KeywardSession.Builder session() {
        return KeywardSession.builder().baseUrl(url()).appKey("kw_app").appSecret("s3cret");
    }

    List<Request> runtimeRequests(String suffix) {
        return runtimeRequests.stream().filter(r -> r.path().endsWith(suffix)).collect(Collectors.toList());
    }

    private static Request record(HttpExchange exchange) throws IOException {
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        Map<String, String> headers = exchange.getRequestHeaders().entrySet().stream()
                .collect(Collectors.toMap(e -> e.getKey().toLowerCase(Locale.ROOT), e -> e.getValue().get(0), (a, b) -> a));
        return new Request(exchange.getRequestMethod(), exchange.getRequestURI().getPath(),
                exchange.getRequestURI().getRawQuery(), headers, body);
    }

    private static void send(HttpExchange exchange, Reply reply) throws IOException {
        if (reply.status() == 0) {
            // Closing an exchange before its headers are sent closes the connection: no answer.
            exchange.close();
            return;
        }
        reply.headers().forEach((name, value) -> exchange.getResponseHeaders().set(name, value));
        byte[] bytes = reply.body().getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("content-type",
                reply.body().startsWith("{") ? "application/json; charset=utf-8" : "text/html");
        if (reply.requestId() != null) exchange.getResponseHeaders().set("x-request-id", reply.requestId());
        exchange.sendResponseHeaders(reply.status(), bytes.length);
        exchange.getResponseBody().write(bytes);
        exchange.close();
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
