package dev.keyward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.keyward.tools.Activate;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The keyward-activate program (dev.keyward.tools.Activate) end to end, offline, with the
 * conformance vectors' request and answers: in the test's process, and once through
 * keyward-activate.sh as a user runs it.
 */
class ActivateToolTest {
    private static final String FP = "fp-conformance-offline-machine";
    private static JsonNode vectors;
    private static String requestCode;
    private static String now;

    @TempDir
    Path dir;

    @BeforeAll
    static void readVectors() throws Exception {
        vectors = Conformance.read("activation.json");
        requestCode = vectors.get("requests").get(0).get("code").asText();
        now = vectors.get("now").asText();
    }

    private static String answer(String name) {
        for (JsonNode c : vectors.get("answers")) {
            if (c.get("name").asText().equals(name)) return c.get("answer").asText();
        }
        throw new AssertionError("no answer " + name + " in activation.json");
    }

    private record Run(int status, String out, String err) {}

    private Run run(String stdin, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = Activate.run(Arrays.asList(args), Map.of(), new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** {@code args} then {@code --state DIR --now NOW}. */
    private Run at(String... args) {
        List<String> all = new ArrayList<>(Arrays.asList(args));
        all.addAll(List.of("--state", dir.resolve("state").toString(), "--now", now));
        return run("", all.toArray(String[]::new));
    }

    private Path jwksFile() throws Exception {
        Path file = dir.resolve("shipped-jwks.json");
        Files.writeString(file, vectors.get("jwks").toString());
        return file;
    }

    private Run pending() {
        Run made = at("request", "--from", requestCode, "--fingerprint", FP);
        assertEquals(0, made.status, made.err);
        return made;
    }

    @Test
    void theVectorsRequestIsAnsweredByItsTypedCodeThenReturned() throws Exception {
        Run made = pending();
        assertEquals(requestCode + "\n", made.out);
        assertTrue(made.err.contains("30 days of demo-simulator on lock 8000000001 for app kw_conformance_app"), made.err);
        assertEquals(requestCode, ActivationRequest.load(dir.resolve("state/request.json")).code());

        Run status = at("status");
        assertEquals(Activate.EXIT_NOTHING, status.status);
        assertTrue(status.out.contains("activation: none\npending request: 30 days"), status.out);

        // As a person types it: each group an argument.
        List<String> install = new ArrayList<>(List.of("install"));
        install.addAll(Arrays.asList(answer("typed").split("-")));
        install.addAll(List.of("--jwks", jwksFile().toString()));
        Run installed = at(install.toArray(String[]::new));
        assertEquals(0, installed.status, installed.err);
        assertEquals(String.join("\n", "activated",
                "lease: 01938f2e-7c1a-7000-8000-00000000a001",
                "app: kw_conformance_app",
                "lock: 8000000001",
                "product: demo-simulator",
                "issued: 2027-01-15T07:55:00Z",
                "expires: 2027-02-14T08:00:00Z (offline-days), 30 days left", ""), installed.out);
        assertFalse(Files.exists(dir.resolve("state/request.json")), "the request is answered");
        assertTrue(Files.exists(dir.resolve("state/jwks.json")), "the key set is kept for status");

        Run active = at("status");
        assertEquals(0, active.status, active.out);
        assertTrue(active.out.contains("activation: active\nlease: 01938f2e-7c1a-7000-8000-00000000a001"), active.out);
        assertTrue(active.out.contains("pending request: none"), active.out);
        // A minute on, the 30 days are still 30 to the nearest day, not 29 whole ones.
        Run minuteOn = run("", "status", "--state", dir.resolve("state").toString(), "--now",
                String.valueOf(Long.parseLong(now) + 60));
        assertTrue(minuteOn.out.contains("(offline-days), 30 days left"), minuteOn.out);
        Run later = run("", "status", "--state", dir.resolve("state").toString(), "--now", "1802592000");
        assertEquals(Activate.EXIT_REFUSED, later.status);
        assertTrue(later.out.contains("activation: refused: expired"), later.out);
        Run elsewhere = at("status", "--fingerprint", "fp-another-machine");
        assertEquals(Activate.EXIT_REFUSED, elsewhere.status);
        assertTrue(elsewhere.out.contains("activation: refused: fingerprint"), elsewhere.out);

        Run returned = at("return");
        assertEquals(0, returned.status, returned.err);
        assertEquals(vectors.get("returns").get(0).get("code").asText() + "\n", returned.out);
        assertTrue(returned.err.contains("is deleted from this machine"), returned.err);
        Run after = at("status");
        assertEquals(Activate.EXIT_NOTHING, after.status);
        assertTrue(after.out.contains("activation: none"), after.out);
        assertTrue(after.out.contains("return code: " + vectors.get("returns").get(0).get("code").asText()), after.out);
        assertEquals(Activate.EXIT_NOTHING, at("return").status, "nothing left to return");
    }

    @Test
    void aRefusedAnswerSaysWhyAndNamesTheMistypedGroup() throws Exception {
        pending();
        String jwks = jwksFile().toString();
        Run mistyped = at("install", answer("typed-mistyped"), "--jwks", jwks);
        assertEquals(Activate.EXIT_REFUSED, mistyped.status);
        assertEquals("refused: malformed: group 5 does not check: a character in it is mistyped\n"
                + "group 5 is mistyped: type it again\n", mistyped.err);
        Run other = at("install", answer("typed-other-request"), "--jwks", jwks);
        assertEquals(Activate.EXIT_REFUSED, other.status);
        assertEquals("refused: request: it answers another activation request\n", other.err);
        assertEquals(Activate.EXIT_REFUSED, at("install", answer("typed"), "--jwks", jwks,
                "--fingerprint", "fp-another-machine").status);
        Run expired = run("", "install", answer("typed"), "--jwks", jwks, "--state", dir.resolve("state").toString(),
                "--now", "1802592000");
        assertEquals(Activate.EXIT_REFUSED, expired.status);
        assertTrue(expired.err.startsWith("refused: expired"), expired.err);
        // Nothing refused was installed, and the request is still pending.
        assertFalse(Files.exists(dir.resolve("state/activation.json")));
        assertTrue(Files.exists(dir.resolve("state/request.json")));
        assertEquals(Activate.EXIT_NOTHING, at("install", answer("typed")).status, "no key set given nor kept");
    }

    @Test
    void theAnswerFileAndTheJwsAreInstalledFromAFileOrStandardInput() throws Exception {
        pending();
        Path file = dir.resolve("answer.json");
        Files.writeString(file, answer("file"));
        Run fromFile = at("install", file.toString(), "--jwks", jwksFile().toString());
        assertEquals(0, fromFile.status, fromFile.err);
        assertTrue(fromFile.out.startsWith("activated\nlease: 01938f2e-7c1a-7000-8000-00000000a001\n"), fromFile.out);
        assertEquals(0, at("status").status, "the installed file verifies with the kept key set");

        pending();
        Run fromStdin = run(answer("jws") + "\n", "install", "-", "--state", dir.resolve("state").toString(), "--now", now);
        assertEquals(0, fromStdin.status, fromStdin.err);
        assertEquals(0, at("status").status);
        Run jwsElsewhere = run(answer("jws-other-request"), "install", "-", "--state", dir.resolve("state").toString(),
                "--now", now);
        assertEquals(Activate.EXIT_NOTHING, jwsElsewhere.status, "the request was answered: none is pending");
    }

    @Test
    void aNewRequestIsMadeForThisMachineAndItsFingerprintIsKept() throws Exception {
        Run made = at("request", "--app", "kw_app", "--asset", "8000000001", "--product", "demo-simulator",
                "--days", "7", "--fingerprint", "fp-this-machine");
        assertEquals(0, made.status, made.err);
        ActivationRequest request = ActivationRequest.read(made.out);
        assertEquals("kw_app", request.appKey());
        assertEquals(7, request.days());
        assertEquals(Long.parseLong(now), request.createdAt().getEpochSecond());
        assertTrue(request.isFor("fp-this-machine"));
        assertEquals("fp-this-machine\n", Files.readString(dir.resolve("state/fingerprint")));
        assertFalse(Files.readString(dir.resolve("state/request.json")).contains("fp-this-machine"),
                "the request file carries the fingerprint's hash alone");
        Run again = at("request", "--app", "kw_app", "--asset", "8000000001", "--product", "demo-simulator",
                "--days", "7", "--fingerprint", "fp-this-machine");
        assertTrue(again.err.contains("This replaces the pending request"), again.err);

        Run mine = at("request", "--app", "kw_app", "--asset", "A", "--product", "P", "--days", "1");
        assertEquals(0, mine.status, mine.err);
        assertTrue(ActivationRequest.read(mine.out).isFor(Activate.machineFingerprint()));
        assertFalse(Files.exists(dir.resolve("state/fingerprint")));
        Run notMine = at("request", "--from", requestCode);
        assertEquals(Activate.EXIT_REFUSED, notMine.status);
        assertTrue(notMine.err.contains("made for another machine"), notMine.err);
    }

    @Test
    void mistakesOfUseAreRefusedWithTheUsage() {
        String[][] wrong = {
            {},
            {"frob"},
            {"request", "--app", "kw_app", "--asset", "A", "--product", "P", "--days", "366"},
            {"request", "--app", "kw_app", "--asset", "A", "--product", "P", "--days", "seven"},
            {"request", "--app", "kw_app", "--asset", "A", "--product", "P"},
            {"request", "--from", requestCode, "--days", "3"},
            {"request", "--app"},
            {"status", "extra"},
            {"return", "--jwks", "x"},
            {"status", "--now", "soon"},
        };
        for (String[] args : wrong) {
            Run refused = run("", args);
            assertEquals(Activate.EXIT_USAGE, refused.status, String.join(" ", args) + ": " + refused.err);
            assertTrue(refused.err.startsWith("usage: keyward-activate"), refused.err);
        }
        Run help = run("", "--help");
        assertEquals(0, help.status);
        assertTrue(help.out.contains("install ANSWER..."), help.out);
        Run mistypedRequest = at("request", "--from", requestCode.replace("A80G0M-7KB97H", "A80G0M-7KB98H"));
        assertEquals(Activate.EXIT_REFUSED, mistypedRequest.status);
        assertTrue(mistypedRequest.err.contains("group 2 is mistyped"), mistypedRequest.err);
    }

    @Test
    void theScriptRunsTheProgram() throws Exception {
        Path script = Conformance.dir().toAbsolutePath().getParent().resolve("java/keyward-activate.sh");
        assertTrue(Files.isRegularFile(script), script.toString());
        String state = dir.resolve("script-state").toString();
        String jwks = jwksFile().toString();
        Run made = sh(script, "request", "--from", requestCode, "--fingerprint", FP, "--state", state, "--now", now);
        assertEquals(0, made.status, made.err);
        assertEquals(requestCode + "\n", made.out);
        Run mistyped = sh(script, "install", answer("typed-mistyped"), "--jwks", jwks, "--state", state, "--now", now);
        assertEquals(2, mistyped.status, mistyped.err);
        assertTrue(mistyped.err.contains("group 5 is mistyped"), mistyped.err);
        Run installed = sh(script, "install", answer("typed"), "--jwks", jwks, "--state", state, "--now", now);
        assertEquals(0, installed.status, installed.err);
        assertTrue(installed.out.startsWith("activated\n"), installed.out);
        Run returned = sh(script, "return", "--state", state, "--now", now);
        assertEquals(vectors.get("returns").get(0).get("code").asText() + "\n", returned.out);
    }

    private Run sh(Path script, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("bash", script.toString()));
        command.addAll(Arrays.asList(args));
        Path out = Files.createTempFile(dir, "out", ".txt");
        Path err = Files.createTempFile(dir, "err", ".txt");
        Process process = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        process.getOutputStream().close();
        // The first run may compile the library.
        if (!process.waitFor(180, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("keyward-activate.sh did not end");
        }
        return new Run(process.exitValue(), Files.readString(out), Files.readString(err));
    }
}
