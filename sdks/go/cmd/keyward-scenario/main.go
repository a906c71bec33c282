// Command keyward-scenario is the live scenario of Keyward's SDK conformance suite written with
// the Go SDK (sdks/conformance/README.md), step for step as scripts/sdk-live-reference.ts. The
// driver runs it against a real server:
//
//	npx tsx scripts/sdk-live.ts --scenario 'go=sdks/go/build/keyward-scenario'
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"keyward.dev/sdk/go/keyward"
)

func env(name string) string {
	value := os.Getenv(name)
	if value == "" {
		fail(fmt.Errorf("%s is not set", name))
	}
	return value
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "keyward-scenario:", err)
	os.Exit(1)
}

func report(step string, fields map[string]interface{}) {
	head, err := json.Marshal(map[string]string{"step": step})
	if err != nil {
		fail(err)
	}
	line := string(head)
	if len(fields) > 0 {
		rest, err := json.Marshal(fields)
		if err != nil {
			fail(err)
		}
		// {"step":…} first, then the step's fields: {"step":…,"leaseId":…}.
		line = line[:len(line)-1] + "," + string(rest[1:])
	}
	fmt.Println(line)
}

// codeOf answers the Keyward code a refusal carries.
func codeOf(err error, what string) string {
	if err == nil {
		fail(fmt.Errorf("%s: the call was not refused", what))
	}
	var refusal *keyward.APIError
	if !errors.As(err, &refusal) {
		fail(fmt.Errorf("%s: %w", what, err))
	}
	return refusal.Code
}

func main() {
	ctx := context.Background()
	assetNum := env("KEYWARD_ASSET_NUM")
	product := env("KEYWARD_PRODUCT")
	session, err := keyward.NewSession(env("KEYWARD_URL"), env("KEYWARD_APP_KEY"), env("KEYWARD_APP_SECRET"),
		keyward.WithUserAgent("keyward-scenario"))
	if err != nil {
		fail(err)
	}
	checkOut := func(fingerprint string, offlineDays int) (*keyward.Lease, error) {
		return session.CheckOut(ctx, keyward.CheckOutRequest{
			Fingerprint: fingerprint, AssetNum: assetNum, CRMProductID: product, OfflineDays: offlineDays,
		})
	}

	// 1. A seat for the first machine.
	lease, err := checkOut("fp-live-first-machine", 0)
	if err != nil {
		fail(fmt.Errorf("check-out: %w", err))
	}
	defer lease.Close()
	report("checked-out", map[string]interface{}{
		"leaseId": lease.ID, "heartbeatIntervalSeconds": int(lease.HeartbeatInterval() / time.Second),
	})

	// 2. Three heartbeats, one after another.
	for i := 0; i < 3; i++ {
		if _, err := lease.Heartbeat(ctx); err != nil {
			fail(fmt.Errorf("heartbeat %d: %w", i+1, err))
		}
	}
	report("heartbeats", map[string]interface{}{"count": 3})

	// 3. The SDK's own loop, at the server's interval, stopped after an interval and a half second.
	var beats int32
	loopCtx, stop := context.WithCancel(ctx)
	ended := lease.KeepAlive(loopCtx, keyward.OnHeartbeat(func(_ *keyward.HeartbeatResult, err error) {
		if err == nil {
			atomic.AddInt32(&beats, 1)
		} else {
			fmt.Fprintln(os.Stderr, "keyward-scenario: background heartbeat:", err)
		}
	}))
	time.Sleep(lease.HeartbeatInterval() + 1500*time.Millisecond)
	stop()
	if err := <-ended; err != nil {
		fail(fmt.Errorf("background: the lease ended: %w", err))
	}
	report("background", map[string]interface{}{"beats": atomic.LoadInt32(&beats)})

	// 4. A metered amount.
	consumed, err := lease.Consume(ctx, 2)
	if err != nil {
		fail(fmt.Errorf("consume: %w", err))
	}
	fields := map[string]interface{}{"consumed": consumed.Consumed, "remaining": nil}
	if consumed.Remaining != nil {
		fields["remaining"] = *consumed.Remaining
	}
	report("consumed", fields)

	// 5. A second machine while the first holds the one seat.
	second, err := checkOut("fp-live-second-machine", 0)
	if err == nil {
		second.Close()
	}
	if !errors.Is(err, keyward.ErrSeatsInUse) && err != nil {
		fmt.Fprintln(os.Stderr, "keyward-scenario: second machine:", err)
	}
	report("refused", map[string]interface{}{"code": codeOf(err, "second check-out")})

	// 6. The first lease back.
	if _, err := lease.CheckIn(ctx); err != nil {
		fail(fmt.Errorf("check-in: %w", err))
	}
	report("checked-in", nil)

	// 7. An offline lease, its keys saved beside it and read back, verified without the server.
	offlineMachine := "fp-live-offline-machine"
	offline, err := checkOut(offlineMachine, 1)
	if err != nil {
		fail(fmt.Errorf("offline check-out: %w", err))
	}
	jwks, err := session.FetchJWKS(ctx)
	if err != nil {
		fail(err)
	}
	jwksFile := env("KEYWARD_JWKS_FILE")
	if err := keyward.SaveJWKS(jwksFile, jwks); err != nil {
		fail(err)
	}
	saved, err := keyward.LoadJWKS(jwksFile)
	if err != nil {
		fail(err)
	}
	claims, err := keyward.VerifyLease(offline.OfflineLease, saved, keyward.VerifyOptions{
		Fingerprint: offlineMachine, Audience: session.AppKey(),
	})
	if err != nil {
		fail(fmt.Errorf("offline lease: %w", err))
	}
	report("offline-verified", map[string]interface{}{"assetNum": claims.AssetNum, "expBound": claims.ExpBound})

	// 8–9. The driver disables the lock; the next heartbeat is refused.
	report("await-revoke", map[string]interface{}{"leaseId": offline.ID})
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		fail(fmt.Errorf("stdin: %w", err))
	}
	_, err = offline.Heartbeat(ctx)
	if err != nil && !errors.Is(err, keyward.ErrLeaseRevoked) {
		fmt.Fprintln(os.Stderr, "keyward-scenario: heartbeat after the lock was disabled:", err)
	}
	report("revoked", map[string]interface{}{"code": codeOf(err, "heartbeat of the disabled lock's lease")})
	if !offline.Ended() {
		fail(errors.New("the revoked lease does not say it ended"))
	}
	report("done", nil)
}
