package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"keyward.dev/sdk/go/keyward"
)

// The command built as ci.sh builds it, run against state directories in a temporary directory
// with the conformance vectors (sdks/conformance/activation.json): their request, kept as the
// pending one with `request --from`, has a valid answer in every form, so install, status and
// return run end to end offline, at the vectors' time (--now).

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "keyward-activate-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "keyward-activate")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", binary, ".")
	if output, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, output)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type vectors struct {
	Now      int64           `json:"now"`
	JWKS     json.RawMessage `json:"jwks"`
	Requests []struct {
		Code   string `json:"code"`
		Fields struct {
			Fingerprint string `json:"fingerprint"`
		} `json:"fields"`
	} `json:"requests"`
	Answers []struct {
		Name        string `json:"name"`
		Request     string `json:"request"`
		Fingerprint string `json:"fingerprint"`
		Answer      string `json:"answer"`
		Expect      struct {
			Valid     bool   `json:"valid"`
			Reason    string `json:"reason"`
			LeaseID   string `json:"leaseId"`
			ExpiresAt int64  `json:"expiresAt"`
		} `json:"expect"`
	} `json:"answers"`
	Returns []struct {
		Request string `json:"request"`
		LeaseID string `json:"leaseId"`
		Code    string `json:"code"`
	} `json:"returns"`
}

func readVectors(t *testing.T) *vectors {
	t.Helper()
	dir := os.Getenv("KEYWARD_CONFORMANCE_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "conformance")
	}
	data, err := os.ReadFile(filepath.Join(dir, "activation.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return &v
}

func (v *vectors) answer(t *testing.T, name string) string {
	t.Helper()
	for _, a := range v.Answers {
		if a.Name == name {
			return a.Answer
		}
	}
	t.Fatalf("activation.json has no answer %q", name)
	return ""
}

type result struct {
	out, err string
	status   int
}

// activate runs the built command with args, KEYWARD_ACTIVATION_DIR unset unless env sets it.
func activate(t *testing.T, stdin string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(withoutStateEnv(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := result{out: out.String(), err: errOut.String()}
	if exit, ok := err.(*exec.ExitError); ok {
		r.status = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	t.Logf("$ keyward-activate %s\n%s%s(exit %d)", strings.Join(args, " "), r.out, r.err, r.status)
	return r
}

func withoutStateEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KEYWARD_ACTIVATION_DIR=") {
			env = append(env, kv)
		}
	}
	return env
}

func (r result) want(t *testing.T, status int, texts ...string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("exit %d, want %d\n%s%s", r.status, status, r.out, r.err)
	}
	for _, text := range texts {
		if !strings.Contains(r.out+r.err, text) {
			t.Fatalf("output lacks %q:\n%s%s", text, r.out, r.err)
		}
	}
}

// vectorState is a state directory holding the vendor's JWKS and the vectors' request, pending.
func vectorState(t *testing.T, v *vectors) string {
	t.Helper()
	state := filepath.Join(t.TempDir(), "state")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "jwks.json"), v.JWKS, 0o644); err != nil {
		t.Fatal(err)
	}
	activate(t, "", nil, "request", "--from", v.Requests[0].Code,
		"--fingerprint", v.Requests[0].Fields.Fingerprint, "--state", state).
		want(t, 0, "code: "+v.Requests[0].Code, "app kw_conformance_app, lock 8000000001, product demo-simulator, 30 days")
	return state
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

