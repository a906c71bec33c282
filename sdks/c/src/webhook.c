/* Webhook verification: Standard Webhooks, HMAC-SHA256 under whsec_ secrets. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "internal.h"

#define DEFAULT_TOLERANCE_MS ((int64_t)300000)

typedef struct event_box {
  kw_webhook_event pub; /* first */
  cJSON *body;
  char *json;
} event_box;

void kw_webhook_event_free(kw_webhook_event *event) {
  if (event == NULL) return;
  event_box *box = (event_box *)event;
  cJSON_Delete(box->body);
  free(box->json);
  free(box);
}

static kw_status refuse(kw_error *err, const char *code, const char *why) {
  return kw__fail(err, KW_ERR_WEBHOOK_REFUSED, code, "webhook refused: %s", why);
}

/* Decimal seconds, digits only; false past 18 digits. */
static bool parse_timestamp(const char *text, int64_t *out) {
  size_t n = strlen(text);
  if (n == 0 || n > 18) return false;
  int64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (text[i] < '0' || text[i] > '9') return false;
    v = v * 10 + (text[i] - '0');
  }
  *out = v;
  return true;
}

/* Does one of the header's "v1,<base64>" entries equal expected? Every entry is compared in full. */
static bool signature_listed(const char *header, const char *expected) {
  size_t expected_len = strlen(expected);
  bool found = false;
  const char *p = header;
  while (*p != '\0') {
    while (*p == ' ') p++;
    const char *end = strchr(p, ' ');
    size_t n = end == NULL ? strlen(p) : (size_t)(end - p);
    if (n > 3 && strncmp(p, "v1,", 3) == 0 && n - 3 == expected_len &&
        CRYPTO_memcmp(p + 3, expected, expected_len) == 0)
      found = true;
    p += n;
  }
  return found;
}

kw_status kw_verify_webhook(const char *const *secrets, size_t secret_count, const char *body, size_t body_len,
                            const char *webhook_id, const char *webhook_timestamp, const char *webhook_signature,
                            int64_t now_s, int tolerance_seconds, kw_webhook_event **out, kw_error *err) {
  /* The seconds of 0.1.0, in milliseconds; a clock past int64's milliseconds is refused as any
   * timestamp that far off would be. */
  int64_t now_ms = now_s > INT64_MAX / 1000 ? INT64_MAX : now_s < 0 ? -1 : now_s * 1000;
  return kw_verify_webhook_ms(secrets, secret_count, body, body_len, webhook_id, webhook_timestamp, webhook_signature,
                              now_ms, (int64_t)tolerance_seconds * 1000, out, err);
}

kw_status kw_verify_webhook_ms(const char *const *secrets, size_t secret_count, const char *body, size_t body_len,
                               const char *webhook_id, const char *webhook_timestamp, const char *webhook_signature,
                               int64_t now_ms, int64_t tolerance_ms, kw_webhook_event **out, kw_error *err) {
  if (out != NULL) *out = NULL;
  if (secrets == NULL || secret_count == 0 || body == NULL)
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "secrets and body are required");
  if (now_ms < 0) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "now_ms is epoch milliseconds, 0 for the system's clock");
  if (webhook_id == NULL || *webhook_id == '\0') return refuse(err, "missing-header", "missing webhook-id header");
  if (webhook_timestamp == NULL || *webhook_timestamp == '\0')
    return refuse(err, "missing-header", "missing webhook-timestamp header");
  if (webhook_signature == NULL || *webhook_signature == '\0')
    return refuse(err, "missing-header", "missing webhook-signature header");
  int64_t timestamp = 0;
  if (!parse_timestamp(webhook_timestamp, &timestamp))
    return refuse(err, "timestamp", "invalid webhook-timestamp header");
  /* Both sides non-negative: their difference cannot overflow. A timestamp past int64's
   * milliseconds (up to 18 digits parse) is too far from any now. */
  if (timestamp > INT64_MAX / 1000) return refuse(err, "timestamp", "webhook-timestamp too far from now");
  if (now_ms == 0) now_ms = kw__realtime_ms();
  int64_t timestamp_ms = timestamp * 1000;
  int64_t tolerance = tolerance_ms > 0 ? tolerance_ms : DEFAULT_TOLERANCE_MS;
  int64_t drift = now_ms > timestamp_ms ? now_ms - timestamp_ms : timestamp_ms - now_ms;
  if (drift > tolerance) return refuse(err, "timestamp", "webhook-timestamp too far from now");

  /* The signed content: id "." timestamp "." body. */
  size_t id_len = strlen(webhook_id), ts_len = strlen(webhook_timestamp);
  size_t signed_len = id_len + 1 + ts_len + 1 + body_len;
  unsigned char *content = malloc(signed_len);
  if (content == NULL) return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  memcpy(content, webhook_id, id_len);
  content[id_len] = '.';
  memcpy(content + id_len + 1, webhook_timestamp, ts_len);
  content[id_len + 1 + ts_len] = '.';
  memcpy(content + id_len + 2 + ts_len, body, body_len);

  bool matched = false;
  for (size_t i = 0; i < secret_count && !matched; i++) {
    const char *secret = secrets[i];
    if (secret == NULL) continue;
    if (strncmp(secret, "whsec_", 6) == 0) secret += 6;
    size_t key_len = 0;
    unsigned char *key = kw__b64_decode(secret, strlen(secret), &key_len);
    if (key == NULL) continue;
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    bool ok = HMAC(EVP_sha256(), key, (int)key_len, content, signed_len, mac, &mac_len) != NULL;
    OPENSSL_cleanse(key, key_len);
    free(key);
    if (!ok) continue;
    char expected[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
    kw__b64_encode(mac, mac_len, expected);
    matched = signature_listed(webhook_signature, expected);
  }
  free(content);
  if (!matched) return refuse(err, "signature", "no matching signature");

  /* Signed: now the body may be read. */
  char *copy = malloc(body_len + 1);
  if (copy == NULL) return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  memcpy(copy, body, body_len);
  copy[body_len] = '\0';
  cJSON *json = cJSON_ParseWithLength(copy, body_len);
  const char *id = kw__json_string(json, "id");
  if (!cJSON_IsObject(json) || id == NULL) {
    cJSON_Delete(json);
    free(copy);
    return refuse(err, "malformed", "the body is not an event");
  }
  if (strcmp(id, webhook_id) != 0) {
    cJSON_Delete(json);
    free(copy);
    return refuse(err, "event-id", "webhook-id differs from the event id");
  }
  if (out != NULL) {
    event_box *box = calloc(1, sizeof *box);
    if (box == NULL) {
      cJSON_Delete(json);
      free(copy);
      return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
    }
    box->body = json;
    box->json = copy;
    box->pub.id = id;
    box->pub.type = kw__json_string(json, "type");
    box->pub.timestamp = kw__json_string(json, "timestamp");
    box->pub.json = copy;
    *out = &box->pub;
  } else {
    cJSON_Delete(json);
    free(copy);
  }
  kw__clear(err);
  return KW_OK;
}
