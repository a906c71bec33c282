package keyward_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"time"

	"keyward.dev/sdk/go/keyward"
)

// The runtime loop of a licensed program: a seat, heartbeats while it runs, the seat back on exit.
func Example() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	session, err := keyward.NewSession("https://keyward.example.com", os.Getenv("APP_KEY"), os.Getenv("APP_SECRET"))
	if err != nil {
		log.Fatal(err)
	}
	lease, err := session.CheckOut(ctx, keyward.CheckOutRequest{
		AssetNum: "8000000009", CRMProductID: "P-MODELER", Fingerprint: "sha256-of-hardware-ids",
	})
	if errors.Is(err, keyward.ErrSeatsInUse) {
		log.Fatal("every seat is taken: ", err)
	} else if err != nil {
		log.Fatal(err)
	}
	defer lease.Close() // checks in
	ended := lease.KeepAlive(ctx)
	for {
		select {
		case <-ctx.Done(): // the user quit
			return
		case err := <-ended: // revoked (the cause says why), expired or unknown: stop
			log.Print("license withdrawn: ", err)
			return
		}
	}
}

// Running offline: verify the signed lease kept from the last check-out against the saved keys.
func ExampleVerifyLease() {
	jwks, err := keyward.LoadJWKS("/var/lib/modeler/jwks.json")
	if err != nil {
		log.Fatal(err)
	}
	token, err := keyward.LoadLease("/var/lib/modeler/lease.jws")
	if err != nil {
		log.Fatal(err)
	}
	claims, err := keyward.VerifyLease(token, jwks, keyward.VerifyOptions{Fingerprint: "sha256-of-hardware-ids"})
	var refused *keyward.LeaseError
	if errors.As(err, &refused) {
		log.Fatalf("no license offline: %s", refused.Reason) // unknown-key: fetch the JWKS when online
	}
	log.Printf("licensed until %v (%s)", claims.ExpiresAt, claims.ExpBound)
}

// A vendor's back end receiving Keyward's webhooks.
func ExampleWebhookHandler() {
	secrets := []string{os.Getenv("WEBHOOK_SECRET")}
	http.Handle("/keyward", keyward.WebhookHandler(secrets, func(ctx context.Context, event *keyward.WebhookEvent) error {
		log.Println(event.ID, event.Type, string(event.Data)) // act once per event.ID: it may repeat
		return nil
	}))
	log.Fatal(http.ListenAndServe(":3000", nil))
}

// Offline activation on a machine that never reaches Keyward: the request made and kept, its answer
// verified against the JWKS the vendor shipped. Here with the conformance vectors' request, answer
// and time (sdks/conformance/activation.json).
func ExampleVerifyActivation() {
	var vectors struct {
		Now      int64
		JWKS     json.RawMessage
		Requests []struct{ Code string }
		Answers  []struct{ Name, Answer string }
	}
	data, err := os.ReadFile("../conformance/activation.json")
	if err != nil || json.Unmarshal(data, &vectors) != nil {
		log.Fatal("no vectors: ", err)
	}
	jwks, err := keyward.ParseJWKS(vectors.JWKS) // keyward.LoadJWKS(shipped) in a program
	if err != nil {
		log.Fatal(err)
	}
	// The request the machine kept (keyward.LoadActivationRequest(path) in a program).
	request, err := keyward.ParseActivationRequest(vectors.Requests[0].Code)
	if err != nil {
		log.Fatal(err)
	}
	options := keyward.ActivationVerifyOptions{
		Request: request, Fingerprint: "fp-conformance-offline-machine", Now: time.Unix(vectors.Now, 0),
	}
	for _, a := range vectors.Answers {
		if a.Name != "typed" && a.Name != "typed-mistyped" {
			continue
		}
		lease, err := keyward.VerifyActivation(a.Answer, jwks, options)
		var refused *keyward.LeaseError
		switch {
		case errors.As(err, &refused) && refused.Group > 0:
			fmt.Printf("%s: group %d is mistyped\n", a.Name, refused.Group)
		case err != nil:
			log.Fatal(err)
		default:
			returnCode, _ := keyward.ActivationReturnCode(request, lease.LeaseID)
			fmt.Printf("%s: lease %s until %s (%s); return code %.13s…\n", a.Name, lease.LeaseID,
				lease.ExpiresAt.UTC().Format(time.RFC3339), lease.ExpBound, returnCode)
		}
	}
	// Output:
	// typed: lease 01938f2e-7c1a-7000-8000-00000000a001 until 2027-02-14T08:00:00Z (offline-days); return code B00G3M-4WF5S5…
	// typed-mistyped: group 5 is mistyped
}
