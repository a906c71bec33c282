package keyward

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// A clock the tests move.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newTestSession(t *testing.T, stub *stubKeyward, prefix string, opts ...Option) *Session {
	t.Helper()
	session, err := NewSession(stub.server.URL+prefix, stubAppKey, stubAppSecret, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return session
}

func heartbeatOnce(t *testing.T, session *Session) error {
	t.Helper()
	lease := &Lease{ID: "lease-1", Fingerprint: "fp-test-machine", session: session}
	_, err := lease.Heartbeat(context.Background())
	return err
}

func TestSessionObtainsReusesAndRenewsTheToken(t *testing.T) {
	for _, c := range []struct {
		name      string
		expiresIn int64
		renewAt   time.Duration // a minute early, or at 90% of a short lifetime
	}{
		{"two hours", 7200, 7200*time.Second - time.Minute},
		{"five minutes", 300, 270 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			stub := newStub(t, "")
			stub.expiresIn = c.expiresIn
			clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
			session := newTestSession(t, stub, "", WithClock(clock.Now))
			for i := 0; i < 3; i++ {
				if err := heartbeatOnce(t, session); err != nil {
					t.Fatal(err)
				}
			}
			if n := stub.tokensIssued(); n != 1 {
				t.Fatalf("%d tokens for three calls, want 1", n)
			}
			clock.Advance(c.renewAt - time.Second)
			if err := heartbeatOnce(t, session); err != nil || stub.tokensIssued() != 1 {
				t.Fatalf("renewed %v early (tokens %d, %v)", time.Second, stub.tokensIssued(), err)
			}
			clock.Advance(time.Second)
			if err := heartbeatOnce(t, session); err != nil || stub.tokensIssued() != 2 {
				t.Fatalf("not renewed at %v (tokens %d, %v)", c.renewAt, stub.tokensIssued(), err)
			}
			calls := stub.runtimeCalls()
			if last := calls[len(calls)-1]; last.Token != "tok-2" {
				t.Fatalf("the call after renewal carried %q", last.Token)
			}
		})
	}
}

func TestSessionSharesOneTokenRequestAmongConcurrentCalls(t *testing.T) {
	stub := newStub(t, "")
	session := newTestSession(t, stub, "")
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := heartbeatOnce(t, session); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := stub.tokensIssued(); n != 1 {
		t.Fatalf("%d tokens for 8 concurrent calls, want 1", n)
	}
}