func TestRequestWritesTheCodeAndTheFile(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	r := activate(t, "", nil, "request", "--app", "kw_demo_app", "--asset", "8000000001",
		"--product", "demo-simulator", "--days", "30", "--state", state)
	r.want(t, 0, "app kw_demo_app, lock 8000000001, product demo-simulator, 30 days",
		"fingerprint: derived from ", "request file: "+filepath.Join(state, "request.json"))

	// The code printed is the file's and the pending request's, on one line and in numbered groups.
	var code string
	for _, line := range strings.Split(r.out, "\n") {
		if strings.HasPrefix(line, "code: ") {
			code = strings.TrimPrefix(line, "code: ")
		}
	}
	groups := strings.Split(code, "-")
	if len(groups) < 5 || !strings.Contains(r.out, "    5  "+groups[4]+" ") {
		t.Fatalf("no code in groups:\n%s", r.out)
	}
	request, err := keyward.LoadActivationRequest(filepath.Join(state, "request.json"))
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := request.Code(); again != code || request.AppKey != "kw_demo_app" || request.Days != 30 {
		t.Fatalf("request.json: %+v", request)
	}
	// The machine's fingerprint is the one every SDK's program derives (mid1: on a machine with a
	// machine id, host1: without).
	if !strings.Contains(r.out, "fingerprint: derived from /etc/machine-id (hashed)") &&
		!strings.Contains(r.out, "fingerprint: derived from /var/lib/dbus/machine-id (hashed)") &&
		!strings.Contains(r.out, "and a MAC address") {
		t.Fatalf("fingerprint source:\n%s", r.out)
	}
	if fp, _, _ := machineFingerprint(); request.FingerprintHash != keyward.FingerprintHash(fp) ||
		!(strings.HasPrefix(fp, "mid1:") || strings.HasPrefix(fp, "host1:")) || len(fp) < 69 {
		t.Fatalf("request made for another fingerprint than %q", fp)
	}
	if info, err := os.Stat(filepath.Join(state, "request.json")); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("request.json %v, %v", info, err)
	}
	if info, err := os.Stat(state); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("state directory %v, %v", info, err)
	}
	if exists(filepath.Join(state, "fingerprint")) {
		t.Fatal("a derived fingerprint was kept")
	}

	// A fingerprint given is in the request (its hash) and kept for install; the state directory
	// from the environment.
	env := []string{"KEYWARD_ACTIVATION_DIR=" + state}
	activate(t, "", env, "request", "--app", "kw_demo_app", "--asset", "8000000001", "--product", "P-2",
		"--days", "7", "--fingerprint", "fp-given").want(t, 0, "fingerprint: given with --fingerprint")
	request, err = keyward.LoadActivationRequest(filepath.Join(state, "request.json"))
	if err != nil || request.FingerprintHash != keyward.FingerprintHash("fp-given") || request.CRMProductID != "P-2" {
		t.Fatalf("%+v, %v", request, err)
	}
	if kept, _ := os.ReadFile(filepath.Join(state, "fingerprint")); strings.TrimSpace(string(kept)) != "fp-given" {
		t.Fatalf("kept %q", kept)
	}

	// What the request cannot be.
	activate(t, "", nil, "request", "--app", "a", "--asset", "1", "--product", "p", "--days", "366", "--state", state).
		want(t, 1, "days must be 1 to 365")
	activate(t, "", nil, "request", "--app", "a", "--asset", "1", "--days", "3", "--state", state).
		want(t, 1, "--product is required")
	activate(t, "", nil, "frobnicate").want(t, 1, "unknown command")
}

