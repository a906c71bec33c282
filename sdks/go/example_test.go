package keyward_test

import (
	"context"
	"errors"
	"log"
	"net/http"
	"os"
	"os/signal"

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
