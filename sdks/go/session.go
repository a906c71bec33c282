package keyward

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Version is the SDK's version, the version of the Keyward server it was written for.
const Version = "0.1.0"

// APIVersion is the version of Keyward's API the SDK speaks (/runtime/v1).
const APIVersion = "v1"

// maxAnswerBytes bounds how much of an answer is read: Keyward's answers are a few KiB.
const maxAnswerBytes = 4 << 20

// Session is an application's connection to Keyward: it obtains the app token (OAuth 2 client
// credentials, HTTP Basic appKey:appSecret), renews it before it expires, gives every call a fresh
// g_nonce, and retries a call once with a new token when the server answers 60000 (the token
// expired early or was revoked). Runtime calls are also sent again as its RetryPolicy says (no
// answer, 429, 503; never a refusal). A Session is safe for concurrent use; make one per
// application.
type Session struct {
	base      *url.URL
	appKey    string
	appSecret string
	client    *http.Client
	now       func() time.Time
	scope     string
	userAgent string
	retry     RetryPolicy
	// sleep waits between attempts; tests replace it to keep time.
	sleep func(ctx context.Context, d time.Duration) bool

	// renewing is held by the one caller that asks the token endpoint; the others wait for it.
	renewing chan struct{}

	mu      sync.Mutex
	token   string
	renewAt time.Time
}

// Option configures a Session.
type Option func(*Session)

// DefaultTimeout bounds each call of a Session made without WithHTTPClient.
const DefaultTimeout = 30 * time.Second

// WithHTTPClient sends the calls with client instead of a client with DefaultTimeout: set its
// Timeout, a proxy or TLS roots there. Context deadlines bound each call as well.
func WithHTTPClient(client *http.Client) Option {
	return func(s *Session) {
		if client != nil {
			s.client = client
		}
	}
}

// WithClock replaces the clock that decides when the app token is renewed (for tests).
func WithClock(now func() time.Time) Option {
	return func(s *Session) {
		if now != nil {
			s.now = now
		}
	}
}

// WithScope asks for these scopes (space-separated) instead of all of the application's.
func WithScope(scope string) Option {
	return func(s *Session) { s.scope = scope }
}

// WithUserAgent prefixes the SDK's User-Agent with the program's own, e.g. "modeler/4.2".
func WithUserAgent(product string) Option {
	return func(s *Session) {
		if product != "" {
			s.userAgent = product + " " + s.userAgent
		}
	}
}

// NewSession makes a session for the application appKey at baseURL (e.g.
// "https://keyward.example.com", a path prefix allowed). No call is made until one is needed.
func NewSession(baseURL, appKey, appSecret string, opts ...Option) (*Session, error) {
	base, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("keyward: base URL: %w", err)
	}
	if base.Scheme != "http" && base.Scheme != "https" || base.Host == "" {
		return nil, fmt.Errorf("keyward: base URL %q: want http(s)://host[:port][/prefix]", baseURL)
	}
	if appKey == "" || appSecret == "" {
		return nil, errors.New("keyward: appKey and appSecret are required")
	}
	base.RawQuery, base.Fragment = "", ""
	s := &Session{
		base:      base,
		appKey:    appKey,
		appSecret: appSecret,
		client:    &http.Client{Timeout: DefaultTimeout},
		now:       time.Now,
		userAgent: "keyward-go/" + Version,
		retry:     DefaultRetryPolicy,
		sleep:     sleepContext,
		renewing:  make(chan struct{}, 1),
	}
	for _, opt := range opts {
		opt(s)
	}
	return s, nil
}

// AppKey is the application's key, the audience of the offline leases it checks out.
func (s *Session) AppKey() string { return s.appKey }

// AppToken answers a live app token, obtaining or renewing it when needed.
func (s *Session) AppToken(ctx context.Context) (string, error) {
	token, _, err := s.liveToken(ctx)
	return token, err
}

// cachedToken answers the token while it is not due for renewal.
func (s *Session) cachedToken() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" && s.now().Before(s.renewAt) {
		return s.token, true
	}
	return "", false
}

