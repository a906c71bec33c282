package dev.keyward;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Locale;

/**
 * The binary layouts of offline activation, version 1 (docs/activation.md): every message starts
 * with its kind and its version, so a reader refuses what it does not know rather than misreading
 * it; integers are big-endian; a string is a length byte (1–255) and UTF-8.
 */
final class ActivationMessages {
    static final int VERSION = 1;
    static final int KIND_REQUEST = 0x52;
    static final int KIND_LEASE = 0x4c;
    static final int KIND_RETURN = 0x58;
    static final int NONCE_BYTES = 8;
    static final int FINGERPRINT_HASH_BYTES = 10;
    static final int BINDING_BYTES = 6;
    static final int KID_PREFIX_BYTES = 4;
    static final int SIGNATURE_BYTES = 64;
    static final int MAX_DAYS = 365;
    static final byte[] TYPED_LEASE_LABEL = "keyward typed lease v1\n".getBytes(StandardCharsets.UTF_8);

    private ActivationMessages() {}

    /** A typed lease read but not verified: its signed bytes, its fields and its signature. */
    record TypedLease(byte[] signed, byte[] kidPrefix, String leaseId, long issuedAt, long expiresAt,
                      int expBound, byte[] nonce, byte[] fingerprintHash, byte[] binding, byte[] signature) {}

    // --- writing ---

    static final class Writer {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Writer u8(int value) {
            out.write(value & 0xff);
            return this;
        }

        Writer u16(int value) {
            return u8(value >>> 8).u8(value);
        }

        Writer u32(long value) {
            return u8((int) (value >>> 24)).u8((int) (value >>> 16)).u8((int) (value >>> 8)).u8((int) value);
        }

        Writer bytes(byte[] value, int length, String what) {
            if (value.length != length) throw new IllegalArgumentException(what + " must be " + length + " bytes");
            out.writeBytes(value);
            return this;
        }

        Writer text(String value, String what) {
            byte[] encoded = value.getBytes(StandardCharsets.UTF_8);
            if (encoded.length < 1 || encoded.length > 255) {
                throw new IllegalArgumentException(what + " must be 1 to 255 bytes of UTF-8");
            }
            out.write(encoded.length);
            out.writeBytes(encoded);
            return this;
        }

        byte[] done() {
            return out.toByteArray();
        }
    }

    // --- reading ---

    static final class Reader {
        private final byte[] data;
        private final String what;
        private int at;

        Reader(byte[] data, String what) {
            this.data = data;
            this.what = what;
        }

        private void need(int n, String field) throws ActivationFormatException {
            if (at + n > data.length) {
                throw new ActivationFormatException("the " + what + " is cut short: " + field + " is missing");
            }
        }

        int u8(String field) throws ActivationFormatException {
            need(1, field);
            return data[at++] & 0xff;
        }

        int u16(String field) throws ActivationFormatException {
            return (u8(field) << 8) | u8(field);
        }

        long u32(String field) throws ActivationFormatException {
            return ((long) u16(field) << 16) | u16(field);
        }

        byte[] bytes(int n, String field) throws ActivationFormatException {
            need(n, field);
            byte[] out = Arrays.copyOfRange(data, at, at + n);
            at += n;
            return out;
        }

        String text(String field) throws ActivationFormatException {
            int length = u8(field);
            if (length == 0) throw new ActivationFormatException("the " + what + "'s " + field + " is empty");
            byte[] bytes = bytes(length, field);
            try {
                return StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(bytes)).toString();
            } catch (CharacterCodingException e) {
                throw new ActivationFormatException("the " + what + "'s " + field + " is not UTF-8");
            }
        }

        int offset() {
            return at;
        }

        void end() throws ActivationFormatException {
            if (at != data.length) {
                throw new ActivationFormatException("the " + what + " has " + (data.length - at) + " bytes too many");
            }
        }

