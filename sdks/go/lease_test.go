package keyward

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The runtime's calls against the stub: what each sends, and what the lease makes of the answers.

func leaseRoute(t *testing.T, extra func(call stubCall) (int, interface{}, bool)) func(stubCall) (int, interface{}) {
	return func(call stubCall) (int, interface{}) {
		if extra != nil {
			if status, body, handled := extra(call); handled {
				return status, body
			}
		}
		switch {
		case call.Path == "/runtime/v1/leases":
			offline := interface{}(nil)
			if call.Body["offlineDays"] != nil {
				offline = "header.payload.signature"
			}
			return 200, ok(map[string]interface{}{
				"leaseId": "0193-lease", "status": "granted", "assetNum": "A-1",
				"expiresAt": int64(1_800_000_300_000), "heartbeatIntervalSeconds": 60,
				"product": map[string]interface{}{"crmProductId": "P-1", "productUri": nil, "productName": "Modeler"},
				"limits": map[string]interface{}{
					"concurrent": 1, "timeDurationSeconds": nil, "amount": 100, "startDate": nil, "endDate": int64(1_805_000_000_000),
				},
				"offlineLease": offline,
			})
		case strings.HasSuffix(call.Path, "/heartbeat"):
			return 200, ok(map[string]interface{}{
				"leaseId": "0193-lease", "expiresAt": int64(1_800_000_600_000), "heartbeatIntervalSeconds": 30, "usedSeconds": 42,
			})
		case strings.HasSuffix(call.Path, "/consume"):
			amount, _ := call.Body["amount"].(float64)
			return 200, ok(map[string]interface{}{"consumed": 10 + int64(amount), "limit": 100, "remaining": 90 - int64(amount)})
		case strings.HasSuffix(call.Path, "/check-in"):
			return 200, ok(map[string]interface{}{"usedSeconds": 77, "seatFreeAt": int64(1_800_000_000_000)})
		}
		t.Errorf("unexpected call %s %s", call.Method, call.Path)
		return 404, refusal("404", "not found", call.Path)
	}
}

func checkOutTestLease(t *testing.T, stub *stubKeyward, request CheckOutRequest) *Lease {
	t.Helper()
	session := newTestSession(t, stub, "")
	lease, err := session.CheckOut(context.Background(), request)
	if err != nil {
		t.Fatal(err)
	}
	return lease
}

func TestCheckOutSendsTheRequestAndReadsTheLease(t *testing.T) {
	stub := newStub(t, "")
	stub.setRoute(leaseRoute(t, nil))
	lease := checkOutTestLease(t, stub, CheckOutRequest{
		Fingerprint: "fp-test-machine", AssetNum: "A-1", CRMProductID: "P-1", OfflineDays: 3, UserToken: "member-token",
	})
	call := stub.runtimeCalls()[0]
	if call.Method != "POST" || call.ContentType != "application/json" || call.UserToken != "member-token" {
		t.Fatalf("call %+v", call)
	}
	want := map[string]interface{}{"fingerprint": "fp-test-machine", "assetNum": "A-1", "crmProductId": "P-1", "offlineDays": float64(3)}
	if len(call.Body) != len(want) {
		t.Fatalf("body %v, want %v", call.Body, want)
	}
	for k, v := range want {
		if call.Body[k] != v {
			t.Fatalf("body %v, want %v", call.Body, want)
		}
	}
	if lease.ID != "0193-lease" || lease.Status != StatusGranted || lease.AssetNum != "A-1" || lease.Fingerprint != "fp-test-machine" {
		t.Fatalf("lease %+v", lease)
	}
	if lease.HeartbeatInterval() != time.Minute || !lease.ExpiresAt().Equal(time.UnixMilli(1_800_000_300_000)) {
		t.Fatalf("interval %v, expires %v", lease.HeartbeatInterval(), lease.ExpiresAt())
	}
	if lease.OfflineLease != "header.payload.signature" || lease.Product.CRMProductID != "P-1" || lease.Product.ProductURI != "" {
		t.Fatalf("offline %q, product %+v", lease.OfflineLease, lease.Product)
	}
	if lease.Limits.Concurrent == nil || *lease.Limits.Concurrent != 1 || lease.Limits.StartDate != nil {
		t.Fatalf("limits %+v", lease.Limits)
	}

	// The member's token goes with the check-out only: a heartbeat must not die with it.
	if _, err := lease.Heartbeat(context.Background()); err != nil {
		t.Fatal(err)
	}
	if beat := stub.runtimeCalls()[1]; beat.UserToken != "" || beat.Path != "/runtime/v1/leases/0193-lease/heartbeat" {
		t.Fatalf("heartbeat %+v", beat)
	}
}

