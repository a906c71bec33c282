package dev.keyward.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.keyward.ActivatedLease;
import dev.keyward.ActivationFormatException;
import dev.keyward.ActivationRequest;
import dev.keyward.ActivationVerifier;
import dev.keyward.Jwks;
import dev.keyward.LeaseVerificationException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * {@code keyward-activate}: offline activation of this machine from the command line
 * (docs/activation.md), with the subcommands of the Go SDK's {@code keyward-activate}; run it with
 * {@code sdks/java/keyward-activate.sh}.
 *
 * <pre>
 * request --app KEY --asset NUM --product ID --days N [--fingerprint FP]
 * request --from CODE|FILE [--fingerprint FP]
 * install ANSWER... [--jwks FILE] [--fingerprint FP]
 * status [--jwks FILE] [--fingerprint FP]
 * return
 * </pre>
 *
 * <p>Every subcommand takes {@code --state DIR} (default {@code $KEYWARD_ACTIVATION_DIR}, else
 * {@code ~/.config/keyward-activation}) and {@code --now SECONDS} (the clock, for tests). The state
 * directory holds {@code request.json} (the pending request: the file to carry to Keyward, and what
 * the answer is verified against), {@code fingerprint} (when one was given with
 * {@code --fingerprint}), {@code jwks.json} (the key set the answer was verified with),
 * {@code activation.json} (the installed answer) and {@code returned.json} (the last return code).
 *
 * <p>Exit status: 0 done ({@code status}: an activation is installed and verifies now); 1 nothing
 * to do that with (no pending request, no activation, no key set, a file that cannot be read); 2
 * refused (the answer or the request code does not verify or read: the reason is printed, and a
 * mistyped group is named); 64 a usage error.
 */
public final class Activate {
    public static final int EXIT_OK = 0;
    public static final int EXIT_NOTHING = 1;
    public static final int EXIT_REFUSED = 2;
    public static final int EXIT_USAGE = 64;

    static final String REQUEST_FILE = "request.json";
    static final String FINGERPRINT_FILE = "fingerprint";
    static final String JWKS_FILE = "jwks.json";
    static final String ACTIVATION_FILE = "activation.json";
    static final String RETURNED_FILE = "returned.json";

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final DateTimeFormatter ISO =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss'Z'").withZone(ZoneOffset.UTC);
    private static final String USAGE = String.join("\n",
            "usage: keyward-activate COMMAND [options]",
            "",
            "Offline activation of this machine (docs/activation.md).",
            "",
            "  request --app KEY --asset NUM --product ID --days N [--fingerprint FP]",
            "      make the request to take to Keyward: prints its code, writes request.json",
            "  request --from CODE|FILE [--fingerprint FP]",
            "      keep an existing request (its code or file) as the pending one",
            "  install ANSWER... [--jwks FILE] [--fingerprint FP]",
            "      verify the answer (its typed code, groups may be separate arguments; an answer file;",
            "      the JWS; - for standard input) against the pending request and install it",
            "  status [--jwks FILE] [--fingerprint FP]",
            "      show the installed activation and the pending request",
            "  return",
            "      delete the activated lease and print its return code",
            "",
            "  --state DIR   the state directory (default $KEYWARD_ACTIVATION_DIR or ~/.config/keyward-activation)",
            "  --fingerprint FP   this machine's fingerprint (default: from its machine id)",
            "  --jwks FILE   the key set to verify with (the server's /.well-known/jwks.json, shipped with",
            "                the software); kept in the state directory for status",
            "",
            "exit status: 0 done, 1 nothing to do that with, 2 refused, 64 usage",
            "");

    private Activate() {}

    public static void main(String[] args) {
        System.exit(run(Arrays.asList(args), System.getenv(), System.in, System.out, System.err));
    }

