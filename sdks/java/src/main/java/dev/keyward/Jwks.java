package dev.keyward;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.spec.EdECPoint;
import java.security.spec.EdECPublicKeySpec;
import java.security.spec.NamedParameterSpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * Keyward's public keys (RFC 7517 JSON Web Key Set, {@code /.well-known/jwks.json}): what offline
 * leases are verified with. Fetch it with {@link KeywardSession#fetchJwks()} while online, keep it
 * with {@link #save}, read it back with {@link #load}. Immutable.
 */
public final class Jwks {
    private final JsonNode document;
    private final List<JsonNode> keys;

    private Jwks(JsonNode document) {
        this.document = document;
        List<JsonNode> list = new ArrayList<>();
        document.get("keys").forEach(list::add);
        this.keys = Collections.unmodifiableList(list);
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

    /** The Ed25519 keys (OKP) published under {@code kid}: a key is chosen by its kid alone. */
    List<JsonNode> ed25519Keys(String kid) {
        List<JsonNode> found = new ArrayList<>();
        for (JsonNode key : keys) {
            if (kid.equals(Json.text(key, "kid")) && "OKP".equals(Json.text(key, "kty"))
                    && "Ed25519".equals(Json.text(key, "crv"))) {
                found.add(key);
            }
        }
        return found;
    }

    /**
     * The Ed25519 keys whose {@code kid} starts with {@code prefix} (its base64url decoded): how a
     * typed activation answer names the key that signed it.
     */
    List<JsonNode> ed25519KeysWithKidPrefix(byte[] prefix) {
        List<JsonNode> found = new ArrayList<>();
        for (JsonNode key : keys) {
            String kid = Json.text(key, "kid");
            if (kid != null && "OKP".equals(Json.text(key, "kty")) && "Ed25519".equals(Json.text(key, "crv"))
                    && java.util.Arrays.equals(ActivationMessages.kidPrefix(kid), prefix)) {
                found.add(key);
            }
        }
        return found;
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
