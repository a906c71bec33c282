package dev.keyward;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * What a machine that never reaches Keyward asks for (docs/activation.md): a seat of a product on a
 * lock, for 1 to 365 days, for this machine. Its {@link #code() typed code} or its
 * {@link #fileJson() file} goes to whoever can reach Keyward; the answer comes back and is verified
 * with {@link ActivationVerifier#verify} against this very request, so the machine keeps it (its
 * nonce included) until then: {@link #save} and {@link #load}. The fingerprint itself never leaves
 * the machine; the request carries the first 10 bytes of its SHA-256. Immutable.
 *
 * <pre>{@code
 * ActivationRequest request = ActivationRequest.builder()
 *         .appKey(appKey).assetNum(assetNum).crmProductId("P-MODELER").days(30).fingerprint(machineId)
 *         .build();
 * request.save(dir.resolve("request.json"));
 * show(request.code()); // A80G0M-7KB97H-…
 * }</pre>
 */
public final class ActivationRequest {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final DateTimeFormatter ISO_MILLIS =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    private final String appKey;
    private final String assetNum;
    private final String crmProductId;
    private final int days;
    private final Instant createdAt;
    private final byte[] nonce;
    private final byte[] fingerprintHash;
    private final String code;

    private ActivationRequest(String appKey, String assetNum, String crmProductId, int days, Instant createdAt,
                              byte[] nonce, byte[] fingerprintHash) {
        this.appKey = appKey;
        this.assetNum = assetNum;
        this.crmProductId = crmProductId;
        this.days = days;
        this.createdAt = createdAt;
        this.nonce = nonce;
        this.fingerprintHash = fingerprintHash;
        this.code = TypedCode.encode(ActivationMessages.encodeRequest(this));
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A request made now, with a random nonce; {@link IllegalArgumentException} when a field cannot be. */
    public static ActivationRequest create(String appKey, String assetNum, String crmProductId, int days,
                                           String fingerprint) {
        return builder().appKey(appKey).assetNum(assetNum).crmProductId(crmProductId).days(days)
                .fingerprint(fingerprint).build();
    }

    /**
     * A request from its typed code or its file's text (the file's {@code code} is what counts).
     *
     * @throws ActivationFormatException when it does not read; {@link ActivationFormatException#group()}
     *     names a mistyped group
     */
    public static ActivationRequest read(String text) throws ActivationFormatException {
        String trimmed = Objects.requireNonNull(text, "text").trim();
        if (trimmed.startsWith("{")) {
            JsonNode file = Json.parse(trimmed);
            if (file == null) throw new ActivationFormatException("the request file is not JSON");
            String code = Json.text(file, "code");
            if (!"activation-request".equals(Json.text(file, "keyward")) || code == null) {
                throw new ActivationFormatException("the file is not a Keyward activation request");
            }
            return decode(TypedCode.decode(code));
        }
        return decode(TypedCode.decode(trimmed));
    }

    /** Reads a request saved with {@link #save} (or its typed code in a file); an IOException when it is none. */
    public static ActivationRequest load(Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        try {
            return read(text);
        } catch (ActivationFormatException e) {
            throw new IOException(file + ": " + e.getMessage(), e);
        }
    }

    /** Writes the request's file ({@link #fileJson()}) to {@code file}, whole or not at all. */
    public void save(Path file) throws IOException {
        FileWrites.atomically(file, fileJson() + "\n");
    }

    private static ActivationRequest decode(byte[] bytes) throws ActivationFormatException {
        ActivationMessages.Reader reader = new ActivationMessages.Reader(bytes, "activation request");
        reader.header(ActivationMessages.KIND_REQUEST, "activation request");
        int days = reader.u16("days");
        long createdAt = reader.u32("its time");
        byte[] nonce = reader.bytes(ActivationMessages.NONCE_BYTES, "its nonce");
        byte[] fingerprintHash = reader.bytes(ActivationMessages.FINGERPRINT_HASH_BYTES, "the machine's fingerprint");
        String appKey = reader.text("appKey");
        String assetNum = reader.text("assetNum");
        String crmProductId = reader.text("crmProductId");
        reader.end();
        if (days < 1 || days > ActivationMessages.MAX_DAYS) {
            throw new ActivationFormatException("the activation request asks for " + days + " days; 1 to "
                    + ActivationMessages.MAX_DAYS + " are possible");
        }
        return new ActivationRequest(appKey, assetNum, crmProductId, days, Instant.ofEpochSecond(createdAt),
                nonce, fingerprintHash);
    }

    /** The appKey of the application that asks (the answer's audience). */
    public String appKey() {
        return appKey;
    }

    /** The lock's asset number. */
    public String assetNum() {
        return assetNum;
    }

    public String crmProductId() {
        return crmProductId;
    }

    /** How many days the machine asks to run offline, 1 to 365. */
    public int days() {
        return days;
    }

    /** When the machine made the request, in whole seconds. */
    public Instant createdAt() {
        return createdAt;
    }

    /** The request's 8 random bytes: the answer names them, so it answers this request alone. */
    public byte[] nonce() {
        return nonce.clone();
    }

    /** The first 10 bytes of SHA-256 of the machine's fingerprint (UTF-8). */
    public byte[] fingerprintHash() {
        return fingerprintHash.clone();
    }

    /** Whether {@code fingerprint} is the one this request was made with. */
    public boolean isFor(String fingerprint) {
        return Arrays.equals(fingerprintHash, ActivationMessages.fingerprintHash(fingerprint));
    }

    /** The typed code, to show or print for the person who takes it to Keyward: {@code A80G0M-7KB97H-…}. */
    public String code() {
        return code;
    }

    /**
     * The request file: {@code {"keyward":"activation-request","version":1,"code":…}} and, for
     * people, what it asks ({@code appKey}, {@code assetNum}, {@code crmProductId}, {@code days},
     * {@code createdAt}); the server reads {@code code} alone.
     */
    public String fileJson() {
        ObjectNode file = Json.MAPPER.createObjectNode();
        file.put("keyward", "activation-request");
        file.put("version", ActivationMessages.VERSION);
        file.put("code", code);
        file.put("appKey", appKey);
        file.put("assetNum", assetNum);
        file.put("crmProductId", crmProductId);
        file.put("days", days);
        file.put("createdAt", ISO_MILLIS.format(createdAt));
        try {
            return Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(file);
        } catch (IOException e) {
            throw new IllegalStateException("a tree of text and numbers is always JSON", e);
        }
    }

    /**
     * The return code of the lease that answered this request: what the machine shows after deleting
     * that lease, so the seat is freed at once where the application allows early return.
     */
    public String returnCode(String leaseId) {
        return TypedCode.encode(ActivationMessages.encodeReturnCode(
                Objects.requireNonNull(leaseId, "leaseId"), nonce, fingerprintHash));
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof ActivationRequest r && code.equals(r.code);
    }

    @Override
    public int hashCode() {
        return code.hashCode();
    }

    @Override
    public String toString() {
        return "ActivationRequest[appKey=" + appKey + ", assetNum=" + assetNum + ", crmProductId=" + crmProductId
                + ", days=" + days + ", createdAt=" + createdAt + ", nonce=" + HexFormat.of().formatHex(nonce)
                + ", code=" + code + "]";
    }

    /** Builds a request; {@link #build()} checks the fields. */
    public static final class Builder {
        private String appKey;
        private String assetNum;
        private String crmProductId;
        private int days;
        private String fingerprint;
        private Instant createdAt;
        private byte[] nonce;

        private Builder() {}

        public Builder appKey(String appKey) {
            this.appKey = appKey;
            return this;
        }

        /** The lock's asset number. */
        public Builder assetNum(String assetNum) {
            this.assetNum = assetNum;
            return this;
        }

        public Builder crmProductId(String crmProductId) {
            this.crmProductId = crmProductId;
            return this;
        }

        /** 1 to 365; the server refuses more than the application's offline maximum. */
        public Builder days(int days) {
            this.days = days;
            return this;
        }

        /** This machine's fingerprint; only the first 10 bytes of its SHA-256 go in the request. */
        public Builder fingerprint(String fingerprint) {
            this.fingerprint = fingerprint;
            return this;
        }

        /** When the request is made (whole seconds); now unless given (for tests). */
        public Builder createdAt(Instant createdAt) {
            this.createdAt = createdAt;
            return this;
        }

        /** The 8 bytes of the nonce; random unless given (for tests: a real request's must be random). */
        public Builder nonce(byte[] nonce) {
            this.nonce = nonce == null ? null : nonce.clone();
            return this;
        }

        /** The request; {@link IllegalArgumentException} when a field is missing or out of its range. */
        public ActivationRequest build() {
            require(appKey, "appKey");
            require(assetNum, "assetNum");
            require(crmProductId, "crmProductId");
            require(fingerprint, "fingerprint");
            if (days < 1 || days > ActivationMessages.MAX_DAYS) {
                throw new IllegalArgumentException("days must be 1 to " + ActivationMessages.MAX_DAYS + ", not " + days);
            }
            Instant at = Instant.ofEpochSecond((createdAt == null ? Instant.now() : createdAt).getEpochSecond());
            if (at.getEpochSecond() < 0 || at.getEpochSecond() > 0xffffffffL) {
                throw new IllegalArgumentException("createdAt must be within 1970 and 2106");
            }
            byte[] n = nonce;
            if (n == null) {
                n = new byte[ActivationMessages.NONCE_BYTES];
                RANDOM.nextBytes(n);
            }
            if (n.length != ActivationMessages.NONCE_BYTES) {
                throw new IllegalArgumentException("the nonce must be " + ActivationMessages.NONCE_BYTES + " bytes");
            }
            return new ActivationRequest(appKey, assetNum, crmProductId, days, at, n,
                    ActivationMessages.fingerprintHash(fingerprint));
        }

        private static void require(String value, String name) {
            if (value == null || value.isEmpty()) throw new IllegalArgumentException(name + " is required");
        }
    }
}