    /** Runs the program with {@code args} and answers its exit status. */
    public static int run(List<String> args, Map<String, String> env, InputStream in, PrintStream out,
                          PrintStream err) {
        Options options;
        try {
            options = Options.parse(args);
        } catch (Stop stop) {
            err.print(USAGE);
            err.println("keyward-activate: " + stop.getMessage());
            return stop.status;
        }
        if (options.help) {
            out.print(USAGE);
            return EXIT_OK;
        }
        String dir = options.value("state");
        if (dir == null) dir = defaultStateDir(env);
        State state = new State(Paths.get(dir));
        try {
            Instant now = options.now();
            switch (options.command) {
                case "request":
                    return request(options, state, now, in, out, err);
                case "install":
                    return install(options, state, now, in, out);
                case "status":
                    return status(options, state, now, out);
                case "return":
                    return giveBack(state, now, out, err);
                default:
                    throw new Stop(EXIT_USAGE, "unknown command " + options.command);
            }
        } catch (Stop stop) {
            if (stop.status == EXIT_USAGE) err.print(USAGE);
            err.println(stop.getMessage());
            return stop.status;
        } catch (IOException e) {
            err.println(e.getMessage() != null ? e.getMessage() : e.toString());
            return EXIT_NOTHING;
        }
    }

    /** {@code $KEYWARD_ACTIVATION_DIR}, else {@code ~/.config/keyward-activation}. */
    public static String defaultStateDir(Map<String, String> env) {
        String told = env.get("KEYWARD_ACTIVATION_DIR");
        if (told != null && !told.isEmpty()) return told;
        return Paths.get(System.getProperty("user.home"), ".config", "keyward-activation").toString();
    }