// liveToken answers a live token and whether this call obtained it (a refusal of a token just
// obtained is not cured by asking again).
func (s *Session) liveToken(ctx context.Context) (string, bool, error) {
	if token, ok := s.cachedToken(); ok {
		return token, false, nil
	}
	select {
	case s.renewing <- struct{}{}:
	case <-ctx.Done():
		return "", false, &NetworkError{Op: "POST /oauth2/token", Err: ctx.Err()}
	}
	defer func() { <-s.renewing }()
	// Another caller may have renewed it while this one waited.
	if token, ok := s.cachedToken(); ok {
		return token, false, nil
	}
	answer, err := s.requestToken(ctx)
	if err != nil {
		return "", false, err
	}
	lifetime := time.Duration(answer.ExpiresIn) * time.Second
	// Renew a minute early, or at 90% of a short lifetime, so no call carries a dying token.
	margin := lifetime / 10
	if margin > time.Minute {
		margin = time.Minute
	}
	s.mu.Lock()
	s.token, s.renewAt = answer.AccessToken, s.now().Add(lifetime-margin)
	s.mu.Unlock()
	return answer.AccessToken, true, nil
}

// discardToken forgets token after the server refused it: the next call obtains a new one.
func (s *Session) discardToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token == token {
		s.token, s.renewAt = "", time.Time{}
	}
}

type tokenAnswer struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
	Scope       string `json:"scope"`
}

func (s *Session) requestToken(ctx context.Context) (*tokenAnswer, error) {
	const op = "POST /oauth2/token"
	form := url.Values{"grant_type": {"client_credentials"}}
	if s.scope != "" {
		form.Set("scope", s.scope)
	}
	request, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint("/oauth2/token", nil),
		strings.NewReader(form.Encode()))
	if err != nil {
		return nil, &NetworkError{Op: op, Err: err}
	}
	// RFC 6749 §2.3.1: each part is form-encoded before the Basic encoding.
	pair := url.QueryEscape(s.appKey) + ":" + url.QueryEscape(s.appSecret)
	request.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(pair)))
	request.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	request.Header.Set("Accept", "application/json")
	request.Header.Set("User-Agent", s.userAgent)
	status, answerHeader, body, err := s.roundTrip(request, op)
	if err != nil {
		return nil, err
	}
	if status == http.StatusOK {
		var answer tokenAnswer
		if json.Unmarshal(body, &answer) == nil && answer.AccessToken != "" {
			return &answer, nil
		}
		return nil, &NetworkError{Op: op, HTTPStatus: status, Err: errors.New("the answer holds no access_token")}
	}
	var refusal struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if json.Unmarshal(body, &refusal) == nil && refusal.Error != "" {
		return nil, &AuthError{ErrorCode: refusal.Error, Description: refusal.Description, HTTPStatus: status,
			RetryAfter: parseRetryAfter(answerHeader.Get("Retry-After"), time.Now())}
	}
	return nil, &NetworkError{Op: op, HTTPStatus: status, Err: unexpected(body)}
}

// endpoint joins path (escaped by the caller; it may carry a query) to the base URL and adds query.
func (s *Session) endpoint(path string, query url.Values) string {
	target := s.base.String() + "/" + strings.TrimLeft(path, "/")
	if len(query) > 0 {
		separator := "?"
		if strings.Contains(target, "?") {
			separator = "&"
		}
		target += separator + query.Encode()
	}
	return target
}

// newNonce is a fresh g_nonce: 32 hex digits from the system's CSPRNG.
func newNonce() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// Call sends one call of Keyward's envelope API (the order service, the runtime, …) with the app
// token and a fresh g_nonce, and decodes the answer's data into data (when not nil). path is
// relative to the base URL and may carry a query: "/order/api/order/v1/asset/lock". A refusal is
// an *APIError; no answer, or an answer that is not Keyward's, a *NetworkError.
func (s *Session) Call(ctx context.Context, method, path string, body, data interface{}) error {
	return s.call(ctx, method, path, nil, body, data)
}

func (s *Session) call(ctx context.Context, method, path string, header http.Header, body, data interface{}) error {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return fmt.Errorf("keyward: %s %s: body: %w", method, path, err)
		}
	}
	for attempt := 0; ; attempt++ {
		token, fresh, err := s.liveToken(ctx)
		if err != nil {
			return err
		}
		err = s.send(ctx, method, path, header, token, payload, data)
		var refusal *APIError
		// 60000: the token expired early or was revoked. Once, with a new token and a new nonce.
		if attempt == 0 && !fresh && errors.As(err, &refusal) && refusal.Code == "60000" {
			s.discardToken(token)
			continue
		}
		return err
	}
}

