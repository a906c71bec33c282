package dev.keyward;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.Arrays;
import java.util.Optional;

/** What a verified offline lease says: the claims of its signed payload. */
public final class LeaseClaims {
    /** What set the lease's {@code exp}: the earliest of these bounds. */
    public enum ExpBound {
        /** The offline days asked for (at most the application's setting). */
        OFFLINE_DAYS("offline-days"),
        /** The license's end ({@code limits.endDate}). */
        LICENSE_END("license-end"),
        /** What remained of the usage time ({@code limits.timeDurationSeconds}). */
        TIME_DURATION("time-duration");

        private final String wire;

        ExpBound(String wire) {
            this.wire = wire;
        }

        public String wire() {
            return wire;
        }

        static Optional<ExpBound> fromWire(String wire) {
            return Arrays.stream(values()).filter(b -> b.wire.equals(wire)).findFirst();
        }

        @Override
        public String toString() {
            return wire;
        }
    }

    /**
     * Who holds the lease: a lock ({@code assetNum}) or a member ({@code memberGlobalId} of
     * {@code enterpriseGlobalId}); the other fields are null.
     */
    public record Holder(Kind kind, String assetNum, String memberGlobalId, String enterpriseGlobalId) {
        public enum Kind {
            LOCK("lock"),
            MEMBER("member");

            private final String wire;

            Kind(String wire) {
                this.wire = wire;
            }

            public String wire() {
                return wire;
            }

            @Override
            public String toString() {
                return wire;
            }
        }
    }

    private final JsonNode payload;
    private final Holder holder;
    private final Product product;
    private final Limits limits;
    private final ExpBound expBound;

    LeaseClaims(JsonNode payload, Holder holder, ExpBound expBound) {
        this.payload = payload;
        this.holder = holder;
        this.product = Product.of(payload.get("product"));
        this.limits = Limits.of(payload.get("limits"));
        this.expBound = expBound;
    }

    /** The lease id ({@code sub}, also {@code jti}). */
    public String leaseId() {
        return Json.text(payload, "sub");
    }

    public String subject() {
        return Json.text(payload, "sub");
    }

    public String jwtId() {
        return Json.text(payload, "jti");
    }

    /** The appKey of the application that checked the lease out ({@code aud}). */
    public String audience() {
        return Json.text(payload, "aud");
    }

    /** Always {@code keyward}. */
    public String issuer() {
        return Json.text(payload, "iss");
    }

    public Instant issuedAt() {
        return seconds("iat");
    }

    public Instant notBefore() {
        return seconds("nbf");
    }

    /** The lease runs offline until then. */
    public Instant expiresAt() {
        return seconds("exp");
    }

    public Holder holder() {
        return holder;
    }

    /** The machine the lease was checked out for. */
    public String fingerprint() {
        return Json.text(payload, "fingerprint");
    }

    public String assetNum() {
        return Json.text(payload, "assetNum");
    }

    public Product product() {
        return product;
    }

    public Limits limits() {
        return limits;
    }

    /** What set {@code exp}; empty for leases signed by servers before the claim existed. */
    public Optional<ExpBound> expBound() {
        return Optional.ofNullable(expBound);
    }

    /** The whole payload, for claims this class does not name. */
    public JsonNode json() {
        return payload.deepCopy();
    }

    private Instant seconds(String claim) {
        double value = payload.get(claim).doubleValue();
        return Instant.ofEpochMilli(Math.round(value * 1000));
    }

    @Override
    public String toString() {
        return "LeaseClaims" + payload;
    }
}
