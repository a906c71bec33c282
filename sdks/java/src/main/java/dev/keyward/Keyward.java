package dev.keyward;

/** What this SDK is: its version and the Keyward API it speaks. */
public final class Keyward {
    /** The SDK's version, the server's version it was written against. */
    public static final String VERSION = "0.1.0";
    /** The runtime API this SDK calls ({@code /runtime/v1}). */
    public static final String API_VERSION = "v1";

    private Keyward() {}
}