func (s *Session) send(ctx context.Context, method, path string, header http.Header, token string,
	payload []byte, data interface{}) error {
	op := method + " " + path
	if i := strings.IndexByte(op, '?'); i >= 0 {
		op = op[:i]
	}
	nonce, err := newNonce()
	if err != nil {
		return &NetworkError{Op: op, Err: fmt.Errorf("nonce: %w", err)}
	}
	var reader io.Reader
	if payload != nil {
		reader = bytes.NewReader(payload)
	}
	request, err := http.NewRequestWithContext(ctx, method, s.endpoint(path, url.Values{"g_nonce": {nonce}}), reader)
	if err != nil {
		return &NetworkError{Op: op, Err: err}
	}
	for name, values := range header {
		request.Header[name] = values
	}
	request.Header.Set("Authorization", "Bearer "+token)
	request.Header.Set("Accept", "application/json")
	request.Header.Set("User-Agent", s.userAgent)
	if payload != nil {
		request.Header.Set("Content-Type", "application/json")
	}
	status, answerHeader, body, err := s.roundTrip(request, op)
	if err != nil {
		return err
	}
	var envelope struct {
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
		Cause   string          `json:"cause"`
		Data    json.RawMessage `json:"data"`
	}
	if json.Unmarshal(body, &envelope) != nil || len(envelope.Code) == 0 {
		return &NetworkError{Op: op, HTTPStatus: status, Err: unexpected(body)}
	}
	code, ok := codeText(envelope.Code)
	if !ok {
		return &NetworkError{Op: op, HTTPStatus: status, Err: unexpected(body)}
	}
	if code != "0" || status != http.StatusOK {
		refusal := &APIError{
			Code:       code,
			Message:    envelope.Message,
			Cause:      envelope.Cause,
			HTTPStatus: status,
			RequestID:  answerHeader.Get("X-Request-Id"),
			RetryAfter: parseRetryAfter(answerHeader.Get("Retry-After"), time.Now()),
		}
		if len(envelope.Data) > 0 && string(envelope.Data) != "null" {
			refusal.Data = envelope.Data
		}
		return refusal
	}
	if data != nil && len(envelope.Data) > 0 {
		if err := json.Unmarshal(envelope.Data, data); err != nil {
			return &NetworkError{Op: op, HTTPStatus: status, Err: fmt.Errorf("unexpected data: %w", err)}
		}
	}
	return nil
}

// roundTrip sends request and reads the answer, any failure on the way as a *NetworkError.
func (s *Session) roundTrip(request *http.Request, op string) (int, http.Header, []byte, error) {
	response, err := s.client.Do(request)
	if err != nil {
		// The context's own error, when it ended the call, so errors.Is(err, context.Canceled) holds.
		if ctxErr := request.Context().Err(); ctxErr != nil {
			err = ctxErr
		}
		return 0, nil, nil, &NetworkError{Op: op, Err: err}
	}
	defer response.Body.Close()
	body, err := io.ReadAll(io.LimitReader(response.Body, maxAnswerBytes))
	if err != nil {
		return 0, nil, nil, &NetworkError{Op: op, HTTPStatus: response.StatusCode, Err: err}
	}
	return response.StatusCode, response.Header, body, nil
}

// codeText is an envelope's code as text: a string ("90005") or a number (0).
func codeText(raw json.RawMessage) (string, bool) {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text, text != ""
	}
	var number json.Number
	if json.Unmarshal(raw, &number) == nil {
		return number.String(), true
	}
	return "", false
}

// unexpected describes an answer that is not Keyward's, with its start.
func unexpected(body []byte) error {
	const show = 120
	text := strings.TrimSpace(string(body))
	if len(text) > show {
		text = text[:show] + "…"
	}
	if text == "" {
		return errors.New("unexpected answer (empty)")
	}
	return fmt.Errorf("unexpected answer: %q", text)
}

// FetchJWKS fetches the server's published signing keys (/.well-known/jwks.json), to verify
// offline leases with VerifyLease and to keep with SaveJWKS for when the software runs offline.
func (s *Session) FetchJWKS(ctx context.Context) (*JWKS, error) {
	const op = "GET /.well-known/jwks.json"
	request, err := http.NewRequestWithContext(ctx, http.MethodGet, s.endpoint("/.well-known/jwks.json", nil), nil)
	if err != nil {
		return nil, &NetworkError{Op: op, Err: err}
	}
	request.Header.Set("Accept", "application/json")
	request.Header.Set("User-Agent", s.userAgent)
	status, _, body, err := s.roundTrip(request, op)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, &NetworkError{Op: op, HTTPStatus: status, Err: unexpected(body)}
	}
	jwks, err := ParseJWKS(body)
	if err != nil {
		return nil, &NetworkError{Op: op, HTTPStatus: status, Err: err}
	}
	return jwks, nil
}
