// Command keyward-activate activates a program on a machine that never reaches Keyward
// (docs/activation.md), with the Go SDK alone: a vendor ships it beside the program and the
// server's JWKS.
//
//	keyward-activate request --app KEY --asset NUM --product ID --days N [--fingerprint FP] [--state DIR]
//	keyward-activate request --from CODE|FILE [--fingerprint FP] [--state DIR]
//	keyward-activate install ANSWER… [--jwks FILE] [--state DIR]
//	keyward-activate status [--jwks FILE] [--state DIR]
//	keyward-activate return [--jwks FILE] [--state DIR]
//
// The state directory is --state, else $KEYWARD_ACTIVATION_DIR, else ~/.config/keyward-activation.
// It is laid out as every Keyward SDK's activation program lays it out
// (sdks/conformance/README.md, "The activation state directory"): request.json (the pending
// request, and the file to carry), fingerprint (when one was given), jwks.json (the key set),
// activation.json (the installed answer) and returned.json (the last return code). A directory
// in the layout this program wrote before (pending-request.json, lease, lease-request.json) is
// moved to it when read.
//
// Exit status: 0 done (status: active); 2 refused (the answer or the saved lease does not verify,
// or nothing is active); 1 the command could not run (usage, files).
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"keyward.dev/sdk/go/keyward"
)

const usage = `keyward-activate: offline activation of a program that never reaches Keyward

  keyward-activate request --app KEY --asset NUM --product ID --days N [--fingerprint FP] [--state DIR]
      makes this machine's request: prints its typed code and writes request.json to carry
  keyward-activate request --from CODE|FILE [--fingerprint FP] [--state DIR]
      keeps an existing request (its code, or its file) as this machine's pending request
  keyward-activate install ANSWER... [--jwks FILE] [--state DIR]
      verifies the answer (its typed code, spaces allowed, or the answer file's path, or - for
      standard input) against the pending request and installs the lease
  keyward-activate status [--jwks FILE] [--state DIR]
      verifies the installed lease now: "active until ..."
  keyward-activate return [--jwks FILE] [--state DIR]
      deletes the installed lease and prints its return code, to free its seat early

The state directory: --state, else $KEYWARD_ACTIVATION_DIR, else ~/.config/keyward-activation,
laid out as every Keyward SDK's activation program lays it out (the Python and Java programs
read it too). The JWKS (the server's public keys, shipped by the vendor): --jwks (kept in the
state directory by install), else jwks.json in the state directory. Without --fingerprint, the
machine's is derived from /etc/machine-id (hashed: mid1:...), else the host name and a MAC
address (host1:...); a fingerprint given to request is kept for the other commands.
Exit status: 0 done; 2 refused or not active; 1 could not run.
`

// Files of the state directory, as every SDK's activation program names them.
const (
	requestFile     = "request.json"
	fingerprintFile = "fingerprint"
	jwksFile        = "jwks.json"
	activationFile  = "activation.json"
	returnedFile    = "returned.json"
)

// Files of the layout this program wrote before the shared one, read once to move them.
const (
	legacyPendingFile      = "pending-request.json"
	legacyLeaseFile        = "lease"
	legacyLeaseRequestFile = "lease-request.json"
)

// refused is a verification's refusal: exit status 2.
type refused struct{ message string }

func (r *refused) Error() string { return r.message }

func main() {
	err := run(os.Args[1:], os.Stdin, os.Stdout)
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "keyward-activate:", err)
	var no *refused
	if errors.As(err, &no) {
		os.Exit(2)
	}
	os.Exit(1)
}

// options are every command's flags; a command refuses those it does not take.
type options struct {
	state, jwks, fingerprint string
	app, asset, product      string
	days                     int
	from                     string
	now                      string // seconds since the epoch, for tests: the time to verify at
	set                      map[string]bool
}

