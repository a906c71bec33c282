package keyward

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"math"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy says when a runtime call (CheckOut, Heartbeat, Consume, CheckIn) is sent again: when
// no answer came (the connection was refused, reset or closed, or it timed out before an answer)
// and when the server answered HTTP 429 (rate limited) or 503 (overloaded). A refusal is never
// retried: an envelope with a business code (HTTP 299), any other 4xx, a 500. Each attempt
// carries a fresh g_nonce; a Consume keeps one Idempotency-Key across its attempts, so the
// server counts it once however many of them reached it.
//
// The n-th retry waits a random time between 0 and InitialBackoff·2ⁿ⁻¹, at most MaxBackoff
// ("full jitter": a fleet that failed together does not come back together), or the server's
// Retry-After when longer, cut to MaxRetryAfter. A retry whose wait would end after the context's
// deadline, or MaxElapsed after the call began, is not made: the last failure is answered.
type RetryPolicy struct {
	// MaxAttempts counts every attempt, the first included; 1 sends each call once.
	MaxAttempts    int
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	MaxRetryAfter  time.Duration
	MaxElapsed     time.Duration
}

// DefaultRetryPolicy is a session's policy unless WithRetryPolicy says otherwise: four attempts
// within a minute.
var DefaultRetryPolicy = RetryPolicy{
	MaxAttempts:    4,
	InitialBackoff: 500 * time.Millisecond,
	MaxBackoff:     8 * time.Second,
	MaxRetryAfter:  30 * time.Second,
	MaxElapsed:     time.Minute,
}

// WithRetryPolicy replaces DefaultRetryPolicy. A MaxAttempts below 1 counts as 1.
func WithRetryPolicy(policy RetryPolicy) Option {
	return func(s *Session) {
		if policy.MaxAttempts < 1 {
			policy.MaxAttempts = 1
		}
		s.retry = policy
	}
}

// WithoutRetries sends every call once.
func WithoutRetries() Option { return WithRetryPolicy(RetryPolicy{MaxAttempts: 1}) }

// ConsumeOption configures one Consume.
type ConsumeOption func(*consumeOptions)

type consumeOptions struct{ idempotencyKey string }

// WithIdempotencyKey sends key as the consume's Idempotency-Key instead of a new random one: keep
// a consume's key to send it again after a *NetworkError (from another process, say) and have the
// server count it once. A key is 1–255 printable ASCII characters without spaces; the server
// keeps it 24 hours.
func WithIdempotencyKey(key string) ConsumeOption {
	return func(o *consumeOptions) { o.idempotencyKey = key }
}

// NewIdempotencyKey is a fresh Idempotency-Key: 128 bits from the system's CSPRNG, base64url.
func NewIdempotencyKey() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

func validIdempotencyKey(key string) bool {
	if len(key) < 1 || len(key) > 255 {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return false
		}
	}
	return true
}

// idempotencyHeader carries key under a name net/http does not recognise: with the canonical
// "Idempotency-Key" the Transport counts a POST as replayable and, when a kept-alive connection
// dies before the answer, resends it by itself with the same g_nonce, which the server refuses as
// a replay (70001). The SDK's own retry sends it again with a fresh nonce instead. Header names
// are case-insensitive on the wire.
func idempotencyHeader(key string) http.Header {
	return http.Header{"idempotency-key": {key}}
}

// callWithRetries is call, sent again as the session's RetryPolicy says.
func (s *Session) callWithRetries(ctx context.Context, method, path string, header http.Header,
	body, data interface{}) error {
	started := time.Now()
	for attempt := 1; ; attempt++ {
		err := s.call(ctx, method, path, header, body, data)
		if err == nil || attempt >= s.retry.MaxAttempts || ctx.Err() != nil {
			return err
		}
		retryAfter, transient := transientFailure(err)
		if !transient {
			return err
		}
		wait := s.retry.wait(attempt, retryAfter)
		resume := time.Now().Add(wait)
		if s.retry.MaxElapsed > 0 && resume.Sub(started) > s.retry.MaxElapsed {
			return err
		}
		if deadline, ok := ctx.Deadline(); ok && resume.After(deadline) {
			return err
		}
		if !s.sleep(ctx, wait) {
			return err
		}
	}
}

// wait is the pause before retry number retry (1 for the first).
func (p RetryPolicy) wait(retry int, retryAfter time.Duration) time.Duration {
	ceiling := p.MaxBackoff
	if retry-1 < 62 {
		if grown := float64(p.InitialBackoff) * math.Pow(2, float64(retry-1)); grown < float64(ceiling) {
			ceiling = time.Duration(grown)
		}
	}
	wait := jitter(ceiling)
	if retryAfter > 0 {
		if retryAfter > p.MaxRetryAfter {
			retryAfter = p.MaxRetryAfter
		}
		if retryAfter > wait {
			wait = retryAfter
		}
	}
	return wait
}

// jitter is a uniformly random duration in [0, ceiling].
func jitter(ceiling time.Duration) time.Duration {
	if ceiling <= 0 {
		return 0
	}
	n, err := rand.Int(rand.Reader, big.NewInt(int64(ceiling)+1))
	if err != nil {
		return ceiling
	}
	return time.Duration(n.Int64())
}

// sleepContext waits d unless ctx ends first (then false).
func sleepContext(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// transientFailure reports whether err may pass if sent again, and the Retry-After it came with.
func transientFailure(err error) (time.Duration, bool) {
	var refusal *APIError
	if errors.As(err, &refusal) {
		return refusal.RetryAfter, retriedStatus(refusal.HTTPStatus)
	}
	var auth *AuthError
	if errors.As(err, &auth) {
		return auth.RetryAfter, retriedStatus(auth.HTTPStatus)
	}
	var network *NetworkError
	if !errors.As(err, &network) {
		return 0, false
	}
	if network.HTTPStatus != 0 {
		// An answer that is not Keyward's: a proxy's 503 is worth another try, its 502 page is not.
		return 0, retriedStatus(network.HTTPStatus)
	}
	// A certificate the session does not trust stays untrusted.
	var unknownAuthority x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var hostname x509.HostnameError
	if errors.As(err, &unknownAuthority) || errors.As(err, &invalid) || errors.As(err, &hostname) {
		return 0, false
	}
	return 0, !errors.Is(err, context.Canceled)
}

func retriedStatus(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// parseRetryAfter reads Retry-After: delta-seconds or an HTTP date; 0 when absent or unreadable.
func parseRetryAfter(value string, now time.Time) time.Duration {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0
	}
	if seconds, err := strconv.ParseUint(value, 10, 32); err == nil {
		return time.Duration(seconds) * time.Second
	}
	if when, err := http.ParseTime(value); err == nil && when.After(now) {
		return when.Sub(now)
	}
	return 0
}

func invalidKey() error {
	return errors.New("keyward: an idempotency key is 1–255 printable ASCII characters without spaces")
}
