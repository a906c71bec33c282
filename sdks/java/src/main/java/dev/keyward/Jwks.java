package dev.keyward;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.EdECPoint;
import java.security.spec.EdECPublicKeySpec;
import java.security.spec.NamedParameterSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Keyward's public keys (RFC 7517 JSON Web Key Set, {@code /.well-known/jwks.json}): what offline
 * leases are verified with. Fetch it with {@link KeywardSession#fetchJwks()} while online, keep it
 * with {@link #save}, read it back with {@link #load}. Immutable, and safe to share between threads:
 * its Ed25519 keys are decoded once, when it is made, and kept by {@code kid}.
 */
public final class Jwks {
    private final JsonNode document;
    private final List<JsonNode> keys;
    /** The usable Ed25519 signing keys by kid, decoded once (a key is chosen by its kid alone). */
    private final Map<String, List<PublicKey>> byKid;
    /** The same keys with the first bytes of their kid, for typed activation answers. */
    private final List<Map.Entry<byte[], PublicKey>> byKidPrefix;

    /** One Signature per thread, initialised with the key at each use: getInstance looks up a provider. */
    private static final ThreadLocal<Signature> ED25519 = ThreadLocal.withInitial(() -> {
        try {
            return Signature.getInstance("Ed25519");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this Java has no Ed25519 (Java 15 or later has)", e);
        }
    });

    private Jwks(JsonNode document) {
        this.document = document;
        List<JsonNode> list = new ArrayList<>();
        document.get("keys").forEach(list::add);
        this.keys = Collections.unmodifiableList(list);
        Map<String, List<PublicKey>> found = new HashMap<>();
        List<Map.Entry<byte[], PublicKey>> prefixed = new ArrayList<>();
        for (JsonNode key : list) {
            String kid = Json.text(key, "kid");
            PublicKey publicKey = kid == null ? null : signingKeyOf(key);
            if (publicKey == null) continue;
            found.computeIfAbsent(kid, k -> new ArrayList<>()).add(publicKey);
            byte[] prefix = ActivationMessages.kidPrefix(kid);
            if (prefix != null) prefixed.add(Map.entry(prefix, publicKey));
        }
        found.replaceAll((kid, keysOfKid) -> List.copyOf(keysOfKid));
        this.byKid = Map.copyOf(found);
        this.byKidPrefix = List.copyOf(prefixed);
    }

    /** The JDK key of an Ed25519 signing JWK (OKP, Ed25519, use sig and alg EdDSA when given), or null. */
    private static PublicKey signingKeyOf(JsonNode key) {
        if (!"OKP".equals(Json.text(key, "kty")) || !"Ed25519".equals(Json.text(key, "crv"))) return null;
        if (key.has("use") && !"sig".equals(Json.text(key, "use"))) return null;
        if (key.has("alg") && !"EdDSA".equals(Json.text(key, "alg"))) return null;
        try {
            return publicKeyOf(key);
        } catch (GeneralSecurityException | RuntimeException e) {
            return null; // no key: left out, as the other SDKs leave it out
        }
    }

    /** A key set from its JSON text; {@link IllegalArgumentException} when it is none. */
    public static Jwks parse(String json) {
        JsonNode document = Json.parse(Objects.requireNonNull(json, "json"));
        if (document == null || !document.isObject() || !document.path("keys").isArray()) {
            throw new IllegalArgumentException("not a JSON Web Key Set: an object with a \"keys\" array");
        }
        for (JsonNode key : document.get("keys")) {
            if (!key.isObject()) throw new IllegalArgumentException("not a JSON Web Key Set: a key is no object");
        }
        return new Jwks(document.deepCopy());
    }

    /** Reads a key set saved with {@link #save} (or any JWKS file); an IOException when it is none. */
    public static Jwks load(Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        try {
            return parse(text);
        } catch (IllegalArgumentException e) {
            throw new IOException(file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Writes the key set to {@code file}, whole or not at all, readable by every user (0644, as every
     * Keyward SDK writes it: public keys).
     */
    public void save(Path file) throws IOException {
        FileWrites.atomically(file, toJson() + "\n", true);
    }

    /** The key set as JSON text. */
    public String toJson() {
        return Json.write(document);
    }

    /** The ids ({@code kid}) of its keys, in order. */
    public List<String> keyIds() {
        List<String> ids = new ArrayList<>();
        for (JsonNode key : keys) {
            String kid = Json.text(key, "kid");
            if (kid != null) ids.add(kid);
        }
        return ids;
    }

    /** The Ed25519 keys published under {@code kid}: a key is chosen by its kid alone. */
    List<PublicKey> ed25519Keys(String kid) {
        return byKid.getOrDefault(kid, List.of());
    }

    /**
     * The Ed25519 keys whose {@code kid} starts with {@code prefix} (its base64url decoded): how a
     * typed activation answer names the key that signed it.
     */
    List<PublicKey> ed25519KeysWithKidPrefix(byte[] prefix) {
        List<PublicKey> found = new ArrayList<>();
        for (Map.Entry<byte[], PublicKey> key : byKidPrefix) {
            if (Arrays.equals(key.getKey(), prefix)) found.add(key.getValue());
        }
        return found;
    }

    /**
     * Whether one of {@code keys} (of this set, or the relay key a grant signed by this set
     * certifies) signed {@code signed} with this Ed25519 signature, remembering the last
     * {@value #REMEMBERED} signatures that verified, as the C SDK does: a program checks its one
     * lease again and again (at each start, before each feature), and a signature that verified once
     * verifies again. A repeat costs a SHA-256 of (key, signature, signed text) instead of an Ed25519
     * verification, which the JDK makes slow (about 1 ms on a busy two-core machine); every claim is
     * still judged at every call. Only successes are kept, each under the encoding of the exact key
     * that verified it: a signature remembered under a relay's key never vouches under a vendor's,
     * nor the other way round.
     */
    boolean verifies(List<PublicKey> keys, byte[] signed, byte[] signature) {
        if (signature.length != 64) return false;
        if (!remembering) return verifiesWithAny(keys, signed, signature);
        for (PublicKey key : keys) {
            byte[] digest = digestOf(key, signed, signature);
            if (remembered(digest)) return true;
            if (verifiesWithAny(List.of(key), signed, signature)) {
                remember(digest);
                return true;
            }
        }
        return false;
    }

    private static final int REMEMBERED = 16;
    private final byte[][] seen = new byte[REMEMBERED][];
    private int seenNext;
    private volatile boolean remembering = true;

    /** Signatures remembered or not, the memory emptied: the benchmark's cold runs (VerifyBench). */
    synchronized void remembering(boolean on) {
        remembering = on;
        java.util.Arrays.fill(seen, null);
    }

    private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this Java has no SHA-256", e);
        }
    });

    private static byte[] digestOf(PublicKey key, byte[] signed, byte[] signature) {
        MessageDigest sha256 = SHA256.get();
        sha256.update(key.getEncoded());
        sha256.update(signature);
        return sha256.digest(signed);
    }

    private synchronized boolean remembered(byte[] digest) {
        for (byte[] one : seen) if (one != null && MessageDigest.isEqual(one, digest)) return true;
        return false;
    }

    private synchronized void remember(byte[] digest) {
        seen[seenNext] = digest;
        seenNext = (seenNext + 1) % REMEMBERED;
    }

    /** Whether one of {@code keys} signed {@code signed} with this Ed25519 signature (64 bytes). */
    static boolean verifiesWithAny(List<PublicKey> keys, byte[] signed, byte[] signature) {
        if (signature.length != 64) return false;
        Signature verifier = ED25519.get();
        for (PublicKey key : keys) {
            try {
                verifier.initVerify(key);
                verifier.update(signed);
                if (verifier.verify(signature)) return true;
            } catch (GeneralSecurityException | RuntimeException e) {
                // A key that cannot verify is no signature of this token; initVerify resets the object.
            }
        }
        return false;
    }

    /**
     * The JDK's public key for an Ed25519 JWK. {@code x} is the RFC 8032 encoding of the point: y in
     * little-endian, whose top bit is the parity of x.
     */
    static PublicKey publicKeyOf(JsonNode jwk) throws GeneralSecurityException {
        String x = Json.text(jwk, "x");
        if (x == null || !x.matches("[A-Za-z0-9_-]{43}")) throw new GeneralSecurityException("x is no Ed25519 key");
        byte[] encoded = Base64.getUrlDecoder().decode(x);
        boolean xOdd = (encoded[31] & 0x80) != 0;
        encoded[31] &= 0x7f;
        byte[] bigEndian = new byte[32];
        for (int i = 0; i < 32; i++) bigEndian[i] = encoded[31 - i];
        EdECPoint point = new EdECPoint(xOdd, new BigInteger(1, bigEndian));
        return KeyFactory.getInstance("Ed25519").generatePublic(new EdECPublicKeySpec(NamedParameterSpec.ED25519, point));
    }

    @Override
    public String toString() {
        return "Jwks" + keyIds();
    }
}
