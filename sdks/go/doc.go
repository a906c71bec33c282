// Package keyward is the Go SDK of Keyward, the license platform: it lets licensed software
// check out a seat ("lease") from Keyward's license runtime, keep it alive with heartbeats,
// consume metered amounts and check in on exit; verify a signed offline lease against a saved
// JWKS when it runs without the server; and lets a vendor's back end verify Keyward's webhooks.
//
// The runtime loop:
//
//	session, err := keyward.NewSession(url, appKey, appSecret)
//	lease, err := session.CheckOut(ctx, keyward.CheckOutRequest{
//		AssetNum: lock, CRMProductID: "P-MODELER", Fingerprint: machine,
//	})
//	if errors.Is(err, keyward.ErrSeatsInUse) { … every seat is taken … }
//	defer lease.Close() // checks in
//	ended := lease.KeepAlive(ctx) // heartbeats at the server's interval
//	… work; lease.Consume(ctx, 1) for a metered feature …
//	select { case err := <-ended: … revoked (ErrLeaseRevoked): stop … default: }
//
// Refusals are *APIError (Keyward's code, message and cause; errors.Is against ErrSeatsInUse,
// ErrLeaseRevoked …), token refusals *AuthError, and calls that got no answer from Keyward
// *NetworkError. VerifyLease refuses with a *LeaseError whose Reason is one of the Reason
// constants, the same strings in every Keyward SDK.
//
// A machine that never reaches Keyward is activated offline (docs/activation.md):
// NewActivationRequest makes its request (a typed code or a file), VerifyActivation verifies the
// answer (typed code, answer file or JWS) against the shipped JWKS and the kept request, and
// ActivationReturnCode frees the seat early. cmd/keyward-activate is such a program.
//
// The package speaks API v1 on the standard library alone.
package keyward
