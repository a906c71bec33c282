// The same program as a named module: keyward-java is the automatic module dev.keyward (its
// manifest's Automatic-Module-Name). An automatic module declares no requires of its own, so the
// JDK module its HTTP client is in must be required here (or given with --add-modules).
module com.example.app {
    requires dev.keyward;
    requires java.net.http;
}
