package keyward

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ErrInvalidWebhook is what every refusal of VerifyWebhook wraps: a missing header, a timestamp
// out of the tolerance, no matching signature, or an event id other than webhook-id. Answer such
// a request 400 and do nothing with it.
var ErrInvalidWebhook = errors.New("keyward: webhook not verified")

// DefaultWebhookTolerance is how far a webhook's timestamp may be from now, either way.
const DefaultWebhookTolerance = 5 * time.Minute

// WebhookScope is who an event concerns.
type WebhookScope struct {
	Channels []string `json:"channels"`
	// EnterpriseID and AppKey are "" when the event has none.
	EnterpriseID string `json:"enterpriseId"`
	AppKey       string `json:"appKey"`
}

// WebhookEvent is a webhook Keyward sent (docs/webhooks.md lists the types and their data).
// Deduplicate by ID: a delivery may come more than once.
type WebhookEvent struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Scope     WebhookScope    `json:"scope"`
	Data      json.RawMessage `json:"data"`
	// RequestID is the request that caused the event; "" when none did.
	RequestID string `json:"requestId"`
}

// WebhookOption configures VerifyWebhook.
type WebhookOption func(*webhookOptions)

type webhookOptions struct {
	tolerance time.Duration
	now       func() time.Time
}

// WithTolerance sets how far the webhook-timestamp may be from now (5 minutes unless set).
func WithTolerance(d time.Duration) WebhookOption {
	return func(o *webhookOptions) { o.tolerance = d }
}

// WithWebhookClock replaces the clock the timestamp is judged against (for tests).
func WithWebhookClock(now func() time.Time) WebhookOption {
	return func(o *webhookOptions) {
		if now != nil {
			o.now = now
		}
	}
}

func invalidWebhook(format string, args ...interface{}) error {
	return fmt.Errorf("%w: %s", ErrInvalidWebhook, fmt.Sprintf(format, args...))
}

// VerifyWebhook verifies a webhook by the Standard Webhooks scheme and answers its event: the
// webhook-signature header must hold a "v1," HMAC-SHA256 of "id.timestamp.body" under one of
// secrets (the endpoint's "whsec_…"; two while a rotation overlaps), compared in constant time;
// webhook-timestamp must be within the tolerance of now; and the event's id must be webhook-id.
// body is the raw request body, exactly as received. A refusal wraps ErrInvalidWebhook; a secret
// that is no base64 is an error of its own (the receiver's configuration).
func VerifyWebhook(secrets []string, body []byte, header http.Header, opts ...WebhookOption) (*WebhookEvent, error) {
	options := webhookOptions{tolerance: DefaultWebhookTolerance, now: time.Now}
	for _, opt := range opts {
		opt(&options)
	}
	id := header.Get("Webhook-Id")
	timestamp := header.Get("Webhook-Timestamp")
	signatureHeader := header.Get("Webhook-Signature")
	for name, value := range map[string]string{
		"webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": signatureHeader,
	} {
		if value == "" {
			return nil, invalidWebhook("missing %s header", name)
		}
	}
	sent, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || strings.TrimLeft(timestamp, "0123456789") != "" {
		return nil, invalidWebhook("invalid webhook-timestamp header")
	}
	now := options.now().Unix()
	if math.Abs(float64(now-sent)) > options.tolerance.Seconds() {
		return nil, invalidWebhook("webhook-timestamp too far from now")
	}
	var signatures [][]byte
	for _, entry := range strings.Split(signatureHeader, " ") {
		if !strings.HasPrefix(entry, "v1,") {
			continue // another version: ignored
		}
		if signature, err := base64.StdEncoding.DecodeString(entry[len("v1,"):]); err == nil {
			signatures = append(signatures, signature)
		}
	}
	signed := make([]byte, 0, len(id)+len(timestamp)+len(body)+2)
	signed = append(append(append(append(append(signed, id...), '.'), timestamp...), '.'), body...)
	matched := false
	for _, secret := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
		if err != nil {
			return nil, errors.New("keyward: a webhook secret is not whsec_ and base64")
		}
		mac := hmac.New(sha256.New, key)
		mac.Write(signed)
		expected := mac.Sum(nil)
		for _, signature := range signatures {
			if hmac.Equal(signature, expected) {
				matched = true
			}
		}
	}
	if !matched {
		return nil, invalidWebhook("no matching signature")
	}
	var event WebhookEvent
	if err := json.Unmarshal(body, &event); err != nil {
		return nil, invalidWebhook("the body is not an event: %v", err)
	}
	if event.ID != id {
		return nil, invalidWebhook("webhook-id differs from the event id")
	}
	return &event, nil
}

// MaxWebhookBytes bounds the body WebhookHandler reads.
const MaxWebhookBytes = 1 << 20

// WebhookHandler is an http.Handler for a vendor's receiver: it reads the body (at most
// MaxWebhookBytes), verifies it with VerifyWebhook, answers 400 to a webhook that does not verify,
// and hands a verified event to handle: 204 when handle returns nil, 500 otherwise (Keyward
// retries). handle may see an event twice: act once per event.ID.
func WebhookHandler(secrets []string, handle func(context.Context, *WebhookEvent) error, opts ...WebhookOption) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxWebhookBytes+1))
		if err != nil || len(body) > MaxWebhookBytes {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		event, err := VerifyWebhook(secrets, body, r.Header, opts...)
		if errors.Is(err, ErrInvalidWebhook) {
			http.Error(w, "webhook not verified", http.StatusBadRequest)
			return
		}
		if err != nil {
			http.Error(w, "receiver misconfigured", http.StatusInternalServerError)
			return
		}
		if err := handle(r.Context(), event); err != nil {
			http.Error(w, "not handled", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