func TestInstallStatusReturnEndToEnd(t *testing.T) {
	v := readVectors(t)
	now := fmt.Sprint(v.Now)
	state := vectorState(t, v)
	typed := v.answer(t, "typed")

	// Mistyped: the group is named, as typed (groups as separate arguments), and nothing installed.
	mistyped := strings.Split(v.answer(t, "typed-mistyped"), "-")
	args := append([]string{"install"}, mistyped...)
	activate(t, "", nil, append(args, "--state", state, "--now", now)...).
		want(t, 2, "activation refused (malformed): group 5 does not check", "group 5 is mistyped: "+mistyped[4])
	// Refusals of the vectors, each with its reason.
	for _, name := range []string{"typed-unknown-key", "typed-tampered", "typed-other-request", "typed-expired", "jws-other-request"} {
		var want string
		for _, a := range v.Answers {
			if a.Name == name {
				want = a.Expect.Reason
			}
		}
		activate(t, "", nil, "install", v.answer(t, name), "--state", state, "--now", now).
			want(t, 2, "activation refused ("+want+")")
	}
	activate(t, "", nil, "status", "--state", state, "--now", now).
		want(t, 2, "not active: no lease installed", "a request is pending")

	// The typed answer, typed in lower case with spaces.
	sloppy := strings.ToLower(strings.ReplaceAll(typed, "-", " "))
	activate(t, "", nil, "install", sloppy, "--state", state, "--now", now).
		want(t, 0, "activated: lease 01938f2e-7c1a-7000-8000-00000000a001", "expires: 2027-02-14T08:00:00Z",
			"saved: "+filepath.Join(state, "activation.json")+" (typed code)")
	if doc := readActivation(t, state); doc.Answer != typed || doc.Request != v.Requests[0].Code ||
		doc.LeaseID != "01938f2e-7c1a-7000-8000-00000000a001" || doc.Keyward != "activation-installed" {
		t.Fatalf("saved %+v", doc)
	}
	if exists(filepath.Join(state, "request.json")) {
		t.Fatal("the answered request is still pending")
	}
	activate(t, "", nil, "status", "--state", state, "--now", now).
		want(t, 0, "active until 2027-02-14T08:00:00Z (lease 01938f2e-7c1a-7000-8000-00000000a001; 30 days 0 hours left")
	activate(t, "", nil, "status", "--state", state, "--now", "1802592000").
		want(t, 2, "not active (expired)")
	// Verified on another machine, or with another key set, the saved lease is not active.
	activate(t, "", nil, "status", "--state", state, "--now", now, "--fingerprint", "fp-another-machine").
		want(t, 2, "not active (fingerprint)")
	empty := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(empty, []byte(`{"keys":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	activate(t, "", nil, "status", "--state", state, "--now", now, "--jwks", empty).
		want(t, 2, "not active (unknown-key)")

	// Returned: the vectors' return code, and the lease gone.
	activate(t, "", nil, "return", "--state", state, "--now", now).
		want(t, 0, "deleted: lease 01938f2e-7c1a-7000-8000-00000000a001", "return code: "+v.Returns[0].Code)
	if exists(filepath.Join(state, "activation.json")) {
		t.Fatal("the returned lease is still there")
	}
	var returned struct {
		LeaseID    string `json:"leaseId"`
		Code       string `json:"code"`
		ReturnedAt int64  `json:"returnedAt"`
	}
	if data, err := os.ReadFile(filepath.Join(state, "returned.json")); err != nil || json.Unmarshal(data, &returned) != nil ||
		returned.Code != v.Returns[0].Code || returned.ReturnedAt != v.Now {
		t.Fatalf("returned.json: %+v, %v", returned, err)
	}
	activate(t, "", nil, "status", "--state", state, "--now", now).want(t, 2, "not active: no lease installed")
	activate(t, "", nil, "return", "--state", state, "--now", now).want(t, 2, "not active: no lease installed")
}

func TestInstallTheAnswerFileAndTheJWS(t *testing.T) {
	v := readVectors(t)
	now := fmt.Sprint(v.Now)

	// The answer file, by its path: the signed lease is what is saved.
	state := vectorState(t, v)
	file := filepath.Join(t.TempDir(), "answer.json")
	if err := os.WriteFile(file, []byte(v.answer(t, "file")), 0o644); err != nil {
		t.Fatal(err)
	}
	activate(t, "", nil, "install", file, "--state", state, "--now", now).
		want(t, 0, "activated: lease 01938f2e-7c1a-7000-8000-00000000a001", "(signed lease (JWS))")
	if doc := readActivation(t, state); doc.Answer != v.answer(t, "jws") {
		t.Fatalf("saved %+v", doc)
	}
	activate(t, "", nil, "status", "--state", state, "--now", now).want(t, 0, "active until 2027-02-14T08:00:00Z")

	// The JWS on standard input, the key set elsewhere; an expired lease returns without a code.
	state = vectorState(t, v)
	jwks := filepath.Join(t.TempDir(), "vendor-jwks.json")
	if err := os.Rename(filepath.Join(state, "jwks.json"), jwks); err != nil {
		t.Fatal(err)
	}
	activate(t, v.answer(t, "jws"), nil, "install", "-", "--state", state, "--now", now).
		want(t, 1, "LoadJWKS", "--jwks FILE")
	activate(t, v.answer(t, "jws"), nil, "install", "-", "--state", state, "--now", now, "--jwks", jwks).
		want(t, 0, "activated: lease 01938f2e-7c1a-7000-8000-00000000a001")
	// The key set given is kept for status and return, public (0644).
	if info, err := os.Stat(filepath.Join(state, "jwks.json")); err != nil || info.Mode().Perm() != 0o644 {
		t.Fatalf("jwks.json %v, %v", info, err)
	}
	activate(t, "", nil, "return", "--state", state, "--now", "1802592000", "--jwks", jwks).
		want(t, 0, "deleted: the lease had expired")
	if exists(filepath.Join(state, "activation.json")) {
		t.Fatal("the expired lease is still there")
	}
}

func TestRequestFromRefusesAnotherMachinesRequest(t *testing.T) {
	v := readVectors(t)
	state := filepath.Join(t.TempDir(), "state")
	activate(t, "", nil, "request", "--from", v.Requests[0].Code, "--fingerprint", "fp-another-machine", "--state", state).
		want(t, 1, "made for another fingerprint")
	activate(t, "", nil, "request", "--from", v.Requests[0].Code, "--days", "3", "--fingerprint", "x", "--state", state).
		want(t, 1, "--days with --from")
	// A request file works as well as its code; a mistyped code names its group.
	file := filepath.Join(t.TempDir(), "request.json")
	code := v.Requests[0].Code
	if err := os.WriteFile(file, []byte(`{"keyward":"activation-request","version":1,"code":"`+code+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	activate(t, "", nil, "request", "--from", file, "--fingerprint", v.Requests[0].Fields.Fingerprint, "--state", state).
		want(t, 0, "code: "+code)
	activate(t, "", nil, "request", "--from", "B"+code[1:], "--fingerprint", "x", "--state", state).
		want(t, 1, "group 1 does not check")
	activate(t, "", nil, "install", "--state", state).want(t, 1, "no answer")
	activate(t, "", nil, "install", "ABC", "--state", filepath.Join(t.TempDir(), "none")).want(t, 1, "no pending request")
}

func readActivation(t *testing.T, state string) (doc activationDocument) {
	t.Helper()
	path := filepath.Join(state, "activation.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Fatalf("activation.json is %v", info.Mode())
	}
	return doc
}

// A state directory of the layout this program wrote before (pending-request.json; lease and
// lease-request.json) is moved to the shared one, and its activation keeps working.
func TestTheEarlierLayoutIsMoved(t *testing.T) {
	v := readVectors(t)
	now := fmt.Sprint(v.Now)
	state := filepath.Join(t.TempDir(), "state")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	request, err := keyward.ParseActivationRequest(v.Requests[0].Code)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"jwks.json":   string(v.JWKS),
		"fingerprint": v.Requests[0].Fields.Fingerprint + "\n",
		"lease":       v.answer(t, "typed") + "\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(state, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"lease-request.json", "pending-request.json"} {
		if err := keyward.SaveActivationRequest(filepath.Join(state, name), request); err != nil {
			t.Fatal(err)
		}
	}
	activate(t, "", nil, "status", "--state", state, "--now", now).
		want(t, 0, "active until 2027-02-14T08:00:00Z (lease 01938f2e-7c1a-7000-8000-00000000a001")
	for _, name := range []string{"lease", "lease-request.json", "pending-request.json"} {
		if exists(filepath.Join(state, name)) {
			t.Fatalf("%s is still there", name)
		}
	}
	if doc := readActivation(t, state); doc.Answer != v.answer(t, "typed") || doc.ExpiresAt != 1802592000 {
		t.Fatalf("moved %+v", doc)
	}
	if again, err := keyward.LoadActivationRequest(filepath.Join(state, "request.json")); err != nil || again.FingerprintHash != request.FingerprintHash {
		t.Fatalf("the pending request did not move: %v", err)
	}
	activate(t, "", nil, "return", "--state", state, "--now", now).want(t, 0, "return code: "+v.Returns[0].Code)
}

// A request made with the fingerprint this program derived before (machine-id:…) keeps that
// fingerprint in the state directory when moved, so its answer still verifies.
func TestALegacyFingerprintIsKept(t *testing.T) {
	legacy := legacyFingerprint()
	current, _, err := machineFingerprint()
	if legacy == "" || err != nil {
		t.Skip("this machine has no machine id and no host name")
	}
	if legacy == current || !strings.HasPrefix(current, "mid1:") && !strings.HasPrefix(current, "host1:") {
		t.Fatalf("legacy %q, current %q", legacy, current)
	}
	state := filepath.Join(t.TempDir(), "state")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	old, err := keyward.NewActivationRequest(keyward.ActivationRequestOptions{
		AppKey: "kw_demo_app", AssetNum: "8000000001", CRMProductID: "demo-simulator", Days: 30, Fingerprint: legacy,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := keyward.SaveActivationRequest(filepath.Join(state, "pending-request.json"), old.Request); err != nil {
		t.Fatal(err)
	}
	activate(t, "", nil, "status", "--state", state).want(t, 2, "a request is pending")
	if kept, _ := os.ReadFile(filepath.Join(state, "fingerprint")); string(kept) != legacy+"\n" {
		t.Fatalf("kept %q, want %q", kept, legacy)
	}
	// A new request for the machine's own fingerprint is in the shared form, and keeps none.
	activate(t, "", nil, "request", "--app", "kw_demo_app", "--asset", "8000000001", "--product", "demo-simulator",
		"--days", "30", "--state", state).want(t, 0, "fingerprint: derived from")
	if exists(filepath.Join(state, "fingerprint")) {
		t.Fatal("the legacy fingerprint outlived a request made without it")
	}
}

// The default state directory is ~/.config/keyward-activation, as for the other SDKs' programs; one
// this program kept under XDG_CONFIG_HOME before is moved there.
func TestTheDefaultStateDirectoryIsShared(t *testing.T) {
	v := readVectors(t)
	home := t.TempDir()
	earlier := filepath.Join(home, "xdg", "keyward-activation")
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "xdg")}
	activate(t, "", nil, "request", "--from", v.Requests[0].Code, "--fingerprint", v.Requests[0].Fields.Fingerprint,
		"--state", earlier).want(t, 0)
	if err := os.Rename(filepath.Join(earlier, "request.json"), filepath.Join(earlier, "pending-request.json")); err != nil {
		t.Fatal(err)
	}
	activate(t, "", env, "status").want(t, 2, "a request is pending")
	shared := filepath.Join(home, ".config", "keyward-activation")
	if !exists(filepath.Join(shared, "request.json")) || !exists(filepath.Join(shared, "fingerprint")) || exists(earlier) {
		t.Fatal("the earlier state directory was not moved to " + shared)
	}
}
