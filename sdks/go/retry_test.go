package keyward

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// The retry policy against the stub: what is sent again (no answer, 429, 503), what is not (a
// refusal), how long it waits (Retry-After, backoff, deadlines), and a consume's Idempotency-Key,
// one per Consume and the same on each of its attempts.

// waits records the pauses between attempts instead of taking them.
type waits struct {
	mu   sync.Mutex
	seen []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, d)
	return ctx.Err() == nil
}

func (w *waits) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.seen...)
}

// retryLease checks out a lease on a session whose pauses w records; script answers the calls
// whose path ends in suffix, one entry per call, then leaseRoute does.
func retryLease(t *testing.T, suffix string, script []interface{}, opts ...Option) (*stubKeyward, *Lease, *waits) {
	t.Helper()
	stub := newStub(t, "")
	var mu sync.Mutex
	stub.setRoute(leaseRoute(t, func(call stubCall) (int, interface{}, bool) {
		if !strings.HasSuffix(call.Path, suffix) {
			return 0, nil, false
		}
		mu.Lock()
		defer mu.Unlock()
		if len(script) == 0 {
			return 0, nil, false
		}
		next := script[0]
		script = script[1:]
		switch answer := next.(type) {
		case dropAnswer:
			return 0, answer, true
		case withHeaders:
			status := 503
			if body, isMap := answer.Body.(map[string]interface{}); isMap && body["code"] == "429" {
				status = 429
			}
			return status, answer, true
		}
		return 299, next, true
	}))
	w := &waits{}
	session := newTestSession(t, stub, "", opts...)
	session.sleep = w.sleep
	lease, err := session.CheckOut(context.Background(), CheckOutRequest{Fingerprint: "fp-test-machine", AssetNum: "A-1", CRMProductID: "P-1"})
	if err != nil {
		t.Fatal(err)
	}
	return stub, lease, w
}

func busy(retryAfter string) withHeaders {
	header := http.Header{}
	if retryAfter != "" {
		header.Set("Retry-After", retryAfter)
	}
	return withHeaders{Header: header, Body: refusal("503", "the server is busy, retry later", "overloaded")}
}

func limited(retryAfter string) withHeaders {
	return withHeaders{Header: http.Header{"Retry-After": {retryAfter}}, Body: refusal("429", "too many requests", "rate limit")}
}

func callsTo(stub *stubKeyward, suffix string) []stubCall {
	var out []stubCall
	for _, call := range stub.runtimeCalls() {
		if strings.HasSuffix(call.Path, suffix) {
			out = append(out, call)
		}
	}
	return out
}

func TestA503IsSentAgainWithAFreshNonceAndThenSucceeds(t *testing.T) {
	stub, lease, w := retryLease(t, "/heartbeat", []interface{}{busy(""), busy("")})
	beat, err := lease.Heartbeat(context.Background())
	if err != nil || beat.UsedSeconds != 42 {
		t.Fatalf("heartbeat %+v, %v", beat, err)
	}
	calls := callsTo(stub, "/heartbeat")
	if len(calls) != 3 || calls[0].Nonce == calls[1].Nonce || calls[1].Nonce == calls[2].Nonce {
		t.Fatalf("attempts %+v", calls)
	}
	pauses := w.all()
	if len(pauses) != 2 || pauses[0] > DefaultRetryPolicy.InitialBackoff || pauses[1] > 2*DefaultRetryPolicy.InitialBackoff {
		t.Fatalf("pauses %v: want full jitter under 0.5 s then 1 s", pauses)
	}
}

