// A program built against the SDK as a customer's module uses it: its own go.mod requiring
// keyward.dev/sdk/go/keyward, with a replace to the SDK's folder (ci.sh writes both, in a scratch
// folder outside the repository).
package main

import (
	"fmt"
	"os"
	"time"

	"keyward.dev/sdk/go/keyward"
)

func main() {
	jwks, err := keyward.ParseJWKS([]byte(`{"keys":[{"kty":"OKP","crv":"Ed25519",` +
		`"x":"6SVDqvbVE-VLwIL4TKinRPng9SGZ-yhduJKFSNiXRBA","kid":"k1","alg":"EdDSA","use":"sig"}]}`))
	if err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
	pending, err := keyward.NewActivationRequest(keyward.ActivationRequestOptions{
		AppKey: "kw_app", AssetNum: "8000000001", CRMProductID: "demo-simulator", Days: 7,
		Fingerprint: "fp-1", Now: time.Unix(1800000000, 0),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
	session, err := keyward.NewSession("https://keyward.example.com", "kw_app", "secret")
	if err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
	_ = session
	fmt.Printf("keyward %s: %d key(s), request %s…\n", keyward.Version, len(jwks.Keys), pending.Code[:13])
}
