package dev.keyward;

import java.util.Arrays;
import java.util.Optional;
import java.util.OptionalInt;

/** An offline lease that {@link LeaseVerifier} refused, and why ({@link #reason()}). */
public class LeaseVerificationException extends Exception {
    private static final long serialVersionUID = 1L;

    /** Why a lease was refused; {@link #wire()} is the reason's name in every Keyward SDK. */
    public enum Reason {
        /** Not a compact JWS, or its header or claims are no Keyward lease. */
        MALFORMED("malformed"),
        /** Not signed with EdDSA, or the signature does not verify. */
        SIGNATURE("signature"),
        /**
         * Its {@code kid} is not in the key set: fetch the JWKS again when online. For a relay's lease:
         * its grant's kid is not in the set, or its own kid is not the relay key's its grant certifies.
         */
        UNKNOWN_KEY("unknown-key"),
        /** Its {@code nbf} is later than now (or, for a relay's lease, its grant's). */
        NOT_YET_VALID("not-yet-valid"),
        /** Its {@code exp} is past. */
        EXPIRED("expired"),
        /** It was checked out by another application than the audience asked for. */
        AUDIENCE("audience"),
        /** It was checked out for another machine. */
        FINGERPRINT("fingerprint"),
        /** The license it came from ended ({@code limits.endDate} is past). */
        LICENSE_ENDED("license-ended"),
        /** An activation's answer that answers another request than the machine's own (its nonce, app, lock or product). */
        REQUEST("request"),
        /** A relay's lease whose pool grant (its header's {@code grant}) has ended: the relay must renew it. */
        GRANT_EXPIRED("grant-expired"),
        /**
         * A relay's lease that says more than its pool grant gives: it runs past the grant, its license
         * and product are not in it, it names more seats (or no limit), or its machine is not listed.
         */
        BEYOND_GRANT("beyond-grant");

        private final String wire;

        Reason(String wire) {
            this.wire = wire;
        }

        /** The reason as Keyward names it: {@code license-ended}, {@code unknown-key}, … */
        public String wire() {
            return wire;
        }

        public static Optional<Reason> fromWire(String wire) {
            return Arrays.stream(values()).filter(r -> r.wire.equals(wire)).findFirst();
        }

        @Override
        public String toString() {
            return wire;
        }
    }

    private final Reason reason;
    private final String detail;
    private final int mistypedGroup;

    public LeaseVerificationException(Reason reason, String message) {
        super("lease refused (" + reason.wire() + "): " + message);
        this.reason = reason;
        this.detail = message;
        this.mistypedGroup = 0;
    }

    /** An activation's answer refused: {@code activation refused (reason): message}. */
    LeaseVerificationException(Reason reason, String message, ActivationFormatException cause) {
        super("activation refused (" + reason.wire() + "): " + message, cause);
        this.reason = reason;
        this.detail = message;
        this.mistypedGroup = cause == null ? 0 : cause.group().orElse(0);
    }

    public Reason reason() {
        return reason;
    }

    /** What is wrong, without the reason: {@code group 5 does not check: a character in it is mistyped}. */
    public String detail() {
        return detail;
    }

    /**
     * For a typed answer that does not read ({@link Reason#MALFORMED}): the group of the code to
     * type again, counted from 1; empty otherwise.
     */
    public OptionalInt mistypedGroup() {
        return mistypedGroup > 0 ? OptionalInt.of(mistypedGroup) : OptionalInt.empty();
    }
}
