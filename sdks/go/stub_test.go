package keyward

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// stubKeyward is a small Keyward for the session's tests: a token endpoint that checks the
// client's Basic credentials and issues numbered tokens, and a runtime that checks the Bearer
// token and the nonce as the server does (60000, then 70001) before the test's own handler.

const (
	stubAppKey    = "kw_stub_app"
	stubAppSecret = "s3cret:with+signs"
)

var noncePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{8,64}$`)

type stubCall struct {
	Method, Path, Nonce, Token, UserToken, ContentType, IdempotencyKey string
	Body                                                               map[string]interface{}
}

// dropAnswer, as a route's body, closes the connection without an answer (the call was read).
type dropAnswer struct{}

// withHeaders, as a route's body, answers Body with these headers besides.
type withHeaders struct {
	Header http.Header
	Body   interface{}
}

type stubKeyward struct {
	t         *testing.T
	server    *httptest.Server
	expiresIn int64

	mu     sync.Mutex
	issued int
	live   map[string]bool
	nonces map[string]bool
	calls  []stubCall
	// route answers a runtime call that passed the gate: (status, body).
	route func(call stubCall) (int, interface{})
}

func newStub(t *testing.T, prefix string) *stubKeyward {
	t.Helper()
	s := &stubKeyward{t: t, expiresIn: 7200, live: map[string]bool{}, nonces: map[string]bool{}}
	s.route = func(stubCall) (int, interface{}) { return 200, ok(map[string]interface{}{}) }
	mux := http.NewServeMux()
	mux.HandleFunc(prefix+"/oauth2/token", s.token)
	mux.HandleFunc(prefix+"/runtime/v1/", s.runtime)
	mux.HandleFunc(prefix+"/.well-known/jwks.json", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("the JWKS was fetched with credentials")
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"6SVDqvbVE-VLwIL4TKinRPng9SGZ-yhduJKFSNiXRBA","kid":"k1","alg":"EdDSA","use":"sig"}]}`)
	})
	s.server = httptest.NewServer(mux)
	t.Cleanup(s.server.Close)
	return s
}

func ok(data interface{}) map[string]interface{} {
	return map[string]interface{}{"code": 0, "message": "success", "data": data}
}

func refusal(code, message, cause string) map[string]interface{} {
	return map[string]interface{}{"code": code, "message": message, "cause": cause}
}

func (s *stubKeyward) token(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	basic := strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
	raw, _ := base64.StdEncoding.DecodeString(basic)
	pair := strings.SplitN(string(raw), ":", 2)
	if err := r.ParseForm(); err != nil || len(pair) != 2 || r.PostForm.Get("grant_type") != "client_credentials" ||
		r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":"invalid_request","error_description":"bad token request"}`)
		return
	}
	key, _ := url.QueryUnescape(pair[0])
	secret, _ := url.QueryUnescape(pair[1])
	if key != stubAppKey || secret != stubAppSecret {
		w.WriteHeader(401)
		fmt.Fprint(w, `{"error":"invalid_client","error_description":"unknown client or wrong secret"}`)
		return
	}
	s.mu.Lock()
	s.issued++
	token := fmt.Sprintf("tok-%d", s.issued)
	s.live[token] = true
	expiresIn := s.expiresIn
	s.mu.Unlock()
	json.NewEncoder(w).Encode(map[string]interface{}{
		"access_token": token, "token_type": "Bearer", "expires_in": expiresIn, "scope": "auth_runtime",
	})
}

func (s *stubKeyward) runtime(w http.ResponseWriter, r *http.Request) {
	call := stubCall{
		Method:         r.Method,
		Path:           r.URL.Path,
		Nonce:          r.URL.Query().Get("g_nonce"),
		Token:          strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "),
		UserToken:      r.Header.Get("userToken"),
		ContentType:    r.Header.Get("Content-Type"),
		IdempotencyKey: r.Header.Get("Idempotency-Key"),
	}
	data, _ := io.ReadAll(r.Body)
	if len(data) > 0 {
		if err := json.Unmarshal(data, &call.Body); err != nil {
			s.t.Errorf("body is not JSON: %s", data)
		}
	}
	s.mu.Lock()
	s.calls = append(s.calls, call)
	live := s.live[call.Token]
	replayed := s.nonces[call.Nonce]
	s.nonces[call.Nonce] = true
	route := s.route
	s.mu.Unlock()
	status, body := 200, interface{}(nil)
	switch {
	case !live:
		status, body = 299, refusal("60000", "application token check failed", "app token unknown, expired or revoked")
	case !noncePattern.MatchString(call.Nonce) || replayed:
		status, body = 299, refusal("70001", "security check failed", "g_nonce")
	default:
		status, body = route(call)
	}
	if _, drop := body.(dropAnswer); drop {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			s.t.Errorf("hijack: %v", err)
			return
		}
		conn.Close()
		return
	}
	if extra, ok := body.(withHeaders); ok {
		for name, values := range extra.Header {
			w.Header()[name] = values
		}
		body = extra.Body
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-Id", "req-"+call.Nonce)
	w.WriteHeader(status)
	if text, isText := body.(string); isText {
		io.WriteString(w, text)
		return
	}
	json.NewEncoder(w).Encode(body)
}

// revokeTokens makes every token issued so far stale, as a rotated secret does.
func (s *stubKeyward) revokeTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live = map[string]bool{}
}

func (s *stubKeyward) setRoute(route func(stubCall) (int, interface{})) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.route = route
}

func (s *stubKeyward) tokensIssued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued
}

func (s *stubKeyward) runtimeCalls() []stubCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]stubCall(nil), s.calls...)
}