func TestCheckOutLeavesOutWhatWasNotAsked(t *testing.T) {
	stub := newStub(t, "")
	stub.setRoute(leaseRoute(t, nil))
	lease := checkOutTestLease(t, stub, CheckOutRequest{Fingerprint: "fp-test-machine", ProductURI: "gms-1", AssetNum: "A-1"})
	body := stub.runtimeCalls()[0].Body
	if _, has := body["offlineDays"]; has || body["productUri"] != "gms-1" || body["crmProductId"] != nil {
		t.Fatalf("body %v", body)
	}
	if lease.OfflineLease != "" {
		t.Fatalf("offline lease %q without offlineDays", lease.OfflineLease)
	}
}

func TestHeartbeatConsumeAndCheckIn(t *testing.T) {
	stub := newStub(t, "")
	stub.setRoute(leaseRoute(t, nil))
	lease := checkOutTestLease(t, stub, CheckOutRequest{Fingerprint: "fp-test-machine", AssetNum: "A-1", CRMProductID: "P-1"})
	ctx := context.Background()

	beat, err := lease.Heartbeat(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if beat.UsedSeconds != 42 || beat.HeartbeatInterval != 30*time.Second || lease.HeartbeatInterval() != 30*time.Second ||
		!lease.ExpiresAt().Equal(time.UnixMilli(1_800_000_600_000)) || lease.UsedSeconds() != 42 {
		t.Fatalf("heartbeat %+v; lease interval %v, expires %v", beat, lease.HeartbeatInterval(), lease.ExpiresAt())
	}

	consumed, err := lease.Consume(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if consumed.Consumed != 12 || *consumed.Remaining != 88 || *consumed.Limit != 100 {
		t.Fatalf("consumed %+v", consumed)
	}
	if body := stub.runtimeCalls()[2].Body; body["amount"] != float64(2) || body["fingerprint"] != "fp-test-machine" {
		t.Fatalf("consume body %v", body)
	}

	result, err := lease.CheckIn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if result.UsedSeconds != 77 || !result.SeatFreeAt.Equal(time.UnixMilli(1_800_000_000_000)) || !lease.Ended() {
		t.Fatalf("check-in %+v, ended %v", result, lease.Ended())
	}
	calls := len(stub.runtimeCalls())
	if err := lease.Close(); err != nil || len(stub.runtimeCalls()) != calls {
		t.Fatalf("Close after CheckIn called the server again (%v)", err)
	}
}

func TestCloseChecksInOnce(t *testing.T) {
	stub := newStub(t, "")
	stub.setRoute(leaseRoute(t, nil))
	lease := checkOutTestLease(t, stub, CheckOutRequest{Fingerprint: "fp-test-machine", AssetNum: "A-1", CRMProductID: "P-1"})
	for i := 0; i < 3; i++ {
		if err := lease.Close(); err != nil {
			t.Fatal(err)
		}
	}
	checkIns := 0
	for _, call := range stub.runtimeCalls() {
		if strings.HasSuffix(call.Path, "/check-in") {
			checkIns++
		}
	}
	if checkIns != 1 {
		t.Fatalf("%d check-ins, want 1", checkIns)
	}
}

func TestCloseOfALeaseTheServerEnded(t *testing.T) {
	stub := newStub(t, "")
	stub.setRoute(leaseRoute(t, func(call stubCall) (int, interface{}, bool) {
		if strings.HasSuffix(call.Path, "/heartbeat") || strings.HasSuffix(call.Path, "/check-in") {
			return 299, refusal("90009", "the lease was revoked: asset disabled", "asset disabled"), true
		}
		return 0, nil, false
	}))
	lease := checkOutTestLease(t, stub, CheckOutRequest{Fingerprint: "fp-test-machine", AssetNum: "A-1", CRMProductID: "P-1"})
	_, err := lease.Heartbeat(context.Background())
	var refused *APIError
	if !errors.Is(err, ErrLeaseRevoked) || !errors.As(err, &refused) || refused.Cause != "asset disabled" || !lease.Ended() {
		t.Fatalf("heartbeat: %v, ended %v", err, lease.Ended())
	}
	calls := len(stub.runtimeCalls())
	if err := lease.Close(); err != nil || len(stub.runtimeCalls()) != calls {
		t.Fatalf("Close of a revoked lease: %v, %d calls more", err, len(stub.runtimeCalls())-calls)
	}
}

func TestKeepAliveBeatsUntilStopped(t *testing.T) {
	stub := newStub(t, "")
	stub.setRoute(leaseRoute(t, nil))
	lease := checkOutTestLease(t, stub, CheckOutRequest{Fingerprint: "fp-test-machine", AssetNum: "A-1", CRMProductID: "P-1"})
	var beats int32
	ctx, stop := context.WithCancel(context.Background())
	ended := lease.KeepAlive(ctx, Every(10*time.Millisecond), OnHeartbeat(func(result *HeartbeatResult, err error) {
		if err == nil && result.UsedSeconds == 42 {
			atomic.AddInt32(&beats, 1)
		}
	}))
	waitFor(t, func() bool { return atomic.LoadInt32(&beats) >= 3 })
	stop()
	if err, open := <-ended; err != nil || open {
		t.Fatalf("stopped loop answered %v (open %v), want a closed channel", err, open)
	}
	after := len(stub.runtimeCalls())
	time.Sleep(50 * time.Millisecond)
	if len(stub.runtimeCalls()) != after {
		t.Fatal("heartbeats after the loop stopped")
	}
	if lease.Ended() {
		t.Fatal("a stopped loop ended the lease")
	}
}

func TestKeepAliveRidesOutFailuresAndStopsWhenTheServerEndsTheLease(t *testing.T) {
	stub := newStub(t, "")
	var mu sync.Mutex
	heartbeats := 0
	stub.setRoute(leaseRoute(t, func(call stubCall) (int, interface{}, bool) {
		if !strings.HasSuffix(call.Path, "/heartbeat") {
			return 0, nil, false
		}
		mu.Lock()
		defer mu.Unlock()
		heartbeats++
		switch heartbeats {
		case 1:
			return 299, refusal("500", "network error, retry", "req-1"), true
		case 2:
			return 502, "<html>Bad Gateway</html>", true // a proxy's page: not retried, seen by the loop
		case 3:
			return 0, nil, false // answered by leaseRoute: a success
		}
		return 299, refusal("90009", "the lease was revoked: the lock was disabled", "the lock was disabled"), true
	}))
	lease := checkOutTestLease(t, stub, CheckOutRequest{Fingerprint: "fp-test-machine", AssetNum: "A-1", CRMProductID: "P-1"})
	var seen []error
	var seenMu sync.Mutex
	ended := lease.KeepAlive(context.Background(), Every(5*time.Millisecond), OnHeartbeat(func(_ *HeartbeatResult, err error) {
		seenMu.Lock()
		seen = append(seen, err)
		seenMu.Unlock()
	}))
	var err error
	select {
	case err = <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the loop did not end on 90009")
	}
	if !errors.Is(err, ErrLeaseRevoked) || !lease.Ended() {
		t.Fatalf("ended with %v (lease ended: %v)", err, lease.Ended())
	}
	if _, open := <-ended; open {
		t.Fatal("the channel stays open after the ending error")
	}
	seenMu.Lock()
	defer seenMu.Unlock()
	var network *NetworkError
	if len(seen) != 4 || !errors.Is(seen[0], ErrInternal) || !errors.As(seen[1], &network) || seen[2] != nil ||
		!errors.Is(seen[3], ErrLeaseRevoked) {
		t.Fatalf("heartbeats seen: %v", seen)
	}
	// An ended lease starts no loop.
	if _, open := <-lease.KeepAlive(context.Background(), Every(time.Millisecond)); open {
		t.Fatal("a loop on an ended lease")
	}
}

func TestKeepAliveUsesTheServersInterval(t *testing.T) {
	stub := newStub(t, "")
	stub.setRoute(leaseRoute(t, nil))
	lease := checkOutTestLease(t, stub, CheckOutRequest{Fingerprint: "fp-test-machine", AssetNum: "A-1", CRMProductID: "P-1"})
	lease.mu.Lock()
	lease.interval = 1200 * time.Millisecond
	lease.mu.Unlock()
	start := time.Now()
	var first time.Duration
	done := make(chan struct{})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	lease.KeepAlive(ctx, OnHeartbeat(func(*HeartbeatResult, error) {
		if first == 0 {
			first = time.Since(start)
			close(done)
		}
	}))
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("no heartbeat")
	}
	if first < 1200*time.Millisecond || first > 3*time.Second {
		t.Fatalf("first heartbeat after %v, want the lease's interval (1.2 s)", first)
	}
}

func TestCheckInStopsTheLoops(t *testing.T) {
	stub := newStub(t, "")
	stub.setRoute(leaseRoute(t, nil))
	lease := checkOutTestLease(t, stub, CheckOutRequest{Fingerprint: "fp-test-machine", AssetNum: "A-1", CRMProductID: "P-1"})
	var beats int32
	ended := lease.KeepAlive(context.Background(), Every(5*time.Millisecond), OnHeartbeat(func(*HeartbeatResult, error) {
		atomic.AddInt32(&beats, 1)
	}))
	waitFor(t, func() bool { return atomic.LoadInt32(&beats) >= 1 })
	if err := lease.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err, open := <-ended:
		if err != nil || open {
			t.Fatalf("loop ended with %v (open %v)", err, open)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the loop outlived the check-in")
	}
}

func waitFor(t *testing.T, condition func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !condition() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(2 * time.Millisecond)
	}
}
