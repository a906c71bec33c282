package dev.keyward;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Instant;

/** The one ObjectMapper of the SDK and the readers of nullable fields. */
final class Json {
    static final ObjectMapper MAPPER = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    private Json() {}

    /** The text, or null when the document is no JSON at all. */
    static JsonNode parse(byte[] bytes) {
        try {
            return MAPPER.readTree(bytes);
        } catch (java.io.IOException e) {
            return null;
        }
    }

    static JsonNode parse(String text) {
        try {
            return MAPPER.readTree(text);
        } catch (JsonProcessingException e) {
            return null;
        }
    }

    /** The node as JSON text (Jackson's own serialization of trees). */
    static String write(JsonNode node) {
        return node.toString();
    }

    static String text(JsonNode node, String field) {
        JsonNode value = node == null ? null : node.get(field);
        return value != null && value.isTextual() ? value.textValue() : null;
    }

    static Long number(JsonNode node, String field) {
        JsonNode value = node == null ? null : node.get(field);
        return value != null && value.isNumber() ? value.longValue() : null;
    }

    static long number(JsonNode node, String field, long otherwise) {
        Long value = number(node, field);
        return value == null ? otherwise : value;
    }

    static Instant epochMillis(JsonNode node, String field) {
        Long value = number(node, field);
        return value == null ? null : Instant.ofEpochMilli(value);
    }
}