func run(args []string, stdin io.Reader, out io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(out, usage)
		if len(args) == 0 {
			return errors.New("no command")
		}
		return nil
	}
	command, rest := args[0], args[1:]
	takes := map[string][]string{
		"request": {"state", "fingerprint", "app", "asset", "product", "days", "from"},
		"install": {"state", "jwks", "fingerprint", "now"},
		"status":  {"state", "jwks", "fingerprint", "now"},
		"return":  {"state", "jwks", "fingerprint", "now"},
	}[command]
	if takes == nil {
		return fmt.Errorf("unknown command %q (request, install, status, return; --help)", command)
	}
	o, positional, err := parse(command, rest, takes)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(out, usage)
		return nil
	} else if err != nil {
		return err
	}
	if command != "install" && len(positional) > 0 {
		return fmt.Errorf("%s: unexpected %q", command, positional[0])
	}
	if o.state == "" {
		o.state = os.Getenv("KEYWARD_ACTIVATION_DIR")
	}
	if o.state == "" {
		state, err := defaultState()
		if err != nil {
			return err
		}
		o.state = state
	}
	if abs, err := filepath.Abs(o.state); err == nil {
		o.state = abs
	}
	if o.jwks == "" {
		o.jwks = filepath.Join(o.state, jwksFile)
	}
	if err := migrate(o); err != nil {
		return err
	}
	switch command {
	case "request":
		return request(o, out)
	case "install":
		return install(o, positional, stdin, out)
	case "status":
		return status(o, out)
	default:
		return giveBack(o, out)
	}
}

// defaultState is ~/.config/keyward-activation, where every SDK's program looks by default. A
// directory this program kept under os.UserConfigDir (another folder with XDG_CONFIG_HOME set, on
// macOS or on Windows) before the shared layout is moved there when none is there yet.
func defaultState() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no state directory (--state or KEYWARD_ACTIVATION_DIR): %w", err)
	}
	state := filepath.Join(home, ".config", "keyward-activation")
	if config, err := os.UserConfigDir(); err == nil {
		earlier := filepath.Join(config, "keyward-activation")
		if _, err := os.Stat(state); errors.Is(err, os.ErrNotExist) && earlier != state {
			if _, err := os.Stat(earlier); err == nil {
				if os.MkdirAll(filepath.Dir(state), 0o700) != nil || os.Rename(earlier, state) != nil {
					return earlier, nil // not movable (another file system): read where it is
				}
			}
		}
	}
	return state, nil
}

// parse reads the flags wherever they stand among the arguments (`install CODE --state DIR`).
func parse(command string, args, takes []string) (*options, []string, error) {
	o := &options{}
	fs := flag.NewFlagSet(command, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	values := map[string]*string{
		"state": &o.state, "jwks": &o.jwks, "fingerprint": &o.fingerprint, "app": &o.app,
		"asset": &o.asset, "product": &o.product, "from": &o.from, "now": &o.now,
	}
	for _, name := range takes {
		if name == "days" {
			fs.IntVar(&o.days, name, 0, "")
		} else {
			fs.StringVar(values[name], name, "", "")
		}
	}
	var flags, positional []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(arg) < 2 || arg[0] != '-' {
			positional = append(positional, arg)
			continue
		}
		flags = append(flags, arg)
		if !strings.Contains(arg, "=") && i+1 < len(args) {
			flags = append(flags, args[i+1])
			i++
		}
	}
	for _, arg := range flags {
		if arg == "-h" || arg == "-help" || arg == "--help" {
			return nil, nil, flag.ErrHelp
		}
	}
	if err := fs.Parse(flags); err != nil {
		return nil, nil, fmt.Errorf("%s: %v (--help)", command, err)
	}
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	return o, positional, nil
}

// fingerprintOf is the machine's fingerprint and where it came from: --fingerprint, the one a
// request was given (kept in the state directory), or the machine's own.
func fingerprintOf(o *options) (fingerprint, source string, err error) {
	if o.fingerprint != "" {
		return o.fingerprint, "given with --fingerprint", nil
	}
	if kept := keptFingerprint(o); kept != "" {
		return kept, "given to request (kept in " + filepath.Join(o.state, fingerprintFile) + ")", nil
	}
	return machineFingerprint()
}