func TestRetryAfterIsHonouredAndCapped(t *testing.T) {
	stub, lease, w := retryLease(t, "/consume", []interface{}{limited("7"), busy("120")},
		WithRetryPolicy(RetryPolicy{MaxAttempts: 4, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond,
			MaxRetryAfter: 30 * time.Second, MaxElapsed: time.Hour}))
	if _, err := lease.Consume(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if pauses := w.all(); len(pauses) != 2 || pauses[0] != 7*time.Second || pauses[1] != 30*time.Second {
		t.Fatalf("pauses %v, want [7s 30s]", pauses)
	}
	if n := len(callsTo(stub, "/consume")); n != 3 {
		t.Fatalf("%d attempts, want 3", n)
	}
}

func TestALostAnswerIsSentAgain(t *testing.T) {
	stub, lease, _ := retryLease(t, "/check-in", []interface{}{dropAnswer{}})
	if answer, err := lease.CheckIn(context.Background()); err != nil || answer.UsedSeconds != 77 {
		t.Fatalf("check-in %+v, %v", answer, err)
	}
	if n := len(callsTo(stub, "/check-in")); n != 2 {
		t.Fatalf("%d attempts, want 2", n)
	}
}

func TestARefusalIsNotRetried(t *testing.T) {
	stub, lease, w := retryLease(t, "/consume", []interface{}{refusal("90007", "the amount is consumed", "limit")})
	if _, err := lease.Consume(context.Background(), 5); !errors.Is(err, ErrAmountUsedUp) {
		t.Fatalf("want 90007, got %v", err)
	}
	if n := len(callsTo(stub, "/consume")); n != 1 || len(w.all()) != 0 {
		t.Fatalf("%d attempts, pauses %v: a 299 refusal was sent again", n, w.all())
	}
	// Nor a 4xx other than 429, nor a 500.
	for _, status := range []int{400, 500} {
		stub.setRoute(func(stubCall) (int, interface{}) { return status, refusal("90000", "no", "") })
		before := len(stub.runtimeCalls())
		if _, err := lease.Heartbeat(context.Background()); err == nil || len(stub.runtimeCalls()) != before+1 {
			t.Fatalf("HTTP %d: %v after %d attempts", status, err, len(stub.runtimeCalls())-before)
		}
	}
}

func TestItGivesUpWithTheLastFailure(t *testing.T) {
	// After MaxAttempts.
	stub, lease, w := retryLease(t, "/heartbeat", []interface{}{busy("1"), busy("1"), busy("1"), busy("1"), busy("1")})
	_, err := lease.Heartbeat(context.Background())
	var refused *APIError
	if !errors.As(err, &refused) || refused.Code != "503" || refused.RetryAfter != time.Second {
		t.Fatalf("want the 503 with its Retry-After, got %v", err)
	}
	if n := len(callsTo(stub, "/heartbeat")); n != 4 || len(w.all()) != 3 {
		t.Fatalf("%d attempts, %d pauses, want 4 and 3", n, len(w.all()))
	}

	// When the wait would pass the context's deadline.
	stub, lease, w = retryLease(t, "/heartbeat", []interface{}{limited("20")})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := lease.Heartbeat(ctx); !errors.Is(err, ErrRateLimited) || len(w.all()) != 0 {
		t.Fatalf("want 429 at once, got %v after pauses %v", err, w.all())
	}

	// Or MaxElapsed.
	policy := DefaultRetryPolicy
	policy.MaxElapsed = 10 * time.Second
	_, lease, w = retryLease(t, "/heartbeat", []interface{}{limited("20")}, WithRetryPolicy(policy))
	if _, err := lease.Heartbeat(context.Background()); !errors.Is(err, ErrRateLimited) || len(w.all()) != 0 {
		t.Fatalf("want 429 at once, got %v after pauses %v", err, w.all())
	}

	// WithoutRetries.
	stub, lease, _ = retryLease(t, "/heartbeat", []interface{}{busy("")}, WithoutRetries())
	if _, err := lease.Heartbeat(context.Background()); err == nil || len(callsTo(stub, "/heartbeat")) != 1 {
		t.Fatalf("WithoutRetries: %v after %d attempts", err, len(callsTo(stub, "/heartbeat")))
	}
}

func TestAConsumeKeepsItsIdempotencyKeyAcrossAttemptsAndANewOnePerCall(t *testing.T) {
	stub, lease, _ := retryLease(t, "/consume", []interface{}{dropAnswer{}, busy("")})
	for i := 0; i < 2; i++ {
		if _, err := lease.Consume(context.Background(), 2); err != nil {
			t.Fatal(err)
		}
	}
	calls := callsTo(stub, "/consume")
	if len(calls) != 4 {
		t.Fatalf("%d attempts, want 4", len(calls))
	}
	first := calls[0].IdempotencyKey
	if len(first) != 22 || calls[1].IdempotencyKey != first || calls[2].IdempotencyKey != first ||
		calls[3].IdempotencyKey == first || calls[3].IdempotencyKey == "" {
		t.Fatalf("keys %q %q %q %q", first, calls[1].IdempotencyKey, calls[2].IdempotencyKey, calls[3].IdempotencyKey)
	}
	// The stub refuses a replayed nonce (70001): every attempt had its own.
	for _, call := range calls {
		if call.Nonce == "" {
			t.Fatal("an attempt without a nonce")
		}
	}
	for _, call := range callsTo(stub, "/heartbeat") {
		if call.IdempotencyKey != "" {
			t.Fatal("a heartbeat carried an Idempotency-Key")
		}
	}
}

func TestAConsumeTakesTheCallersKey(t *testing.T) {
	stub, lease, _ := retryLease(t, "/consume", nil)
	if _, err := lease.Consume(context.Background(), 1, WithIdempotencyKey("job-42/step-3")); err != nil {
		t.Fatal(err)
	}
	if calls := callsTo(stub, "/consume"); len(calls) != 1 || calls[0].IdempotencyKey != "job-42/step-3" {
		t.Fatalf("calls %+v", calls)
	}
	for _, bad := range []string{"with space", strings.Repeat("x", 256), "é"} {
		if _, err := lease.Consume(context.Background(), 1, WithIdempotencyKey(bad)); err == nil {
			t.Fatalf("key %q accepted", bad)
		}
	}
	if n := len(callsTo(stub, "/consume")); n != 1 {
		t.Fatalf("an invalid key was sent (%d calls)", n)
	}
}

// On a kept-alive connection that dies before the answer, net/http would resend a POST marked
// idempotent by itself, with the same g_nonce; the stub (as the server) refuses that as 70001.
func TestAConnectionLostAfterReuseIsRetriedWithAFreshNonce(t *testing.T) {
	stub, lease, _ := retryLease(t, "/consume", []interface{}{dropAnswer{}})
	// The check-out left a kept-alive connection: the consume goes out on it.
	if _, err := lease.Consume(context.Background(), 3); err != nil {
		t.Fatalf("consume: %v", err)
	}
	calls := callsTo(stub, "/consume")
	if len(calls) != 2 || calls[0].Nonce == calls[1].Nonce {
		t.Fatalf("attempts %+v", calls)
	}
}

func TestRetryAfterReadsSecondsAndDates(t *testing.T) {
	now := time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC)
	for value, want := range map[string]time.Duration{
		"12":                            12 * time.Second,
		"Fri, 27 Nov 2026 13:00:30 GMT": 30 * time.Second,
		"Fri, 27 Nov 2026 12:00:00 GMT": 0,
		"soon":                          0,
		"":                              0,
	} {
		if got := parseRetryAfter(value, now); got != want {
			t.Errorf("Retry-After %q: %v, want %v", value, got, want)
		}
	}
}