    /**
     * This machine's fingerprint when none is given, as every Keyward SDK's program makes it: an
     * application-specific hash of the systemd machine id ({@code mid1:} and the hex of HMAC-SHA256
     * keyed by the id over {@code keyward-activation}; the id itself is never shown), else of the
     * host name and a MAC address ({@code host1:}).
     */
    public static String machineFingerprint() {
        for (String path : List.of("/etc/machine-id", "/var/lib/dbus/machine-id")) {
            String id;
            try {
                id = Files.readString(Paths.get(path), StandardCharsets.US_ASCII).strip();
            } catch (IOException | RuntimeException e) {
                continue;
            }
            if (id.isEmpty()) continue;
            try {
                Mac mac = Mac.getInstance("HmacSHA256");
                mac.init(new SecretKeySpec(id.getBytes(StandardCharsets.US_ASCII), "HmacSHA256"));
                return "mid1:" + HexFormat.of().formatHex(mac.doFinal("keyward-activation".getBytes(StandardCharsets.US_ASCII)));
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("every JDK has HmacSHA256", e);
            }
        }
        String host = hostName() + "\n" + macAddress();
        try {
            return "host1:" + HexFormat.of().formatHex(
                    MessageDigest.getInstance("SHA-256").digest(host.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    private static String hostName() {
        try {
            return Files.readString(Paths.get("/proc/sys/kernel/hostname"), StandardCharsets.UTF_8).strip();
        } catch (IOException | RuntimeException e) {
            try {
                return InetAddress.getLocalHost().getHostName();
            } catch (IOException | RuntimeException e2) {
                return "localhost";
            }
        }
    }

    private static String macAddress() {
        try {
            List<NetworkInterface> all = Collections.list(NetworkInterface.getNetworkInterfaces());
            all.sort((a, b) -> Integer.compare(a.getIndex(), b.getIndex()));
            for (NetworkInterface one : all) {
                byte[] address = one.isLoopback() ? null : one.getHardwareAddress();
                if (address != null && address.length == 6) return HexFormat.of().formatHex(address);
            }
        } catch (IOException | RuntimeException e) {
            // No interface to name: the host name alone.
        }
        return "000000000000";
    }

    // --- the subcommands ---

    private static int request(Options options, State state, Instant now, InputStream in, PrintStream out,
                               PrintStream err) throws IOException {
        String fingerprint = options.value("fingerprint");
        ActivationRequest request;
        if (options.value("from") != null) {
            for (String name : List.of("app", "asset", "product", "days")) {
                if (options.value(name) != null) {
                    throw new Stop(EXIT_USAGE,
                            "request: --from takes the request as it is; no --app, --asset, --product, --days");
                }
            }
            try {
                request = ActivationRequest.read(readArgument(options.value("from"), in));
            } catch (ActivationFormatException e) {
                String message = "refused: the request does not read: " + e.getMessage();
                if (e.group().isPresent()) message += "\ngroup " + e.group().getAsInt() + " is mistyped: type it again";
                throw new Stop(EXIT_REFUSED, message);
            }
            if (!request.isFor(fingerprint != null ? fingerprint : machineFingerprint())) {
                throw new Stop(EXIT_REFUSED, "refused: the request was made for another machine (give its --fingerprint)");
            }
        } else {
            List<String> missing = new ArrayList<>();
            for (String name : List.of("app", "asset", "product", "days")) {
                if (options.value(name) == null) missing.add("--" + name);
            }
            if (!missing.isEmpty()) {
                throw new Stop(EXIT_USAGE, "request: " + String.join(", ", missing) + " required (or --from CODE)");
            }
            int days = options.days();
            try {
                request = ActivationRequest.builder()
                        .appKey(options.value("app")).assetNum(options.value("asset"))
                        .crmProductId(options.value("product")).days(days)
                        .fingerprint(fingerprint != null ? fingerprint : machineFingerprint())
                        .createdAt(now).build();
            } catch (IllegalArgumentException e) {
                throw new Stop(EXIT_USAGE, "request: " + e.getMessage());
            }
        }

        ActivationRequest replaced = state.pending();
        state.write(REQUEST_FILE, request.fileJson() + "\n", false);
        if (fingerprint != null) {
            state.write(FINGERPRINT_FILE, fingerprint + "\n", false);
        } else {
            state.remove(FINGERPRINT_FILE);
        }
        if (replaced != null && !replaced.equals(request)) {
            err.println("This replaces the pending request made " + iso(replaced.createdAt())
                    + ": its answer will be refused.");
        }
        err.println("Activation request: " + describe(request) + ".");
        err.println("Type this code into Keyward's console (Activate an offline machine), or take "
                + state.path(REQUEST_FILE) + ":");
        out.println(request.code());
        return EXIT_OK;
    }

    private static int install(Options options, State state, Instant now, InputStream in, PrintStream out)
            throws IOException {
        ActivationRequest request = state.pending();
        if (request == null) {
            throw new Stop(EXIT_NOTHING, "no pending request in " + state.dir + ": make one with `request` first");
        }
        if (options.positional.isEmpty()) throw new Stop(EXIT_USAGE, "install: the answer is required");
        Jwks jwks = state.jwks(options.value("jwks"));
        String fingerprint = state.fingerprint(options.value("fingerprint"));
        String answer = options.positional.size() == 1
                ? readArgument(options.positional.get(0), in) : String.join("", options.positional);
        ActivatedLease lease;
        try {
            lease = ActivationVerifier.verify(answer, request, jwks, fingerprint, now);
        } catch (LeaseVerificationException e) {
            throw new Stop(EXIT_REFUSED, refusal(e));
        }

        if (options.value("jwks") != null) state.write(JWKS_FILE, jwks.toJson() + "\n", true);
        ObjectNode installed = MAPPER.createObjectNode();
        installed.put("keyward", "activation-installed");
        installed.put("version", 1);
        installed.put("request", request.code());
        installed.put("answer", answer.strip());
        installed.put("leaseId", lease.leaseId());
        installed.put("issuedAt", lease.issuedAt().getEpochSecond());
        installed.put("expiresAt", lease.expiresAt().getEpochSecond());
        installed.put("expBound", lease.expBound().wire());
        installed.put("installedAt", now.getEpochSecond());
        state.write(ACTIVATION_FILE, MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(installed) + "\n", false);
        state.remove(REQUEST_FILE);
        state.remove(RETURNED_FILE);
        out.println("activated");
        printLease(out, lease, now);
        return EXIT_OK;
    }

    private static int status(Options options, State state, Instant now, PrintStream out) throws IOException {
        int status = EXIT_NOTHING;
        out.println("state: " + state.dir);
        JsonNode installed = state.installed();
        if (installed == null) {
            out.println("activation: none");
        } else {
            try {
                ActivationRequest request = ActivationRequest.read(installed.get("request").textValue());
                ActivatedLease lease = ActivationVerifier.verify(installed.get("answer").textValue(), request,
                        state.jwks(options.value("jwks")), state.fingerprint(options.value("fingerprint")), now);
                out.println("activation: active");
                printLease(out, lease, now);
                status = EXIT_OK;
            } catch (LeaseVerificationException e) {
                out.println("activation: refused: " + e.reason().wire() + ": " + e.detail());
                out.println("lease: " + installed.path("leaseId").asText());
                status = EXIT_REFUSED;
            } catch (ActivationFormatException e) {
                out.println("activation: refused: malformed: " + e.getMessage());
                out.println("lease: " + installed.path("leaseId").asText());
                status = EXIT_REFUSED;
            }
        }
        ActivationRequest pending = state.pending();
        if (pending == null) {
            out.println("pending request: none");
        } else {
            out.println("pending request: " + describe(pending));
            out.println(pending.code());
        }
        JsonNode returned = state.readJson(RETURNED_FILE);
        if (returned != null) {
            out.println("returned: lease " + returned.path("leaseId").asText() + " at "
                    + iso(Instant.ofEpochSecond(returned.path("returnedAt").asLong())));
            out.println("return code: " + returned.path("code").asText());
        }
        return status;
    }

    private static int giveBack(State state, Instant now, PrintStream out, PrintStream err) throws IOException {
        JsonNode installed = state.installed();
        if (installed == null) {
            throw new Stop(EXIT_NOTHING, "nothing to return: no activation is installed in " + state.dir);
        }
        String leaseId = installed.path("leaseId").asText();
        String code;
        try {
            code = ActivationRequest.read(installed.get("request").textValue()).returnCode(leaseId);
        } catch (ActivationFormatException | IllegalArgumentException e) {
            throw new Stop(EXIT_NOTHING, state.path(ACTIVATION_FILE) + " does not read: " + e.getMessage());
        }
        ObjectNode returned = MAPPER.createObjectNode();
        returned.put("leaseId", leaseId);
        returned.put("code", code);
        returned.put("returnedAt", now.getEpochSecond());
        state.write(RETURNED_FILE, MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(returned) + "\n", false);
        state.remove(ACTIVATION_FILE);
        err.println("The activated lease " + leaseId + " is deleted from this machine.");
        err.println("Enter this return code in Keyward's console to free its seat now (where the app allows early return;");
        err.println("elsewhere the seat stays held until the lease expires):");
        out.println(code);
        return EXIT_OK;
    }

    // --- helpers ---

    private static String refusal(LeaseVerificationException e) {
        String message = "refused: " + e.reason().wire() + ": " + e.detail();
        if (e.mistypedGroup().isPresent()) {
            message += "\ngroup " + e.mistypedGroup().getAsInt() + " is mistyped: type it again";
        }
        return message;
    }

    private static void printLease(PrintStream out, ActivatedLease lease, Instant now) {
        out.println("lease: " + lease.leaseId());
        out.println("app: " + lease.appKey());
        out.println("lock: " + lease.assetNum());
        out.println("product: " + lease.crmProductId());
        out.println("issued: " + iso(lease.issuedAt()));
        out.println("expires: " + iso(lease.expiresAt()) + " (" + lease.expBound().wire() + "), "
                + left(lease.expiresAt().getEpochSecond() - now.getEpochSecond()));
    }

    private static String describe(ActivationRequest request) {
        return request.days() + " day" + (request.days() != 1 ? "s" : "") + " of " + request.crmProductId()
                + " on lock " + request.assetNum() + " for app " + request.appKey() + ", made " + iso(request.createdAt());
    }

    private static String iso(Instant at) {
        return ISO.format(at);
    }

    /**
     * To the nearest unit: a 7-day lease read a few seconds after it was issued has 7 days left,
     * not the 6 whole days a rounding down would say.
     */
    private static String left(long seconds) {
        if (seconds >= 2 * 86_400) return (seconds + 43_200) / 86_400 + " days left";
        if (seconds >= 2 * 3_600) return (seconds + 1_800) / 3_600 + " hours left";
        return Math.max(0, (seconds + 30) / 60) + " minutes left";
    }

    /** A code, or the text of the file it names ({@code -}: standard input). */
    private static String readArgument(String text, InputStream in) throws IOException {
        if (text.equals("-")) return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        Path file;
        try {
            file = Paths.get(text);
        } catch (RuntimeException e) {
            return text;
        }
        if (!Files.isRegularFile(file)) return text;
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new Stop(EXIT_NOTHING, "cannot read " + text + ": " + e.getMessage());
        }
    }

    /** Ends the program with a status and a message for standard error. */
    static final class Stop extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int status;

        Stop(int status, String message) {
            super(message);
            this.status = status;
        }
    }

    /** The command line: the command, its options and its other arguments. */
    static final class Options {
        private static final Map<String, Set<String>> ALLOWED = Map.of(
                "request", Set.of("state", "now", "fingerprint", "app", "asset", "product", "days", "from"),
                "install", Set.of("state", "now", "fingerprint", "jwks"),
                "status", Set.of("state", "now", "fingerprint", "jwks"),
                "return", Set.of("state", "now"));

        String command;
        boolean help;
        final Map<String, String> values = new LinkedHashMap<>();
        final List<String> positional = new ArrayList<>();

        static Options parse(List<String> args) {
            Options options = new Options();
            boolean onlyPositional = false;
            for (int i = 0; i < args.size(); i++) {
                String arg = args.get(i);
                if (!onlyPositional && (arg.equals("-h") || arg.equals("--help"))) {
                    options.help = true;
                    return options;
                }
                if (!onlyPositional && arg.equals("--")) {
                    onlyPositional = true;
                } else if (!onlyPositional && arg.startsWith("--")) {
                    int eq = arg.indexOf('=');
                    String name = eq < 0 ? arg.substring(2) : arg.substring(2, eq);
                    String value;
                    if (eq >= 0) {
                        value = arg.substring(eq + 1);
                    } else if (i + 1 < args.size()) {
                        value = args.get(++i);
                    } else {
                        throw new Stop(EXIT_USAGE, "--" + name + " needs a value");
                    }
                    if (options.values.put(name, value) != null) throw new Stop(EXIT_USAGE, "--" + name + " is given twice");
                } else if (options.command == null) {
                    options.command = arg;
                } else {
                    options.positional.add(arg);
                }
            }
            if (options.command == null) throw new Stop(EXIT_USAGE, "a command is required");
            Set<String> allowed = ALLOWED.get(options.command);
            if (allowed == null) throw new Stop(EXIT_USAGE, "unknown command " + options.command);
            for (String name : options.values.keySet()) {
                if (!allowed.contains(name)) throw new Stop(EXIT_USAGE, options.command + ": unknown option --" + name);
            }
            if (!options.command.equals("install") && !options.positional.isEmpty()) {
                throw new Stop(EXIT_USAGE, options.command + ": unexpected argument " + options.positional.get(0));
            }
            if (options.values.containsKey("days")) options.days();
            options.now();
            return options;
        }

        String value(String name) {
            return values.get(name);
        }

        int days() {
            try {
                int days = Integer.parseInt(values.get("days"));
                if (days >= 1 && days <= 365) return days;
            } catch (NumberFormatException e) {
                // Answered below.
            }
            throw new Stop(EXIT_USAGE, "--days must be 1 to 365");
        }

        /** {@code --now SECONDS} (for tests), else the clock. */
        Instant now() {
            String told = values.get("now");
            if (told == null) return Instant.now();
            try {
                double seconds = Double.parseDouble(told);
                if (Double.isFinite(seconds)) return Instant.ofEpochMilli(Math.round(Math.floor(seconds * 1000)));
            } catch (NumberFormatException e) {
                // Answered below.
            }
            throw new Stop(EXIT_USAGE, "--now must be seconds since the epoch");
        }
    }

    /** The state directory. */
    static final class State {
        final Path dir;

        State(Path dir) {
            this.dir = dir;
        }

        Path path(String name) {
            return dir.resolve(name);
        }

        /** Writes a file whole or not at all; readable by its owner alone unless {@code shared}. */
        void write(String name, String text, boolean shared) throws IOException {
            if (!Files.isDirectory(dir)) {
                Files.createDirectories(dir);
                try {
                    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
                } catch (UnsupportedOperationException e) {
                    // Not a POSIX file system: its own rules.
                }
            }
            Path target = path(name);
            Path temp = Files.createTempFile(dir, "." + name, ".tmp");
            try {
                Files.writeString(temp, text, StandardCharsets.UTF_8);
                try {
                    Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString(shared ? "rw-r--r--" : "rw-------"));
                } catch (UnsupportedOperationException e) {
                    // Not a POSIX file system.
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

        void remove(String name) throws IOException {
            Files.deleteIfExists(path(name));
        }

        String readText(String name) {
            try {
                return Files.readString(path(name), StandardCharsets.UTF_8);
            } catch (NoSuchFileException e) {
                return null;
            } catch (IOException e) {
                throw new Stop(EXIT_NOTHING, "cannot read " + path(name) + ": " + e.getMessage());
            }
        }

        JsonNode readJson(String name) {
            String text = readText(name);
            if (text == null) return null;
            JsonNode document;
            try {
                document = MAPPER.readTree(text);
            } catch (IOException e) {
                throw new Stop(EXIT_NOTHING, path(name) + " is not JSON");
            }
            if (document == null || !document.isObject()) throw new Stop(EXIT_NOTHING, path(name) + " is not a JSON object");
            return document;
        }

        ActivationRequest pending() {
            String text = readText(REQUEST_FILE);
            if (text == null) return null;
            try {
                return ActivationRequest.read(text);
            } catch (ActivationFormatException e) {
                throw new Stop(EXIT_NOTHING, path(REQUEST_FILE) + " does not read: " + e.getMessage());
            }
        }

        JsonNode installed() {
            JsonNode document = readJson(ACTIVATION_FILE);
            if (document == null) return null;
            if (!"activation-installed".equals(document.path("keyward").asText(null))
                    || !document.path("answer").isTextual() || !document.path("request").isTextual()) {
                throw new Stop(EXIT_NOTHING, path(ACTIVATION_FILE) + " is not an installed activation");
            }
            return document;
        }

        /** The fingerprint given, else the one the request was made with, else the machine's. */
        String fingerprint(String given) {
            if (given != null) return given;
            String saved = readText(FINGERPRINT_FILE);
            return saved != null ? saved.replaceAll("\\n+$", "") : machineFingerprint();
        }

        Jwks jwks(String given) {
            Path file = given != null ? Paths.get(given) : path(JWKS_FILE);
            if (given == null && !Files.isRegularFile(file)) {
                throw new Stop(EXIT_NOTHING,
                        "no key set: give --jwks FILE (the server's /.well-known/jwks.json, shipped with the software)");
            }
            try {
                return Jwks.load(file);
            } catch (NoSuchFileException e) {
                throw new Stop(EXIT_NOTHING, "cannot read the key set " + file + ": no such file");
            } catch (IOException e) {
                throw new Stop(EXIT_NOTHING, "cannot read the key set " + file + ": " + e.getMessage());
            }
        }
    }
}
