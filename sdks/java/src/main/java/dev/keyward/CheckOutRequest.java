package dev.keyward;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Objects;
import java.util.Optional;

/**
 * What a check-out asks for: who holds the lease (a lock by its asset number, or a member by the
 * userToken of his login), which product (its crmProductId and/or productUri), on which machine
 * (the fingerprint), and for how many days offline (0: online only).
 *
 * <pre>{@code
 * CheckOutRequest request = CheckOutRequest.builder()
 *         .assetNum("A-0001").crmProductId("P-MODELER").fingerprint(machineId).build();
 * }</pre>
 */
public final class CheckOutRequest {
    private final String fingerprint;
    private final String crmProductId;
    private final String productUri;
    private final String assetNum;
    private final int offlineDays;
    private final String userToken;

    private CheckOutRequest(Builder builder) {
        this.fingerprint = builder.fingerprint;
        this.crmProductId = builder.crmProductId;
        this.productUri = builder.productUri;
        this.assetNum = builder.assetNum;
        this.offlineDays = builder.offlineDays;
        this.userToken = builder.userToken;
    }

    public static Builder builder() {
        return new Builder();
    }

    public String fingerprint() {
        return fingerprint;
    }

    public Optional<String> crmProductId() {
        return Optional.ofNullable(crmProductId);
    }

    public Optional<String> productUri() {
        return Optional.ofNullable(productUri);
    }

    public Optional<String> assetNum() {
        return Optional.ofNullable(assetNum);
    }

    public int offlineDays() {
        return offlineDays;
    }

    public Optional<String> userToken() {
        return Optional.ofNullable(userToken);
    }

    ObjectNode body() {
        ObjectNode body = Json.MAPPER.createObjectNode();
        body.put("fingerprint", fingerprint);
        if (crmProductId != null) body.put("crmProductId", crmProductId);
        if (productUri != null) body.put("productUri", productUri);
        if (assetNum != null) body.put("assetNum", assetNum);
        if (offlineDays > 0) body.put("offlineDays", offlineDays);
        return body;
    }

    public static final class Builder {
        private String fingerprint;
        private String crmProductId;
        private String productUri;
        private String assetNum;
        private int offlineDays;
        private String userToken;

        private Builder() {}

        /** This machine: 8–256 printable characters, no spaces (a hash of hardware ids, say). */
        public Builder fingerprint(String fingerprint) {
            this.fingerprint = fingerprint;
            return this;
        }

        public Builder crmProductId(String crmProductId) {
            this.crmProductId = crmProductId;
            return this;
        }

        public Builder productUri(String productUri) {
            this.productUri = productUri;
            return this;
        }

        /** The lock's asset number (a lock holder), or which of a member's assets to use. */
        public Builder assetNum(String assetNum) {
            this.assetNum = assetNum;
            return this;
        }

        /**
         * Days the software may run without the server: the check-out then answers a signed offline
         * lease ({@link Lease#offlineLease()}). At most the application's setting (90011 past it).
         */
        public Builder offlineDays(int offlineDays) {
            if (offlineDays < 0) throw new IllegalArgumentException("offlineDays must not be negative");
            this.offlineDays = offlineDays;
            return this;
        }

        /**
         * A member's own login token (password grant, issued to the same application): the member
         * holds the lease. Sent on the check-out only; the lease's later calls need only the app token.
         */
        public Builder userToken(String userToken) {
            this.userToken = userToken;
            return this;
        }

        public CheckOutRequest build() {
            Objects.requireNonNull(fingerprint, "fingerprint");
            if (crmProductId == null && productUri == null) {
                throw new IllegalStateException("a check-out names the product: crmProductId and/or productUri");
            }
            if (assetNum == null && userToken == null) {
                throw new IllegalStateException("a check-out names its holder: assetNum (a lock) or userToken (a member)");
            }
            return new CheckOutRequest(this);
        }
    }
}
