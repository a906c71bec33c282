package dev.keyward;

import java.io.ByteArrayOutputStream;
import java.util.Objects;

/**
 * The typed form of activation messages (docs/activation.md): bytes in Crockford's base32, cut in
 * groups of five characters, each followed by a check character (Luhn mod 32 over the group's
 * number and its values), the groups joined by {@code -}: {@code 7ZK2Q4-9XP0MC-…}. A person types it
 * from one screen into another, so {@link #decode} forgives lower case, {@code O} for {@code 0},
 * {@code I} and {@code L} for {@code 1}, spaces and missing dashes, and names the group of a
 * mistyped character.
 */
public final class TypedCode {
    /** Crockford's base32 alphabet: a character's index is its value. */
    public static final String ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    private static final int GROUP = 5;

    private TypedCode() {}

    /** The typed form of {@code bytes}. */
    public static String encode(byte[] bytes) {
        int[] values = toFiveBits(Objects.requireNonNull(bytes, "bytes"));
        StringBuilder out = new StringBuilder();
        for (int g = 0; g * GROUP < values.length; g++) {
            int from = g * GROUP;
            int to = Math.min(values.length, from + GROUP);
            if (g > 0) out.append('-');
            for (int i = from; i < to; i++) out.append(ALPHABET.charAt(values[i]));
            out.append(ALPHABET.charAt(checkCharacter(g, values, from, to)));
        }
        return out.toString();
    }

    /**
     * The bytes of a typed code. Every group but the last has five characters and a check
     * character; the last may be shorter.
     *
     * @throws ActivationFormatException naming the first group that does not check, or that holds a
     *     character no code has, or that is cut short
     */
    public static byte[] decode(String text) throws ActivationFormatException {
        Objects.requireNonNull(text, "text");
        StringBuilder compact = new StringBuilder();
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c != '-' && !Character.isWhitespace(c) && !Character.isSpaceChar(c)) compact.append(c);
        }
        if (compact.length() == 0) throw new ActivationFormatException("the code is empty");
        int[] values = new int[compact.length()];
        for (int i = 0; i < compact.length(); i++) {
            int value = valueOf(compact.charAt(i));
            if (value < 0) {
                int group = i / (GROUP + 1) + 1;
                throw new ActivationFormatException("character \"" + compact.charAt(i) + "\" in group " + group
                        + " is not one of the code's", group);
            }
            values[i] = value;
        }
        int[] data = new int[values.length];
        int length = 0;
        for (int g = 0, at = 0; at < values.length; g++, at += GROUP + 1) {
            int end = Math.min(values.length, at + GROUP + 1);
            if (end - at < 2) throw new ActivationFormatException("group " + (g + 1) + " is cut short", g + 1);
            int payloadEnd = end - 1;
            if (payloadEnd - at < GROUP && end < values.length) {
                throw new ActivationFormatException("group " + (g + 1) + " is cut short", g + 1);
            }
            if (checkCharacter(g, values, at, payloadEnd) != values[payloadEnd]) {
                throw new ActivationFormatException(
                        "group " + (g + 1) + " does not check: a character in it is mistyped", g + 1);
            }
            for (int i = at; i < payloadEnd; i++) data[length++] = values[i];
        }
        return fromFiveBits(data, length, length * 5 / 8);
    }

    /** A character's value, or -1; O reads as 0, I and L as 1, in either case. */
    private static int valueOf(char c) {
        char upper = c < 128 ? Character.toUpperCase(c) : c;
        char normal = upper == 'O' ? '0' : upper == 'I' || upper == 'L' ? '1' : upper;
        return ALPHABET.indexOf(normal);
    }

    /**
     * Luhn mod 32 over {@code groupIndex mod 32} followed by {@code values[from..to)}: from the
     * rightmost value leftwards, every other value (the rightmost first) doubled and its base-32
     * digits summed; the check is what brings the sum to a multiple of 32.
     */
    static int checkCharacter(int groupIndex, int[] values, int from, int to) {
        int sum = 0;
        boolean twice = true;
        for (int i = to - 1; i >= from - 1; i--) {
            int v = i >= from ? values[i] : groupIndex % 32;
            if (twice) {
                v *= 2;
                v = v / 32 + v % 32;
            }
            sum += v;
            twice = !twice;
        }
        return (32 - sum % 32) % 32;
    }

    /** 5-bit values, most significant first, the last padded with zero bits. */
    static int[] toFiveBits(byte[] bytes) {
        int[] out = new int[(bytes.length * 8 + 4) / 5];
        int n = 0;
        int buffer = 0;
        int bits = 0;
        for (byte b : bytes) {
            buffer = (buffer << 8) | (b & 0xff);
            bits += 8;
            while (bits >= 5) {
                out[n++] = (buffer >> (bits - 5)) & 31;
                bits -= 5;
            }
            buffer &= (1 << bits) - 1;
        }
        if (bits > 0) out[n++] = (buffer << (5 - bits)) & 31;
        return out;
    }

    private static byte[] fromFiveBits(int[] values, int count, int byteLength) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(byteLength);
        int buffer = 0;
        int bits = 0;
        for (int i = 0; i < count; i++) {
            buffer = (buffer << 5) | values[i];
            bits += 5;
            if (bits >= 8) {
                if (out.size() < byteLength) out.write((buffer >> (bits - 8)) & 255);
                bits -= 8;
            }
            buffer &= (1 << bits) - 1;
        }
        return out.toByteArray();
    }
}
