package keyward

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// APIError is a refusal answered by Keyward in its envelope: a business failure (HTTP 299, Code
// from the operation's table such as "90005"), an unknown path (404) or the rate limit (429).
// The server understood the call and said no; retrying the same call gets the same answer, except
// for Code "500" (an internal fault) and "429".
//
// Compare codes with errors.Is and the sentinels of this package:
//
//	if errors.Is(err, keyward.ErrSeatsInUse) { … wait for a seat … }
type APIError struct {
	// Code is Keyward's code, digits as a string: "90005", "60000", "429" …
	Code string
	// Message is the server's sentence, with the limit and the use where there is one.
	Message string
	// Cause is the server's detail: the reason of a revocation, the field of a bad input, or the
	// request id of an internal fault.
	Cause string
	// HTTPStatus is the answer's status: 299 for business failures.
	HTTPStatus int
	// RequestID is the server's x-request-id for the call, the id its logs and audit rows carry.
	RequestID string
	// Data is the failure's data, when the server sent one (member op 1's partial failure).
	Data json.RawMessage
	// RetryAfter is the server's Retry-After (429, 503): how long to wait before trying again.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	text := fmt.Sprintf("keyward: %s %s", e.Code, e.Message)
	if e.Cause != "" && e.Cause != e.Message {
		text += " (" + e.Cause + ")"
	}
	return text
}

// Is reports whether target is the sentinel of e's code (ErrSeatsInUse for "90005", …).
func (e *APIError) Is(target error) bool {
	if s, ok := target.(*codeSentinel); ok {
		return s.code == e.Code
	}
	return false
}

// Temporary reports whether the same call may succeed later without any change: an internal
// fault ("500") or the rate limit ("429").
func (e *APIError) Temporary() bool { return e.Code == "500" || e.Code == "429" }

// codeSentinel is what errors.Is matches an *APIError's Code against.
type codeSentinel struct{ code, text string }

func (s *codeSentinel) Error() string { return "keyward: " + s.code + " " + s.text }

// Code is the Keyward code the sentinel stands for.
func (s *codeSentinel) Code() string { return s.code }

func sentinel(code, text string) error { return &codeSentinel{code: code, text: text} }

// Sentinels for errors.Is: an *APIError is the sentinel of its Code.
var (
	ErrAppToken      = sentinel("60000", "application token check failed")
	ErrUserToken     = sentinel("60005", "invalid user login token")
	ErrSecurityCheck = sentinel("70001", "security check failed")
	ErrInternal      = sentinel("500", "network error, retry")
	ErrRateLimited   = sentinel("429", "too many requests")

	ErrInvalidInput      = sentinel("90000", "invalid parameter")
	ErrNotEntitled       = sentinel("90001", "no asset of this holder carries the product")
	ErrAssetDisabled     = sentinel("90002", "the asset carrying the product is disabled")
	ErrNotYetValid       = sentinel("90003", "the license is not valid yet")
	ErrLicenseEnded      = sentinel("90004", "the license ended")
	ErrSeatsInUse        = sentinel("90005", "all seats of the product are in use")
	ErrTimeUsedUp        = sentinel("90006", "the usage time is used up")
	ErrAmountUsedUp      = sentinel("90007", "the amount is consumed")
	ErrLeaseNotFound     = sentinel("90008", "no such lease")
	ErrLeaseRevoked      = sentinel("90009", "the lease was revoked")
	ErrLeaseExpired      = sentinel("90010", "the lease expired")
	ErrOfflineNotAllowed = sentinel("90011", "offline lease longer than the application may hand out")
)

// endsLease reports whether err is the server saying the lease is over: checked in or unknown
// (90008), revoked (90009) or expired (90010). No heartbeat brings such a lease back.
func endsLease(err error) bool {
	var e *APIError
	if errors.As(err, &e) {
		return e.Code == "90008" || e.Code == "90009" || e.Code == "90010"
	}
	return false
}

// AuthError is a refusal of the token endpoint (RFC 6749 §5.2): "invalid_client" for a wrong
// appKey or appSecret, "invalid_scope", "temporarily_unavailable" past the token rate limit …
type AuthError struct {
	// ErrorCode is the RFC 6749 error: invalid_client, invalid_scope, temporarily_unavailable …
	ErrorCode   string
	Description string
	HTTPStatus  int
	// RetryAfter is the server's Retry-After (429, 503), 0 when it gave none.
	RetryAfter time.Duration
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("keyward: token refused: %s: %s (HTTP %d)", e.ErrorCode, e.Description, e.HTTPStatus)
}

// NetworkError is a call that got no answer from Keyward, or an answer that is not Keyward's (a
// proxy's 502 page, a cut connection): nothing was refused, try again later. Err is the cause
// (errors.Is(err, context.DeadlineExceeded) works through it).
type NetworkError struct {
	// Op names the call: "POST /runtime/v1/leases".
	Op string
	// HTTPStatus is the answer's status, 0 when there was no answer.
	HTTPStatus int
	Err        error
}

func (e *NetworkError) Error() string {
	if e.HTTPStatus != 0 {
		return fmt.Sprintf("keyward: %s: HTTP %d: %v", e.Op, e.HTTPStatus, e.Err)
	}
	return fmt.Sprintf("keyward: %s: %v", e.Op, e.Err)
}

func (e *NetworkError) Unwrap() error { return e.Err }
