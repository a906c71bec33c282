package dev.keyward;

import java.util.OptionalInt;

/**
 * A typed code or an activation message that does not read: a character mistyped, a code cut
 * short, another kind of message, a version this SDK does not know. {@link #group()} names the
 * group of the typed code to look at again, counted from 1 as a person reads it.
 */
public class ActivationFormatException extends Exception {
    private static final long serialVersionUID = 1L;

    private final int group;

    public ActivationFormatException(String message) {
        this(message, 0);
    }

    /** {@code group} counts from 1; 0 when no one group is at fault. */
    public ActivationFormatException(String message, int group) {
        super(message);
        this.group = group;
    }

    /** The mistyped group of the typed code, from 1; empty when the fault is no one group's. */
    public OptionalInt group() {
        return group > 0 ? OptionalInt.of(group) : OptionalInt.empty();
    }
}
