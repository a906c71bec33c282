package dev.keyward;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Arrays;

/**
 * Times {@link LeaseVerifier#verify} on the suite's valid lease, as bench/sdks.ts runs every SDK:
 * {@code java -cp … dev.keyward.VerifyBench [N] [--signature-only]} (the conformance folder as the
 * tests find it). Warms the JIT first, then times N calls one by one, every signature verified, then
 * the key set remembering it (as the C benchmark does), and prints lines in the C benchmark's form:
 * {@code LeaseVerifier.verify, signature verified, wall clock: N calls, mean … us, median … us, p99 … us}.
 * {@code --signature-only} times the JDK's Ed25519 verification alone (one Signature per call).
 */
public final class VerifyBench {
    private VerifyBench() {}

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
        JsonNode vectors = Conformance.read("leases.json");
        Jwks jwks = Jwks.parse(vectors.get("jwks").toString());
        JsonNode valid = null;
        for (JsonNode c : vectors.get("cases")) if ("valid".equals(c.get("name").asText())) valid = c;
        if (valid == null) throw new IllegalStateException("no case named valid");
        String token = valid.get("token").asText();
        String fingerprint = valid.get("fingerprint").asText();
        String audience = valid.get("audience").asText();
        java.time.Instant now = java.time.Instant.ofEpochSecond(valid.get("now").asLong());

        if (args.length > 1 && args[1].equals("--signature-only")) {
            // The JDK's Ed25519 alone: one Signature per call from a decoded key, over the token's
            // signing input, as LeaseVerifier does after its checks.
            int dot = token.lastIndexOf('.');
            byte[] signed = token.substring(0, dot).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            byte[] signature = java.util.Base64.getUrlDecoder().decode(token.substring(dot + 1));
            java.security.PublicKey key = Jwks.publicKeyOf(vectors.get("jwks").get("keys").get(0));
            time("Signature.verify (Ed25519) alone, signature verified", n, () -> {
                java.security.Signature verifier = java.security.Signature.getInstance("Ed25519");
                verifier.initVerify(key);
                verifier.update(signed);
                if (!verifier.verify(signature)) throw new IllegalStateException("no");
            });
            return;
        }
        jwks.remembering(false);
        time("LeaseVerifier.verify, signature verified", n, () -> LeaseVerifier.verify(token, jwks, fingerprint, audience, now));
        jwks.remembering(true);
        time("LeaseVerifier.verify, signature remembered", n, () -> LeaseVerifier.verify(token, jwks, fingerprint, audience, now));
    }

    private interface Call {
        void run() throws Exception;
    }

    /** Warms the JIT, then times n calls one by one: wall clock and this thread's CPU time. */
    private static void time(String what, int n, Call call) throws Exception {
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        for (int i = 0; i < 3000; i++) call.run(); // the JIT
        double[] wall = new double[n];
        double[] cpu = new double[n];
        for (int i = 0; i < n; i++) {
            long c0 = threads.getCurrentThreadCpuTime();
            long w0 = System.nanoTime();
            call.run();
            wall[i] = (System.nanoTime() - w0) / 1000.0;
            cpu[i] = (threads.getCurrentThreadCpuTime() - c0) / 1000.0;
        }
        summary(what + ", wall clock", wall);
        summary(what + ", CPU time", cpu);
    }

    private static void summary(String what, double[] samples) {
        int n = samples.length;
        double total = 0;
        for (double s : samples) total += s;
        Arrays.sort(samples);
        double median = n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
        System.out.printf(java.util.Locale.ROOT, "%s: %d calls, mean %.1f us, median %.1f us, p99 %.1f us%n",
                what, n, total / n, median, samples[(int) (n * 0.99)]);
    }
}
