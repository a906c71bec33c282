package keyward

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

const testWebhookSecret = "whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMDAx"

func signWebhook(t *testing.T, secret, id string, timestamp int64, body string) http.Header {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(timestamp, 10) + "." + body))
	header := http.Header{}
	header.Set("webhook-id", id)
	header.Set("webhook-timestamp", strconv.FormatInt(timestamp, 10))
	header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	return header
}

const testEventBody = `{"id":"evt_1","type":"asset.locked","timestamp":"2027-01-15T07:59:58.000Z",` +
	`"scope":{"channels":["CRM"],"enterpriseId":null,"appKey":"kw_app"},"data":{"assetNum":"A-1"},"requestId":null}`

func TestVerifyWebhookAnswersTheEvent(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	header := signWebhook(t, testWebhookSecret, "evt_1", now.Unix(), testEventBody)
	event, err := VerifyWebhook([]string{testWebhookSecret}, []byte(testEventBody), header,
		WithWebhookClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	if event.ID != "evt_1" || event.Type != "asset.locked" || event.Scope.AppKey != "kw_app" || event.Scope.EnterpriseID != "" ||
		event.RequestID != "" || string(event.Data) != `{"assetNum":"A-1"}` ||
		!event.Timestamp.Equal(time.Date(2027, 1, 15, 7, 59, 58, 0, time.UTC)) {
		t.Fatalf("event %+v", event)
	}
}

func TestVerifyWebhookRefusals(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	clock := WithWebhookClock(func() time.Time { return now })
	good := func() http.Header { return signWebhook(t, testWebhookSecret, "evt_1", now.Unix(), testEventBody) }
	for _, c := range []struct {
		name   string
		header func() http.Header
		body   string
		opts   []WebhookOption
	}{
		{"no webhook-id", func() http.Header { h := good(); h.Del("webhook-id"); return h }, testEventBody, nil},
		{"timestamp not digits", func() http.Header {
			h := signWebhook(t, testWebhookSecret, "evt_1", now.Unix(), testEventBody)
			h.Set("webhook-timestamp", "+"+h.Get("webhook-timestamp"))
			return h
		}, testEventBody, nil},
		{"a narrower tolerance", func() http.Header {
			return signWebhook(t, testWebhookSecret, "evt_1", now.Unix()-61, testEventBody)
		}, testEventBody, []WebhookOption{WithTolerance(time.Minute)}},
		{"signature not base64", func() http.Header { h := good(); h.Set("webhook-signature", "v1,@@@"); return h }, testEventBody, nil},
		{"signed body that is no event", func() http.Header {
			return signWebhook(t, testWebhookSecret, "evt_1", now.Unix(), "not json")
		}, "not json", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := VerifyWebhook([]string{testWebhookSecret}, []byte(c.body), c.header(), append([]WebhookOption{clock}, c.opts...)...)
			if !errors.Is(err, ErrInvalidWebhook) {
				t.Fatalf("want ErrInvalidWebhook, got %v", err)
			}
		})
	}
	// A secret that is not base64 is the receiver's fault, not the sender's.
	_, err := VerifyWebhook([]string{"whsec_not base64!"}, []byte(testEventBody), good(), clock)
	if err == nil || errors.Is(err, ErrInvalidWebhook) {
		t.Fatalf("bad secret: %v", err)
	}
}

func TestWebhookHandler(t *testing.T) {
	now := time.Now()
	var handled []string
	fail := false
	handler := WebhookHandler([]string{testWebhookSecret}, func(_ context.Context, event *WebhookEvent) error {
		handled = append(handled, event.ID)
		if fail {
			return errors.New("database down")
		}
		return nil
	})
	send := func(header http.Header, method string) int {
		request := httptest.NewRequest(method, "/keyward", strings.NewReader(testEventBody))
		for k, v := range header {
			request.Header[k] = v
		}
		recorder := httptest.NewRecorder()
		handler.ServeHTTP(recorder, request)
		return recorder.Code
	}
	header := signWebhook(t, testWebhookSecret, "evt_1", now.Unix(), testEventBody)
	if code := send(header, http.MethodPost); code != http.StatusNoContent || len(handled) != 1 {
		t.Fatalf("verified webhook: %d, handled %v", code, handled)
	}
	forged := signWebhook(t, "whsec_b3RoZXItc2VjcmV0", "evt_1", now.Unix(), testEventBody)
	if code := send(forged, http.MethodPost); code != http.StatusBadRequest || len(handled) != 1 {
		t.Fatalf("forged webhook: %d, handled %v", code, handled)
	}
	if code := send(header, http.MethodGet); code != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", code)
	}
	fail = true
	if code := send(header, http.MethodPost); code != http.StatusInternalServerError {
		t.Fatalf("failed handler: %d", code)
	}
}
