package dev.keyward;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/** Files written whole or not at all: a reader never sees half a lease or half a key set. */
final class FileWrites {
    private FileWrites() {}

    /** Written readable by its owner alone (0600): a lease, a pending request. */
    static void atomically(Path file, String text) throws IOException {
        atomically(file, text, false);
    }

    /**
     * Written whole; {@code readableByAll} makes it readable by every user (0644), as every Keyward SDK
     * writes a key set: public keys, which a program running as another user than the one that
     * fetched them must read. Otherwise owner-only (0600).
     */
    static void atomically(Path file, String text, boolean readableByAll) throws IOException {
        Path target = file.toAbsolutePath();
        Path dir = target.getParent();
        if (dir != null) Files.createDirectories(dir);
        Path temp = Files.createTempFile(dir, "." + target.getFileName(), ".tmp");
        try {
            Files.writeString(temp, text, StandardCharsets.UTF_8);
            // createTempFile made it 0600; the mode is set before the file takes its name.
            if (readableByAll) {
                try {
                    Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rw-r--r--"));
                } catch (UnsupportedOperationException e) {
                    // Not a POSIX file system: its own rules.
                }
            }
            try {
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(temp);
        }
    }
}
