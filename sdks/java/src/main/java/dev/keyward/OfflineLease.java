package dev.keyward;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Objects;

/**
 * A signed offline lease (a compact JWS): what lets the software run without reaching the server
 * until it expires. Save it and the JWKS while online; verify it at every start offline.
 *
 * <pre>{@code
 * lease.offlineLease().orElseThrow().save(dir.resolve("lease.jws"));
 * keyward.fetchJwks().save(dir.resolve("jwks.json"));
 * // later, offline:
 * LeaseClaims claims = OfflineLease.load(dir.resolve("lease.jws"))
 *         .verify(Jwks.load(dir.resolve("jwks.json")), machineId);
 * }</pre>
 */
public final class OfflineLease {
    private final String token;

    public OfflineLease(String token) {
        this.token = Objects.requireNonNull(token, "token").trim();
    }

    /** The compact JWS. */
    public String token() {
        return token;
    }

    /** Reads a lease saved with {@link #save}. */
    public static OfflineLease load(Path file) throws IOException {
        return new OfflineLease(Files.readString(file, StandardCharsets.US_ASCII));
    }

    /** Writes the lease to {@code file}, whole or not at all (a file beside it, then renamed). */
    public void save(Path file) throws IOException {
        FileWrites.atomically(file, token + "\n");
    }

    /** {@link LeaseVerifier#verify(String, Jwks, String, String, Instant)} now, any audience. */
    public LeaseClaims verify(Jwks jwks, String fingerprint) throws LeaseVerificationException {
        return LeaseVerifier.verify(token, jwks, fingerprint);
    }

    /** {@link LeaseVerifier#verify(String, Jwks, String, String, Instant)} of this lease. */
    public LeaseClaims verify(Jwks jwks, String fingerprint, String audience, Instant now)
            throws LeaseVerificationException {
        return LeaseVerifier.verify(token, jwks, fingerprint, audience, now);
    }

    @Override
    public String toString() {
        return token;
    }
}