func keptFingerprint(o *options) string {
	data, err := os.ReadFile(filepath.Join(o.state, fingerprintFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

var machineIDFiles = []string{"/etc/machine-id", "/var/lib/dbus/machine-id"}

func machineID() (id, path string) {
	for _, path := range machineIDFiles {
		data, err := os.ReadFile(path)
		if id := strings.TrimSpace(string(data)); err == nil && id != "" {
			return id, path
		}
	}
	return "", ""
}

// machineFingerprint is this machine's fingerprint as every Keyward SDK's activation program
// derives it, byte for byte, so one machine has one fingerprint whichever program asks: "mid1:"
// and the hex of HMAC-SHA256 keyed by the systemd machine id over "keyward-activation" (the id
// itself is never shown or sent), else "host1:" and the hex of SHA-256 over the host name, a
// newline and the first MAC address (lowercase hex, no separators; twelve zeros without one).
func machineFingerprint() (fingerprint, source string, err error) {
	if id, path := machineID(); id != "" {
		mac := hmac.New(sha256.New, []byte(id))
		mac.Write([]byte("keyward-activation"))
		return "mid1:" + hex.EncodeToString(mac.Sum(nil)), "derived from " + path + " (hashed)", nil
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		return "", "", errors.New("no fingerprint: this machine has no machine id and no host name; give --fingerprint")
	}
	sum := sha256.Sum256([]byte(host + "\n" + macAddress()))
	return "host1:" + hex.EncodeToString(sum[:]), "derived from the host name " + host + " and a MAC address", nil
}

// macAddress is the hardware address of the interface of lowest index that is not a loopback,
// has an IP address and a non-zero 6-byte hardware address, as the Java and Python SDKs' programs
// choose it (the JDK sees only interfaces with an address; an interface without one, such as an
// ifb, would otherwise make this machine's fingerprint another in Go).
func macAddress() string {
	interfaces, err := net.Interfaces()
	if err == nil {
		sort.Slice(interfaces, func(i, j int) bool { return interfaces[i].Index < interfaces[j].Index })
		for _, one := range interfaces {
			if one.Flags&net.FlagLoopback != 0 || len(one.HardwareAddr) != 6 {
				continue
			}
			if addresses, err := one.Addrs(); err == nil && len(addresses) > 0 {
				return hex.EncodeToString(one.HardwareAddr)
			}
		}
	}
	return "000000000000"
}

// legacyFingerprint is the fingerprint this program derived before the shared form
// ("machine-id:" and SHA-256 of the program's name and the id, else "host:" and the host name).
// It is read only to keep a request or an activation made with it working (migrate).
func legacyFingerprint() string {
	if id, _ := machineID(); id != "" {
		sum := sha256.Sum256([]byte("keyward-activate\n" + id))
		return "machine-id:" + hex.EncodeToString(sum[:])
	}
	if host, err := os.Hostname(); err == nil && host != "" {
		return "host:" + host
	}
	return ""
}

// keepLegacyFingerprint keeps the old form of this machine's fingerprint in the state directory
// when a request in it was made with that form and no fingerprint is kept already: every
// program then verifies its answer with the fingerprint it was made for.
func keepLegacyFingerprint(o *options, r *keyward.ActivationRequest) error {
	if keptFingerprint(o) != "" {
		return nil
	}
	if current, _, err := machineFingerprint(); err == nil && r.FingerprintHash == keyward.FingerprintHash(current) {
		return nil
	}
	legacy := legacyFingerprint()
	if legacy == "" || r.FingerprintHash != keyward.FingerprintHash(legacy) {
		return nil
	}
	return writeFile(filepath.Join(o.state, fingerprintFile), []byte(legacy+"\n"), 0o600)
}

// migrate moves a state directory from the layout this program wrote before (pending-request.json;
// lease and lease-request.json) to the shared one, so an activation made with an earlier version
// keeps working and the other SDKs' programs read it. The pending request moves at once; the
// installed lease moves when it next verifies (installed), activation.json needing its lease ID.
func migrate(o *options) error {
	for _, name := range []string{legacyPendingFile, legacyLeaseRequestFile} {
		if r, err := keyward.LoadActivationRequest(filepath.Join(o.state, name)); err == nil {
			if err := keepLegacyFingerprint(o, r); err != nil {
				return err
			}
		}
	}
	old := filepath.Join(o.state, legacyPendingFile)
	r, err := keyward.LoadActivationRequest(old)
	if err != nil {
		return nil // none, or one that does not read: left as it is, for a person to look at
	}
	if err := keyward.SaveActivationRequest(filepath.Join(o.state, requestFile), r); err != nil {
		return err
	}
	return remove(o, legacyPendingFile)
}

// writeFile writes data whole or not at all (a file beside path renamed over it), with mode.
func writeFile(path string, data []byte, mode os.FileMode) error {
	temp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(temp.Name())
	if _, err := temp.Write(data); err != nil {
		temp.Close()
		return err
	}
	if err := temp.Chmod(mode); err != nil {
		temp.Close()
		return err
	}
	if err := temp.Close(); err != nil {
		return err
	}
	return os.Rename(temp.Name(), path)
}

// remove deletes the state directory's files named; one already gone is no error.
func remove(o *options, names ...string) error {
	for _, name := range names {
		if err := os.Remove(filepath.Join(o.state, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// nowOf is --now (seconds), else the current time.
func nowOf(o *options) (time.Time, error) {
	if o.now == "" {
		return time.Now(), nil
	}
	seconds, err := strconv.ParseInt(o.now, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("--now %q is not seconds since the epoch", o.now)
	}
	return time.Unix(seconds, 0), nil
}

func when(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// printCode prints a typed code on one line, then four groups a line, numbered, for reading.
func printCode(out io.Writer, label, code string) {
	fmt.Fprintf(out, "%s: %s\n", label, code)
	groups := strings.Split(code, "-")
	for i := 0; i < len(groups); i += 4 {
		end := i + 4
		if end > len(groups) {
			end = len(groups)
		}
		fmt.Fprintf(out, "  %3d  %s\n", i+1, strings.Join(groups[i:end], " "))
	}
}

func request(o *options, out io.Writer) error {
	// A new request is for the fingerprint given, else the machine's own: never one kept for an
	// earlier request (as the other SDKs' programs make it).
	fingerprint, source, err := o.fingerprint, "given with --fingerprint", error(nil)
	if fingerprint == "" {
		fingerprint, source, err = machineFingerprint()
	}
	if err != nil {
		return err
	}
	var pending *keyward.PendingActivation
	if o.set["from"] {
		for _, name := range []string{"app", "asset", "product", "days"} {
			if o.set[name] {
				return fmt.Errorf("request: --%s with --from: the request says it", name)
			}
		}
		text := o.from
		if data, err := os.ReadFile(o.from); err == nil {
			text = string(data)
		}
		r, err := keyward.ParseActivationRequest(text)
		if err != nil {
			return fmt.Errorf("request --from: %w", err)
		}
		if r.FingerprintHash != keyward.FingerprintHash(fingerprint) {
			return fmt.Errorf("request --from: the request was made for another fingerprint than this machine's (%s)", source)
		}
		code, err := r.Code()
		if err != nil {
			return err
		}
		file, err := r.File()
		if err != nil {
			return err
		}
		pending = &keyward.PendingActivation{Request: r, Code: code, File: file}
	} else {
		for _, name := range []string{"app", "asset", "product", "days"} {
			if !o.set[name] {
				return fmt.Errorf("request: --%s is required (--help)", name)
			}
		}
		pending, err = keyward.NewActivationRequest(keyward.ActivationRequestOptions{
			AppKey: o.app, AssetNum: o.asset, CRMProductID: o.product, Days: o.days, Fingerprint: fingerprint,
		})
		if err != nil {
			return err
		}
	}
	if err := os.MkdirAll(o.state, 0o700); err != nil {
		return err
	}
	// request.json is both the pending request and the file to carry to Keyward.
	carried := filepath.Join(o.state, requestFile)
	if err := keyward.SaveActivationRequest(carried, pending.Request); err != nil {
		return err
	}
	// As the other SDKs' programs do: a fingerprint given is kept for install and status; a request
	// for the machine's own fingerprint leaves none kept.
	if o.fingerprint != "" {
		if err := writeFile(filepath.Join(o.state, fingerprintFile), []byte(o.fingerprint+"\n"), 0o600); err != nil {
			return err
		}
	} else if err := remove(o, fingerprintFile); err != nil {
		return err
	}
	r := pending.Request
	fmt.Fprintf(out, "request: app %s, lock %s, product %s, %d days, made %s\n",
		r.AppKey, r.AssetNum, r.CRMProductID, r.Days, when(r.CreatedAt))
	fmt.Fprintf(out, "fingerprint: %s; only its hash is in the request\n", source)
	printCode(out, "code", pending.Code)
	fmt.Fprintf(out, "request file: %s\n", carried)
	fmt.Fprintln(out, "Type the code into Keyward's console (Activate an offline machine), or carry the file there")
	fmt.Fprintln(out, "(keyward leases activate request.json --out answer.json); then install the answer here:")
	fmt.Fprintln(out, "keyward-activate install ANSWER-CODE (or the answer file's path)")
	return nil
}

// answerOf is the answer as given: the arguments joined (a typed code, spaces allowed), the
// content of the file they name, or standard input for "-".
func answerOf(args []string, stdin io.Reader) (text string, typed bool, err error) {
	if len(args) == 0 {
		return "", false, errors.New("install: no answer: its typed code, the answer file's path, or - for standard input")
	}
	if len(args) == 1 && args[0] == "-" {
		data, err := io.ReadAll(stdin)
		return string(data), false, err
	}
	if len(args) == 1 {
		if info, err := os.Stat(args[0]); err == nil && !info.IsDir() {
			data, err := os.ReadFile(args[0])
			return string(data), false, err
		}
	}
	return strings.Join(args, " "), true, nil
}

// typedGroup is group n (from 1) of a typed code as the person typed it.
func typedGroup(text string, n int) string {
	var compact []rune
	for _, r := range strings.ToUpper(text) {
		if r != '-' && !unicode.IsSpace(r) {
			compact = append(compact, r)
		}
	}
	from, to := (n-1)*6, n*6
	if from >= len(compact) {
		return ""
	}
	if to > len(compact) {
		to = len(compact)
	}
	return string(compact[from:to])
}

// refusal explains a refused answer or lease, and what to do about it.
func refusal(err error, o *options, answer string, typed bool) error {
	var no *keyward.LeaseError
	if !errors.As(err, &no) {
		return err
	}
	installing := answer != ""
	message := fmt.Sprintf("not active (%s): %s", no.Reason, no.Detail)
	if installing {
		message = fmt.Sprintf("activation refused (%s): %s", no.Reason, no.Detail)
	}
	switch {
	case no.Group > 0 && typed:
		message += fmt.Sprintf("\ngroup %d is mistyped: %s; type it again", no.Group, typedGroup(answer, no.Group))
	case no.Group > 0:
		message += fmt.Sprintf("\ngroup %d is mistyped", no.Group)
	case no.Reason == keyward.ReasonUnknownKey:
		message += "\nno key of " + o.jwks + " signed it: install the vendor's current jwks.json"
	case no.Reason == keyward.ReasonRequest:
		message += "\nit answers another request than the pending one (each request command makes a new one)"
	case no.Reason == keyward.ReasonFingerprint:
		message += "\nit was activated for another machine"
	case no.Reason == keyward.ReasonExpired && !installing:
		message += "\nits days are over: make a new request (keyward-activate request)"
	case no.Reason == keyward.ReasonExpired || no.Reason == keyward.ReasonNotYetValid:
		message += "\ncheck this machine's clock"
	}
	return &refused{message}
}

func loadJWKS(o *options) (*keyward.JWKS, error) {
	jwks, err := keyward.LoadJWKS(o.jwks)
	if err != nil {
		return nil, fmt.Errorf("%w (the vendor ships the server's jwks.json; --jwks FILE)", err)
	}
	return jwks, nil
}

func install(o *options, args []string, stdin io.Reader, out io.Writer) error {
	answer, typed, err := answerOf(args, stdin)
	if err != nil {
		return err
	}
	pendingPath := filepath.Join(o.state, requestFile)
	if _, err := os.Stat(pendingPath); err != nil {
		return fmt.Errorf("install: no pending request in %s: run keyward-activate request first", o.state)
	}
	r, err := keyward.LoadActivationRequest(pendingPath)
	if err != nil {
		return err
	}
	jwks, err := loadJWKS(o)
	if err != nil {
		return err
	}
	fingerprint, _, err := fingerprintOf(o)
	if err != nil {
		return err
	}
	now, err := nowOf(o)
	if err != nil {
		return err
	}
	lease, err := keyward.VerifyActivation(answer, jwks, keyward.ActivationVerifyOptions{
		Request: r, Fingerprint: fingerprint, Now: now,
	})
	if err != nil {
		return refusal(err, o, answer, typed)
	}
	if o.set["jwks"] {
		// Kept for status and return, by this program or another SDK's.
		if err := keyward.SaveJWKS(filepath.Join(o.state, jwksFile), jwks); err != nil {
			return err
		}
	}
	saved := filepath.Join(o.state, activationFile)
	if err := saveActivation(saved, r, lease, now); err != nil {
		return err
	}
	// Answered: Keyward answers a request once, so it is pending no more.
	if err := remove(o, requestFile, returnedFile); err != nil {
		return err
	}
	form := "typed code"
	if lease.Claims != nil {
		form = "signed lease (JWS)"
	}
	fmt.Fprintf(out, "activated: lease %s\n", lease.LeaseID)
	fmt.Fprintf(out, "expires: %s (bound: %s)\n", when(lease.ExpiresAt), lease.ExpBound)
	fmt.Fprintf(out, "for: app %s, lock %s, product %s\n", lease.AppKey, lease.AssetNum, lease.CRMProductID)
	fmt.Fprintf(out, "saved: %s (%s)\n", saved, form)
	return nil
}

// activationDocument is activation.json: the installed answer and the request it answers, with
// what it says for a person reading the file (the answer is verified again at every use).
type activationDocument struct {
	Keyward     string `json:"keyward"`
	Version     int    `json:"version"`
	Request     string `json:"request"`
	Answer      string `json:"answer"`
	LeaseID     string `json:"leaseId"`
	IssuedAt    int64  `json:"issuedAt"`
	ExpiresAt   int64  `json:"expiresAt"`
	ExpBound    string `json:"expBound"`
	InstalledAt int64  `json:"installedAt"`
}

const activationKind = "activation-installed"

func saveActivation(path string, r *keyward.ActivationRequest, lease *keyward.ActivatedLease, now time.Time) error {
	code, err := r.Code()
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(activationDocument{
		Keyward: activationKind, Version: 1, Request: code, Answer: lease.Lease, LeaseID: lease.LeaseID,
		IssuedAt: lease.IssuedAt.Unix(), ExpiresAt: lease.ExpiresAt.Unix(), ExpBound: lease.ExpBound,
		InstalledAt: now.Unix(),
	}, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(path, append(data, '\n'), 0o600)
}

// installedAnswer is the installed answer and the request it answers, from activation.json, else
// from the earlier layout (legacy true); "" when none is installed.
func installedAnswer(o *options) (answer string, r *keyward.ActivationRequest, legacy bool, err error) {
	path := filepath.Join(o.state, activationFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		answer, err := keyward.LoadLease(filepath.Join(o.state, legacyLeaseFile))
		if errors.Is(err, os.ErrNotExist) {
			return "", nil, false, nil
		} else if err != nil {
			return "", nil, false, err
		}
		r, err := keyward.LoadActivationRequest(filepath.Join(o.state, legacyLeaseRequestFile))
		return answer, r, true, err
	} else if err != nil {
		return "", nil, false, err
	}
	var doc activationDocument
	if json.Unmarshal(data, &doc) != nil || doc.Keyward != activationKind || doc.Answer == "" || doc.Request == "" {
		return "", nil, false, fmt.Errorf("%s is not an installed activation", path)
	}
	if r, err = keyward.ParseActivationRequest(doc.Request); err != nil {
		return "", nil, false, fmt.Errorf("%s: %w", path, err)
	}
	return doc.Answer, r, false, nil
}

// installed verifies the installed lease at now, and the request it answers; nil when none is
// installed. A lease of the earlier layout that verifies is moved to activation.json.
func installed(o *options) (*keyward.ActivatedLease, *keyward.ActivationRequest, error) {
	answer, r, legacy, err := installedAnswer(o)
	if err != nil || answer == "" {
		return nil, nil, err
	}
	jwks, err := loadJWKS(o)
	if err != nil {
		return nil, nil, err
	}
	fingerprint, _, err := fingerprintOf(o)
	if err != nil {
		return nil, nil, err
	}
	now, err := nowOf(o)
	if err != nil {
		return nil, nil, err
	}
	lease, err := keyward.VerifyActivation(answer, jwks, keyward.ActivationVerifyOptions{
		Request: r, Fingerprint: fingerprint, Now: now,
	})
	if err != nil {
		return nil, r, err
	}
	if legacy {
		if err := saveActivation(filepath.Join(o.state, activationFile), r, lease, now); err != nil {
			return nil, nil, err
		}
		if err := remove(o, legacyLeaseFile, legacyLeaseRequestFile); err != nil {
			return nil, nil, err
		}
	}
	return lease, r, nil
}

func notInstalled(o *options) error {
	message := "not active: no lease installed in " + o.state
	if _, err := os.Stat(filepath.Join(o.state, requestFile)); err == nil {
		message += " (a request is pending: keyward-activate install ANSWER)"
	}
	return &refused{message}
}

func status(o *options, out io.Writer) error {
	lease, _, err := installed(o)
	if err != nil {
		return refusal(err, o, "", false)
	}
	if lease == nil {
		return notInstalled(o)
	}
	now, _ := nowOf(o)
	left := lease.ExpiresAt.Sub(now)
	fmt.Fprintf(out, "active until %s (lease %s; %d days %d hours left; bound: %s)\n", when(lease.ExpiresAt),
		lease.LeaseID, int(left.Hours())/24, int(left.Hours())%24, lease.ExpBound)
	fmt.Fprintf(out, "for: app %s, lock %s, product %s\n", lease.AppKey, lease.AssetNum, lease.CRMProductID)
	return nil
}

func giveBack(o *options, out io.Writer) error {
	lease, r, err := installed(o)
	var no *keyward.LeaseError
	expired := errors.As(err, &no) && no.Reason == keyward.ReasonExpired
	if err != nil && !expired {
		return refusal(err, o, "", false)
	}
	if lease == nil && !expired {
		return notInstalled(o)
	}
	code := ""
	if !expired {
		if code, err = keyward.ActivationReturnCode(r, lease.LeaseID); err != nil {
			return err
		}
		// Kept, as the other SDKs' programs keep it, for status to show until the next install.
		now, _ := nowOf(o)
		returned, err := json.MarshalIndent(map[string]any{
			"leaseId": lease.LeaseID, "code": code, "returnedAt": now.Unix(),
		}, "", "  ")
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(o.state, returnedFile), append(returned, '\n'), 0o600); err != nil {
			return err
		}
	}
	// The lease goes before its return code shows: a returned seat is never still in use here.
	if err := remove(o, activationFile, legacyLeaseFile, legacyLeaseRequestFile); err != nil {
		return err
	}
	if expired {
		fmt.Fprintf(out, "deleted: the lease had expired (%s); its seat is free already\n", no.Detail)
		return nil
	}
	fmt.Fprintf(out, "deleted: lease %s\n", lease.LeaseID)
	printCode(out, "return code", code)
	fmt.Fprintf(out, "Enter the return code in Keyward's console (or keyward leases return CODE) to free the seat now,\n")
	fmt.Fprintf(out, "where the app allows early return;\n")
	fmt.Fprintf(out, "otherwise the seat is held until %s.\n", when(lease.ExpiresAt))
	return nil
}