func TestSessionSendsAFreshNonceWithEveryCall(t *testing.T) {
	stub := newStub(t, "")
	session := newTestSession(t, stub, "")
	for i := 0; i < 20; i++ {
		if err := heartbeatOnce(t, session); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for _, call := range stub.runtimeCalls() {
		if !noncePattern.MatchString(call.Nonce) {
			t.Fatalf("nonce %q is not 8–64 of A-Za-z0-9_-", call.Nonce)
		}
		if seen[call.Nonce] {
			t.Fatalf("nonce %q sent twice", call.Nonce)
		}
		seen[call.Nonce] = true
	}
}

func TestSessionRetriesOnceWithANewTokenOn60000(t *testing.T) {
	stub := newStub(t, "")
	session := newTestSession(t, stub, "")
	if err := heartbeatOnce(t, session); err != nil {
		t.Fatal(err)
	}
	stub.revokeTokens() // the cached token is now refused with 60000
	if err := heartbeatOnce(t, session); err != nil {
		t.Fatalf("not cured by a new token: %v", err)
	}
	calls := stub.runtimeCalls()
	if len(calls) != 3 || stub.tokensIssued() != 2 {
		t.Fatalf("%d calls, %d tokens; want 3 calls (one retried) and 2 tokens", len(calls), stub.tokensIssued())
	}
	refused, retried := calls[1], calls[2]
	if refused.Token != "tok-1" || retried.Token != "tok-2" {
		t.Fatalf("tokens %q then %q", refused.Token, retried.Token)
	}
	if refused.Nonce == retried.Nonce || retried.Path != refused.Path || retried.Body["fingerprint"] != "fp-test-machine" {
		t.Fatalf("the retry is not the same call with a new nonce: %+v, %+v", refused, retried)
	}
}

func TestSessionRetriesAtMostOnce(t *testing.T) {
	stub := newStub(t, "")
	session := newTestSession(t, stub, "")
	if err := heartbeatOnce(t, session); err != nil {
		t.Fatal(err)
	}
	// Every token is refused from now on (the app lost its scope): one retry, then the refusal.
	stub.setRoute(func(stubCall) (int, interface{}) {
		return 299, refusal("60000", "application token check failed", "app token lacks scope auth_runtime")
	})
	err := heartbeatOnce(t, session)
	if !errors.Is(err, ErrAppToken) {
		t.Fatalf("want ErrAppToken, got %v", err)
	}
	if n := len(stub.runtimeCalls()); n != 3 {
		t.Fatalf("%d calls, want 3 (the first, the refused one, its one retry)", n)
	}
	// The next call again retries once, and no more.
	stub.revokeTokens()
	err = heartbeatOnce(t, session)
	if !errors.Is(err, ErrAppToken) || len(stub.runtimeCalls()) != 5 || stub.tokensIssued() != 3 {
		t.Fatalf("calls %d, tokens %d, %v", len(stub.runtimeCalls()), stub.tokensIssued(), err)
	}
}

func TestRefusalsAreAPIErrors(t *testing.T) {
	stub := newStub(t, "")
	session := newTestSession(t, stub, "")
	stub.setRoute(func(stubCall) (int, interface{}) {
		return 299, refusal("90005", "all 1 seats of the product are in use (1 in use)", "seats")
	})
	_, err := session.CheckOut(context.Background(), CheckOutRequest{Fingerprint: "fp-test-machine", AssetNum: "A-1", CRMProductID: "P-1"})
	var refused *APIError
	if !errors.As(err, &refused) {
		t.Fatalf("want *APIError, got %T %v", err, err)
	}
	if refused.Code != "90005" || refused.HTTPStatus != 299 || refused.Cause != "seats" ||
		!strings.Contains(refused.Message, "1 in use") || !strings.HasPrefix(refused.RequestID, "req-") {
		t.Fatalf("refusal %+v", refused)
	}
	if !errors.Is(err, ErrSeatsInUse) || errors.Is(err, ErrLeaseRevoked) || refused.Temporary() {
		t.Fatal("errors.Is does not match the code")
	}
	if !strings.Contains(err.Error(), "90005") {
		t.Fatalf("message %q", err)
	}
	var network *NetworkError
	if errors.As(err, &network) {
		t.Fatal("a refusal is also a network error")
	}
}

func TestNetworkFailuresAreNotRefusals(t *testing.T) {
	stub := newStub(t, "")
	session := newTestSession(t, stub, "")
	ctx := context.Background()

	// A proxy's page instead of Keyward's answer.
	stub.setRoute(func(stubCall) (int, interface{}) { return 502, "<html>Bad Gateway</html>" })
	err := heartbeatOnce(t, session)
	var network *NetworkError
	if !errors.As(err, &network) || network.HTTPStatus != 502 {
		t.Fatalf("want *NetworkError with HTTP 502, got %T %v", err, err)
	}
	var refused *APIError
	if errors.As(err, &refused) {
		t.Fatal("a proxy's page taken for a refusal")
	}

	// A cancelled call.
	stub.setRoute(func(stubCall) (int, interface{}) { return 200, ok(map[string]interface{}{}) })
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	lease := &Lease{ID: "lease-1", Fingerprint: "fp-test-machine", session: session}
	if _, err := lease.Heartbeat(cancelled); !errors.Is(err, context.Canceled) || !errors.As(err, &network) {
		t.Fatalf("want a cancelled *NetworkError, got %T %v", err, err)
	}

	// No server at all.
	stub.server.Close()
	if _, err := lease.Heartbeat(ctx); !errors.As(err, &network) || network.HTTPStatus != 0 {
		t.Fatalf("want *NetworkError without status, got %T %v", err, err)
	}
}

func TestTokenRefusalIsAnAuthError(t *testing.T) {
	stub := newStub(t, "")
	session, err := NewSession(stub.server.URL, stubAppKey, "wrong secret")
	if err != nil {
		t.Fatal(err)
	}
	err = heartbeatOnce(t, session)
	var refused *AuthError
	if !errors.As(err, &refused) || refused.ErrorCode != "invalid_client" || refused.HTTPStatus != 401 {
		t.Fatalf("want *AuthError invalid_client, got %T %v", err, err)
	}
	if len(stub.runtimeCalls()) != 0 {
		t.Fatal("a runtime call without a token")
	}
}

func TestNewSessionChecksItsArguments(t *testing.T) {
	for _, c := range []struct{ url, key, secret string }{
		{"ftp://keyward.example.com", "k", "s"},
		{"keyward.example.com", "k", "s"},
		{"https://keyward.example.com", "", "s"},
		{"https://keyward.example.com", "k", ""},
	} {
		if _, err := NewSession(c.url, c.key, c.secret); err == nil {
			t.Errorf("NewSession(%q, %q, %q) accepted", c.url, c.key, c.secret)
		}
	}
}

func TestSessionUnderAPathPrefix(t *testing.T) {
	stub := newStub(t, "/keyward")
	session := newTestSession(t, stub, "/keyward/", WithHTTPClient(&http.Client{Timeout: 5 * time.Second}))
	if err := heartbeatOnce(t, session); err != nil {
		t.Fatal(err)
	}
	if path := stub.runtimeCalls()[0].Path; path != "/keyward/runtime/v1/leases/lease-1/heartbeat" {
		t.Fatalf("path %q", path)
	}
	jwks, err := session.FetchJWKS(context.Background())
	if err != nil || len(jwks.Keys) != 1 || jwks.Keys[0].Kid != "k1" {
		t.Fatalf("jwks %+v, %v", jwks, err)
	}
}

func TestCallKeepsTheQueryOfItsPath(t *testing.T) {
	var query string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/oauth2/token" {
			w.Write([]byte(`{"access_token":"t","token_type":"Bearer","expires_in":60}`))
			return
		}
		query = r.URL.RawQuery
		w.Write([]byte(`{"code":0,"message":"success","data":[{"assetNum":"A-1","status":1}]}`))
	}))
	defer server.Close()
	session, _ := NewSession(server.URL, "k", "s")
	var answer []struct {
		AssetNum string `json:"assetNum"`
		Status   int    `json:"status"`
	}
	if err := session.Call(context.Background(), http.MethodPost, "/order/api/order/v1/licenseOrder/batchOrder?appKey=k%2B1",
		map[string]interface{}{}, &answer); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(query, "appKey=k%2B1&g_nonce=") || len(answer) != 1 || answer[0].Status != 1 {
		t.Fatalf("query %q, answer %+v", query, answer)
	}
}
