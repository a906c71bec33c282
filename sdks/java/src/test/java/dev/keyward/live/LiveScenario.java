package dev.keyward.live;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.keyward.CheckOutRequest;
import dev.keyward.Consumption;
import dev.keyward.Jwks;
import dev.keyward.KeywardException;
import dev.keyward.KeywardSession;
import dev.keyward.Lease;
import dev.keyward.LeaseClaims;
import dev.keyward.LeaseVerifier;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * The live scenario of the SDK conformance suite (sdks/conformance/README.md), written with the
 * Java SDK's public API only, step for step as scripts/sdk-live-reference.ts:
 *
 * <pre>
 * npx tsx scripts/sdk-live.ts --scenario "java=$(cat sdks/java/scenario)"
 * </pre>
 */
public final class LiveScenario {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private LiveScenario() {}

    private static String env(String name) {
        String value = System.getenv(name);
        if (value == null || value.isEmpty()) throw new IllegalStateException(name + " is not set");
        return value;
    }

    private static void report(String step, Object... fields) throws Exception {
        ObjectNode line = MAPPER.createObjectNode().put("step", step);
        for (int i = 0; i < fields.length; i += 2) line.set((String) fields[i], MAPPER.valueToTree(fields[i + 1]));
        System.out.println(MAPPER.writeValueAsString(line));
        System.out.flush();
    }

    private static String codeOf(Callable<?> call) throws Exception {
        try {
            call.call();
        } catch (KeywardException e) {
            return e.code();
        }
        throw new IllegalStateException("the call was not refused");
    }

    public static void main(String[] args) throws Exception {
        String assetNum = env("KEYWARD_ASSET_NUM");
        String product = env("KEYWARD_PRODUCT");
        Path jwksFile = Path.of(env("KEYWARD_JWKS_FILE"));
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));

        try (KeywardSession keyward = KeywardSession.builder()
                .baseUrl(env("KEYWARD_URL"))
                .appKey(env("KEYWARD_APP_KEY"))
                .appSecret(env("KEYWARD_APP_SECRET"))
                .build()) {
            String first = "fp-live-first-machine";
            Lease lease = keyward.checkOut(assetNum, product, first);
            report("checked-out", "leaseId", lease.leaseId(),
                    "heartbeatIntervalSeconds", lease.heartbeatInterval().getSeconds());

            for (int i = 0; i < 3; i++) lease.heartbeat();
            report("heartbeats", "count", 3);

            // The loop a program runs while it works: the SDK's heartbeat at the server's interval.
            lease.startHeartbeat((ended, why) -> System.err.println("lease ended: " + why));
            Thread.sleep(lease.heartbeatInterval().toMillis() + 1500);
            lease.stopHeartbeat();
            report("background", "beats", lease.heartbeatCount());

            Consumption consumed = lease.consume(2);
            report("consumed", "consumed", consumed.consumed(), "remaining", consumed.remaining());

            report("refused", "code", codeOf(() -> keyward.checkOut(assetNum, product, "fp-live-second-machine")));

            lease.checkIn();
            report("checked-in");

            // An offline lease, its keys saved beside it and read back, verified without the server.
            String offlineMachine = "fp-live-offline-machine";
            Lease offline = keyward.checkOut(CheckOutRequest.builder()
                    .assetNum(assetNum).crmProductId(product).fingerprint(offlineMachine).offlineDays(1).build());
            keyward.fetchJwks().save(jwksFile);
            Jwks saved = Jwks.load(jwksFile);
            LeaseClaims claims = LeaseVerifier.verify(offline.offlineLease().orElseThrow().token(), saved, offlineMachine);
            report("offline-verified", "assetNum", claims.assetNum(),
                    "expBound", claims.expBound().map(LeaseClaims.ExpBound::wire).orElse(null));

            report("await-revoke", "leaseId", offline.leaseId());
            stdin.readLine();
            report("revoked", "code", codeOf(offline::heartbeat));
            report("done");
        }
    }
}