        /** The kind and the version: another kind is named, another version refused. */
        void header(int kind, String what) throws ActivationFormatException {
            int found = u8("its kind");
            if (found != kind) {
                String other = found == KIND_REQUEST ? "an activation request"
                        : found == KIND_LEASE ? "an activation answer"
                        : found == KIND_RETURN ? "an activation return code" : null;
                throw new ActivationFormatException(other == null
                        ? "this is not a Keyward " + what : "this is " + other + ", not an " + what);
            }
            int version = u8("its version");
            if (version != VERSION) {
                throw new ActivationFormatException(
                        "the " + what + " is of version " + version + "; this reads version " + VERSION);
            }
        }
    }

    // --- the messages ---

    static byte[] encodeRequest(ActivationRequest request) {
        return new Writer()
                .u8(KIND_REQUEST).u8(VERSION)
                .u16(request.days())
                .u32(request.createdAt().getEpochSecond())
                .bytes(request.nonce(), NONCE_BYTES, "nonce")
                .bytes(request.fingerprintHash(), FINGERPRINT_HASH_BYTES, "fingerprintHash")
                .text(request.appKey(), "appKey")
                .text(request.assetNum(), "assetNum")
                .text(request.crmProductId(), "crmProductId")
                .done();
    }

    static TypedLease decodeTypedLease(byte[] bytes) throws ActivationFormatException {
        Reader reader = new Reader(bytes, "activation answer");
        reader.header(KIND_LEASE, "activation answer");
        byte[] kidPrefix = reader.bytes(KID_PREFIX_BYTES, "its key");
        String leaseId = uuidText(reader.bytes(16, "its lease id"));
        long issuedAt = reader.u32("its time");
        long expiresAt = reader.u32("its expiry");
        int expBound = reader.u8("its bound");
        byte[] nonce = reader.bytes(NONCE_BYTES, "its request's nonce");
        byte[] fingerprintHash = reader.bytes(FINGERPRINT_HASH_BYTES, "the machine's fingerprint");
        byte[] binding = reader.bytes(BINDING_BYTES, "what it was asked for");
        byte[] signed = Arrays.copyOf(bytes, reader.offset());
        byte[] signature = reader.bytes(SIGNATURE_BYTES, "its signature");
        reader.end();
        if (expBound >= LeaseClaims.ExpBound.values().length) {
            throw new ActivationFormatException("the activation answer names an unknown bound");
        }
        return new TypedLease(signed, kidPrefix, leaseId, issuedAt, expiresAt, expBound, nonce,
                fingerprintHash, binding, signature);
    }

    static byte[] encodeReturnCode(String leaseId, byte[] nonce, byte[] fingerprintHash) {
        return new Writer()
                .u8(KIND_RETURN).u8(VERSION)
                .bytes(uuidBytes(leaseId), 16, "leaseId")
                .bytes(nonce, NONCE_BYTES, "nonce")
                .bytes(fingerprintHash, FINGERPRINT_HASH_BYTES, "fingerprintHash")
                .done();
    }

    // --- the derived values ---

    /** The first 10 bytes of SHA-256 of the fingerprint (UTF-8): all an activation carries of it. */
    static byte[] fingerprintHash(String fingerprint) {
        return Arrays.copyOf(sha256(fingerprint.getBytes(StandardCharsets.UTF_8)), FINGERPRINT_HASH_BYTES);
    }

    /** The fingerprint claim of an activated lease's JWS: {@code fph1:} and the hash in base32. */
    static String activatedFingerprint(byte[] fingerprintHash) {
        StringBuilder out = new StringBuilder("fph1:");
        for (int v : TypedCode.toFiveBits(fingerprintHash)) out.append(TypedCode.ALPHABET.charAt(v));
        return out.toString();
    }

    /** SHA-256 of {@code appKey \n assetNum \n crmProductId}, first 6 bytes: what the request asked for. */
    static byte[] binding(String appKey, String assetNum, String crmProductId) {
        byte[] text = (appKey + "\n" + assetNum + "\n" + crmProductId).getBytes(StandardCharsets.UTF_8);
        return Arrays.copyOf(sha256(text), BINDING_BYTES);
    }

    /** The first 4 bytes of a kid (base64url of the RFC 7638 thumbprint); null when it is no base64url. */
    static byte[] kidPrefix(String kid) {
        try {
            byte[] decoded = Base64.getUrlDecoder().decode(kid.replace("=", ""));
            return decoded.length < KID_PREFIX_BYTES ? null : Arrays.copyOf(decoded, KID_PREFIX_BYTES);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** The nonce as an activated lease's JWS names it ({@code activation.nonce}): base64url, no padding. */
    static String nonceText(byte[] nonce) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(nonce);
    }

    static byte[] typedLeaseSigningInput(byte[] signed) {
        byte[] out = Arrays.copyOf(TYPED_LEASE_LABEL, TYPED_LEASE_LABEL.length + signed.length);
        System.arraycopy(signed, 0, out, TYPED_LEASE_LABEL.length, signed.length);
        return out;
    }

    static byte[] uuidBytes(String id) {
        String hex = id.replace("-", "");
        if (!hex.matches("[0-9a-fA-F]{32}")) throw new IllegalArgumentException(id + " is not a lease id");
        return HexFormat.of().parseHex(hex.toLowerCase(Locale.ROOT));
    }

    static String uuidText(byte[] bytes) {
        String hex = HexFormat.of().formatHex(bytes);
        return hex.substring(0, 8) + "-" + hex.substring(8, 12) + "-" + hex.substring(12, 16) + "-"
                + hex.substring(16, 20) + "-" + hex.substring(20);
    }

    private static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
