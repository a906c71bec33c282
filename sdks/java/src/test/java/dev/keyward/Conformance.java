package dev.keyward;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/** Finds and reads the repository's conformance vectors (sdks/conformance) at test time. */
final class Conformance {
    private Conformance() {}

    /**
     * The folder: {@code -Dkeyward.conformance=DIR}, else {@code sdks/conformance} in the working
     * directory or one of its parents (the repository's root, or sdks/java under Maven).
     */
    static Path dir() {
        String told = System.getProperty("keyward.conformance");
        if (told != null) return Paths.get(told);
        for (Path at = Paths.get("").toAbsolutePath(); at != null; at = at.getParent()) {
            Path candidate = at.resolve("sdks/conformance");
            if (Files.isRegularFile(candidate.resolve("leases.json"))) return candidate;
            if (at.getFileName() != null && at.getFileName().toString().equals("sdks")
                    && Files.isRegularFile(at.resolve("conformance/leases.json"))) {
                return at.resolve("conformance");
            }
        }
        throw new IllegalStateException("sdks/conformance not found from " + Paths.get("").toAbsolutePath()
                + "; set -Dkeyward.conformance=DIR");
    }

    static JsonNode read(String file) throws IOException {
        return new ObjectMapper().readTree(dir().resolve(file).toFile());
    }
}
