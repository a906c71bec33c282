package dev.keyward;

import com.fasterxml.jackson.databind.JsonNode;

/** The product a lease runs; each field may be null. */
public record Product(String crmProductId, String productUri, String productName) {
    static Product of(JsonNode node) {
        return new Product(Json.text(node, "crmProductId"), Json.text(node, "productUri"), Json.text(node, "productName"));
    }
}
