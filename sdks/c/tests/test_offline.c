/*
 * Offline verification beyond the suite's one-defect cases: leases signed here with a key of the
 * test's own, so a token may carry several defects (the first check in the README's order must
 * answer), strict base64url and JSON, relays' leases and their grants, the key set, files, and
 * webhook refusals by kind.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "check.h"
#include "internal.h"

static EVP_PKEY *signing_key;
static kw_jwks *jwks;

#define NOW_S 1800000000LL
#define NOW_MS (NOW_S * 1000)
#define FP "fp-test-machine-0001"

static char *b64url(const unsigned char *in, size_t len) {
  char *out = malloc(4 * ((len + 2) / 3) + 1);
  kw__b64_encode(in, len, out);
  size_t n = 0;
  for (char *p = out; *p != '\0'; p++) {
    if (*p == '=') break;
    out[n++] = *p == '+' ? '-' : *p == '/' ? '_' : *p;
  }
  out[n] = '\0';
  return out;
}

/* header.payload.signature, signed with the test key (or with sign_with when given). */
static char *sign_token(const char *header, const char *payload, EVP_PKEY *sign_with) {
  char *h = b64url((const unsigned char *)header, strlen(header));
  char *p = b64url((const unsigned char *)payload, strlen(payload));
  size_t n = strlen(h) + 1 + strlen(p);
  char *signing_input = malloc(n + 1);
  snprintf(signing_input, n + 1, "%s.%s", h, p);
  unsigned char sig[64];
  size_t sig_len = sizeof sig;
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  if (EVP_DigestSignInit(ctx, NULL, NULL, NULL, sign_with ? sign_with : signing_key) != 1 ||
      EVP_DigestSign(ctx, sig, &sig_len, (const unsigned char *)signing_input, n) != 1) {
    fprintf(stderr, "signing failed\n");
    exit(2);
  }
  EVP_MD_CTX_free(ctx);
  char *s = b64url(sig, sig_len);
  char *token = malloc(n + 2 + strlen(s));
  sprintf(token, "%s.%s", signing_input, s);
  free(h);
  free(p);
  free(s);
  free(signing_input);
  return token;
}

static const char *HEADER = "{\"alg\":\"EdDSA\",\"kid\":\"test-kid\",\"typ\":\"keyward-lease+jwt\"}";

/* A lease payload: the defaults, with members of override replacing or removing theirs (null removes). */
static char *payload_with(const char *override_json) {
  cJSON *p = cJSON_Parse("{\"iss\":\"keyward\",\"sub\":\"L-1\",\"jti\":\"L-1\",\"aud\":\"kw_app\",\"iat\":1799990000,"
                         "\"nbf\":1799990000,\"exp\":1800600000,\"holder\":{\"kind\":\"lock\",\"assetNum\":\"A-1\"},"
                         "\"fingerprint\":\"" FP "\",\"assetNum\":\"A-1\",\"product\":{\"crmProductId\":\"P-1\","
                         "\"productUri\":\"gms-1\",\"productName\":\"Modeler\"},\"limits\":{\"concurrent\":1,"
                         "\"timeDurationSeconds\":null,\"amount\":100,\"startDate\":1797408000000,"
                         "\"endDate\":1805184000000},\"expBound\":\"offline-days\"}");
  cJSON *o = cJSON_Parse(override_json);
  cJSON *item;
  cJSON_ArrayForEach(item, o) {
    if (cJSON_IsNull(item) && strcmp(item->string, "limits.endDate") != 0) {
      cJSON_DeleteItemFromObjectCaseSensitive(p, item->string);
    } else if (strncmp(item->string, "limits.", 7) == 0) {
      cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "limits"), item->string + 7,
                                             cJSON_Duplicate(item, true));
    } else if (cJSON_GetObjectItemCaseSensitive(p, item->string) != NULL) {
      cJSON_ReplaceItemInObjectCaseSensitive(p, item->string, cJSON_Duplicate(item, true));
    } else {
      cJSON_AddItemToObject(p, item->string, cJSON_Duplicate(item, true));
    }
  }
  char *text = cJSON_PrintUnformatted(p);
  cJSON_Delete(p);
  cJSON_Delete(o);
  return text;
}

/* The reason a token is refused with, or "valid". */
static const char *judge(const char *token, const char *audience) {
  static kw_error err;
  kw_claims *claims = NULL;
  kw_status st = kw_verify_lease(jwks, token, FP, audience, NOW_MS, &claims, &err);
  kw_claims_free(claims);
  if (st == KW_OK) return "valid";
  if (st != KW_ERR_LEASE_REFUSED) return kw_status_name(st);
  return err.code;
}

static const char *judge_payload(const char *header, const char *override_json, const char *audience) {
  char *payload = payload_with(override_json);
  char *token = sign_token(header, payload, NULL);
  const char *reason = judge(token, audience);
  free(payload);
  free(token);
  return reason;
}

/* The payload's JSON text as written (payload_with's, with `from` replaced by `to`), signed. */
static const char *judge_text(const char *from, const char *to) {
  char *base = payload_with("{}");
  char *at = strstr(base, from);
  if (at == NULL) {
    free(base);
    return "no such text";
  }
  size_t n = strlen(base) - strlen(from) + strlen(to) + 1;
  char *text = malloc(n);
  snprintf(text, n, "%.*s%s%s", (int)(at - base), base, to, at + strlen(from));
  char *token = sign_token(HEADER, text, NULL);
  const char *reason = judge(token, NULL);
  free(token);
  free(text);
  free(base);
  return reason;
}

/* JSON exactly (RFC 8259): what cJSON alone would take and the other SDKs' parsers refuse. */
static void test_json_exactly(void) {
  CHECK_STR(judge_text("\"Modeler\"", "\"Mod\\u00e9ler \\/ \\\"x\\\"\""), "valid");
  CHECK_STR(judge_text("\"amount\":100", "\"amount\":-0.5e+2"), "valid");
  CHECK_STR(judge_text("\"amount\":100", "\"amount\" : [ 1 , { } , [ ] ]"), "valid");
  CHECK_STR(judge_text("\"amount\":100", "\"amount\":0100"), "malformed");
  CHECK_STR(judge_text("\"amount\":100", "\"amount\":100."), "malformed");
  CHECK_STR(judge_text("\"amount\":100", "\"amount\":.5"), "malformed");
  CHECK_STR(judge_text("\"amount\":100", "\"amount\":+1"), "malformed");
  CHECK_STR(judge_text("\"amount\":100", "\"amount\":1e"), "malformed");
  CHECK_STR(judge_text("\"amount\":100", "\"amount\":[1,]"), "malformed");
  CHECK_STR(judge_text("\"amount\":100", "\"amount\":tru"), "malformed");
  CHECK_STR(judge_text("\"Modeler\"", "\"Mod\teler\""), "malformed");
  CHECK_STR(judge_text("\"Modeler\"", "\"Mod\\xeler\""), "malformed");
  CHECK_STR(judge_text("\"Modeler\"", "\"Mod\\u00eler\""), "malformed");
  CHECK_STR(judge_text("\"Modeler\"", "'Modeler'"), "malformed");
}

static void test_order_of_checks(void) {
  CHECK_STR(judge_payload(HEADER, "{}", "kw_app"), "valid");
  /* One defect each, as the suite has them, to anchor what follows. */
  CHECK_STR(judge_payload(HEADER, "{\"exp\":1800000000}", NULL), "expired"); /* exp == now: expired */
  CHECK_STR(judge_payload(HEADER, "{\"exp\":1800000001}", NULL), "valid");
  CHECK_STR(judge_payload(HEADER, "{\"nbf\":1800000001}", NULL), "not-yet-valid");
  CHECK_STR(judge_payload(HEADER, "{\"nbf\":1800000000}", NULL), "valid");
  /* Several defects: the first check in the README's order answers. */
  CHECK_STR(judge_payload(HEADER, "{\"exp\":1700000000,\"fingerprint\":\"other-machine\"}", NULL), "expired");
  CHECK_STR(judge_payload(HEADER, "{\"nbf\":1900000000,\"exp\":1700000000}", NULL), "not-yet-valid");
  CHECK_STR(judge_payload(HEADER, "{\"exp\":1700000000,\"aud\":\"kw_other\"}", "kw_app"), "expired");
  CHECK_STR(judge_payload(HEADER, "{\"aud\":\"kw_other\",\"holder\":null}", "kw_app"), "audience");
  CHECK_STR(judge_payload(HEADER, "{\"holder\":null,\"fingerprint\":\"other-machine\"}", NULL), "malformed");
  CHECK_STR(judge_payload(HEADER, "{\"fingerprint\":\"other-machine\",\"limits.endDate\":1700000000000}", NULL),
            "fingerprint");
  CHECK_STR(judge_payload(HEADER, "{\"limits.endDate\":1700000000000}", NULL), "license-ended");
  CHECK_STR(judge_payload(HEADER, "{\"limits.endDate\":1800000000000}", NULL), "valid"); /* ends now: not yet */
  CHECK_STR(judge_payload(HEADER, "{\"limits.endDate\":null}", NULL), "valid");
  CHECK_STR(judge_payload(HEADER, "{\"iss\":\"other\",\"exp\":1700000000}", NULL), "malformed");
  CHECK_STR(judge_payload(HEADER, "{\"jti\":null,\"exp\":1700000000}", NULL), "malformed");
  /* The times must be numbers, whole seconds. */
  CHECK_STR(judge_payload(HEADER, "{\"exp\":\"1800600000\"}", NULL), "malformed");
  CHECK_STR(judge_payload(HEADER, "{\"nbf\":1799990000.5}", NULL), "malformed");
  /* The shape: expBound absent is fine, unknown is not; the holder's kind decides its fields. */
  CHECK_STR(judge_payload(HEADER, "{\"expBound\":null}", NULL), "valid");
  CHECK_STR(judge_payload(HEADER, "{\"expBound\":\"forever\"}", NULL), "malformed");
  CHECK_STR(judge_payload(HEADER, "{\"holder\":{\"kind\":\"member\",\"assetNum\":\"A-1\"}}", NULL), "malformed");
  CHECK_STR(judge_payload(HEADER, "{\"holder\":{\"kind\":\"member\",\"memberGlobalId\":\"m\",\"enterpriseGlobalId\":\"e\"}}",
                          NULL),
            "valid");
  CHECK_STR(judge_payload(HEADER, "{\"limits.endDate\":\"tomorrow\"}", NULL), "malformed");
  CHECK_STR(judge_payload(HEADER, "{\"product\":\"P-1\"}", NULL), "malformed");
  /* One name in sibling and nested objects is no name given twice; one object naming it twice is. */
  CHECK_STR(judge_payload(HEADER, "{\"extra\":[{\"a\":1},{\"a\":2}],\"more\":{\"a\":{\"a\":3}}}", NULL), "valid");
  CHECK_STR(judge_payload(HEADER, "{\"extra\":[1,{\"a\":1,\"b\":[],\"a\":2}]}", NULL), "malformed");
  /* The times: whole seconds from 0 to the end of year 9999. */
  CHECK_STR(judge_payload(HEADER, "{\"nbf\":0}", NULL), "valid");
  CHECK_STR(judge_payload(HEADER, "{\"nbf\":-1}", NULL), "malformed");
  CHECK_STR(judge_payload(HEADER, "{\"exp\":253402300799}", NULL), "valid");
  CHECK_STR(judge_payload(HEADER, "{\"exp\":253402300800}", NULL), "malformed");
  /* aud is one string: an array is malformed, whether an audience is asked for or not. */
  CHECK_STR(judge_payload(HEADER, "{\"aud\":[\"kw_app\"]}", "kw_app"), "malformed");
  CHECK_STR(judge_payload(HEADER, "{\"aud\":[\"kw_app\"]}", NULL), "malformed");
}

static void test_header_checks(void) {
  /* alg first, then the key, then the signature, then typ. */
  CHECK_STR(judge_payload("{\"alg\":\"HS256\",\"kid\":\"no-such-kid\",\"typ\":\"JWT\"}", "{}", NULL), "signature");
  CHECK_STR(judge_payload("{\"kid\":\"test-kid\",\"typ\":\"keyward-lease+jwt\"}", "{}", NULL), "signature");
  CHECK_STR(judge_payload("{\"alg\":\"EdDSA\",\"kid\":\"no-such-kid\",\"typ\":\"JWT\"}", "{}", NULL), "unknown-key");
  CHECK_STR(judge_payload("{\"alg\":\"EdDSA\",\"typ\":\"keyward-lease+jwt\"}", "{}", NULL), "unknown-key");
  CHECK_STR(judge_payload("{\"alg\":\"EdDSA\",\"kid\":\"test-kid\",\"typ\":\"JWT\"}", "{\"exp\":1}", NULL), "malformed");
  CHECK_STR(judge_payload("{\"alg\":\"EdDSA\",\"kid\":\"test-kid\"}", "{}", NULL), "malformed");
  /* typ compares as a media type: "application/" may be written, case does not matter. */
  CHECK_STR(judge_payload("{\"alg\":\"EdDSA\",\"kid\":\"test-kid\",\"typ\":\"application/keyward-lease+jwt\"}", "{}",
                          NULL),
            "valid");
  CHECK_STR(judge_payload("{\"alg\":\"EdDSA\",\"kid\":\"test-kid\",\"typ\":\"Keyward-Lease+JWT\"}", "{}", NULL),
            "valid");
  CHECK_STR(judge_payload("{\"alg\":\"EdDSA\",\"kid\":\"test-kid\",\"typ\":\"text/keyward-lease+jwt\"}", "{}",
                          NULL),
            "malformed");
  CHECK_STR(judge_payload("{\"alg\":\"EdDSA\",\"kid\":\"test-kid\",\"typ\":\"keyward-lease+jwt\",\"crit\":[\"x\"]}",
                          "{}", NULL),
            "malformed");

  /* Another key with our kid: its signature is no signature of ours. */
  EVP_PKEY *other = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
  char *payload = payload_with("{}");
  char *forged = sign_token(HEADER, payload, other);
  CHECK_STR(judge(forged, NULL), "signature");
  /* A signature moved onto other claims. */
  char *good = sign_token(HEADER, payload, NULL);
  char *longer = payload_with("{\"exp\":1900000000}");
  char *resigned = sign_token(HEADER, longer, NULL);
  char *spliced = malloc(strlen(good) + strlen(resigned) + 1);
  const char *good_sig = strrchr(good, '.');
  size_t head = (size_t)(strrchr(resigned, '.') - resigned);
  memcpy(spliced, resigned, head);
  strcpy(spliced + head, good_sig);
  CHECK_STR(judge(spliced, NULL), "signature");
  /* A signature of the wrong length (valid base64url of three bytes). */
  strcpy(strrchr(good, '.') + 1, "AAAA");
  CHECK_STR(judge(good, NULL), "signature");
  free(payload);
  free(forged);
  free(good);
  free(longer);
  free(resigned);
  free(spliced);
  EVP_PKEY_free(other);
}

static void test_malformed_texts(void) {
  char *payload = payload_with("{}");
  char *token = sign_token(HEADER, payload, NULL);
  CHECK_STR(judge(token, NULL), "valid");
  size_t n = strlen(token);
  char *copy = malloc(n + 8);

  /* Padding is not base64url without padding. */
  snprintf(copy, n + 8, "%s=", token);
  CHECK_STR(judge(copy, NULL), "malformed");
  /* Standard base64's alphabet. */
  strcpy(copy, token);
  char *sig = strrchr(copy, '.') + 1;
  for (char *p = sig; *p; p++)
    if (*p == '-' || *p == '_') *p = *p == '-' ? '+' : '/';
  if (strcmp(copy, token) != 0) CHECK_STR(judge(copy, NULL), "malformed");
  /* Four parts, two parts, empty. */
  snprintf(copy, n + 8, "%s.x", token);
  CHECK_STR(judge(copy, NULL), "malformed");
  CHECK_STR(judge("abc.def", NULL), "malformed");
  CHECK_STR(judge("", NULL), "malformed");
  CHECK_STR(judge("..", NULL), "malformed");
  /* A header that is JSON but no object; a payload with text after the JSON. */
  char *array_header = sign_token("[1,2]", payload, NULL);
  CHECK_STR(judge(array_header, NULL), "malformed");
  size_t pl = strlen(payload);
  char *trailing = malloc(pl + 8);
  snprintf(trailing, pl + 8, "%s xyz", payload);
  char *trailing_token = sign_token(HEADER, trailing, NULL);
  CHECK_STR(judge(trailing_token, NULL), "malformed");
  /* Trailing whitespace after the JSON is still JSON. */
  snprintf(trailing, pl + 8, "%s \n", payload);
  char *spaced = sign_token(HEADER, trailing, NULL);
  CHECK_STR(judge(spaced, NULL), "valid");
  /* A base64url text whose last character carries bits past the bytes: not canonical. */
  strcpy(copy, token);
  char *first_dot = strchr(copy, '.');
  size_t header_len = (size_t)(first_dot - copy);
  if (header_len % 4 == 2) { /* the last character holds 4 spare bits */
    char *last = first_dot - 1;
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t v = (size_t)(strchr(alphabet, *last) - alphabet);
    *last = alphabet[v | 1];
    CHECK_STR(judge(copy, NULL), "malformed");
  }
  free(payload);
  free(token);
  free(copy);
  free(array_header);
  free(trailing);
  free(trailing_token);
  free(spaced);
}

static void test_claims_answered(void) {
  char *payload = payload_with("{}");
  char *token = sign_token(HEADER, payload, NULL);
  kw_claims *c = NULL;
  kw_error err;
  CHECK(kw_verify_lease(jwks, token, FP, "kw_app", NOW_MS, &c, &err) == KW_OK, "%s", err.message);
  if (c != NULL) {
    CHECK_STR(c->iss, "keyward");
    CHECK_STR(c->sub, "L-1");
    CHECK_STR(c->aud, "kw_app");
    CHECK_STR(c->holder_kind, "lock");
    CHECK_STR(c->holder_asset_num, "A-1");
    CHECK(c->member_global_id == NULL, "a lock has no member");
    CHECK_STR(c->fingerprint, FP);
    CHECK_STR(c->product.crm_product_id, "P-1");
    CHECK_STR(c->product.product_name, "Modeler");
    CHECK(c->exp_s == 1800600000, "exp %lld", (long long)c->exp_s);
    CHECK(c->limits.amount == 100, "amount");
    CHECK(c->limits.time_duration_seconds == KW_UNSET, "null is KW_UNSET");
    CHECK(c->limits.end_date_ms == 1805184000000LL, "endDate");
    CHECK_STR(c->exp_bound, "offline-days");
    CHECK(c->payload_json != NULL && strstr(c->payload_json, "\"jti\":\"L-1\"") != NULL, "payload json");
  }
  kw_claims_free(c);
  /* No claims out: still judged. */
  CHECK(kw_verify_lease(jwks, token, FP, NULL, NOW_MS, NULL, NULL) == KW_OK, "without out");
  CHECK(kw_verify_lease(jwks, token, "another-machine", NULL, NOW_MS, &c, &err) == KW_ERR_LEASE_REFUSED &&
            c == NULL && strcmp(err.code, "fingerprint") == 0,
        "refused leaves out NULL");
  CHECK(err.status == KW_ERR_LEASE_REFUSED && strstr(err.message, "fingerprint") != NULL, "message names it: %s",
        err.message);
  /* The system clock (now_ms 0): a lease valid from a minute ago for an hour. */
  long long wall = (long long)(kw__realtime_ms() / 1000);
  char around[128];
  snprintf(around, sizeof around, "{\"nbf\":%lld,\"iat\":%lld,\"exp\":%lld,\"limits.endDate\":null}", wall - 60,
           wall - 60, wall + 3600);
  char *current = payload_with(around);
  char *current_token = sign_token(HEADER, current, NULL);
  CHECK(kw_verify_lease(jwks, current_token, FP, NULL, 0, NULL, &err) == KW_OK, "by the clock: %s", err.message);
  snprintf(around, sizeof around, "{\"nbf\":%lld,\"exp\":%lld}", wall - 7200, wall - 3600);
  free(current);
  free(current_token);
  current = payload_with(around);
  current_token = sign_token(HEADER, current, NULL);
  CHECK(kw_verify_lease(jwks, current_token, FP, NULL, 0, NULL, &err) == KW_ERR_LEASE_REFUSED &&
            strcmp(err.code, "expired") == 0,
        "expired by the clock: %s", err.code);
  free(current);
  free(current_token);
  CHECK(kw_verify_lease(NULL, token, FP, NULL, NOW_MS, NULL, &err) == KW_ERR_INVALID_ARGUMENT, "NULL jwks");
  free(payload);
  free(token);
}

/* A remembered signature skips the Ed25519 check, never a claim's, and vouches for nothing else. */
static void test_remembered_signatures(void) {
  char *payload = payload_with("{}");
  char *token = sign_token(HEADER, payload, NULL);
  kw_error err;
  for (int i = 0; i < 3; i++) CHECK_STR(judge(token, NULL), "valid");
  /* The same token later, elsewhere, for another application: judged afresh each time. */
  CHECK(kw_verify_lease(jwks, token, FP, NULL, 1900000000000LL, NULL, &err) == KW_ERR_LEASE_REFUSED &&
            strcmp(err.code, "expired") == 0,
        "remembered, still expired later: %s", err.code);
  CHECK_STR(judge(token, "kw_other"), "audience");
  CHECK(kw_verify_lease(jwks, token, "another-machine", NULL, NOW_MS, NULL, &err) == KW_ERR_LEASE_REFUSED &&
            strcmp(err.code, "fingerprint") == 0,
        "remembered, another machine: %s", err.code);
  /* Its signature on other claims, or another signature on its claims, is checked in full. */
  EVP_PKEY *other = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
  char *forged = sign_token(HEADER, payload, other);
  CHECK_STR(judge(forged, NULL), "signature");
  char *longer = payload_with("{\"exp\":1900000000}");
  char *other_claims = sign_token(HEADER, longer, NULL);
  char *spliced = malloc(strlen(other_claims) + strlen(token) + 1);
  size_t head = (size_t)(strrchr(other_claims, '.') - other_claims);
  memcpy(spliced, other_claims, head);
  strcpy(spliced + head, strrchr(token, '.'));
  CHECK_STR(judge(spliced, NULL), "signature");
  /* More tokens than it remembers: each still verifies, the first again too. */
  for (int i = 0; i < 40; i++) {
    char o[64];
    snprintf(o, sizeof o, "{\"sub\":\"L-%d\"}", i);
    CHECK_STR(judge_payload(HEADER, o, NULL), "valid");
  }
  CHECK_STR(judge(token, NULL), "valid");
  /* And with the memory off (the benchmark's cold runs), the same answers. */
  kw__jwks_remember(jwks, false);
  CHECK_STR(judge(token, NULL), "valid");
  CHECK_STR(judge(spliced, NULL), "signature");
  kw__jwks_remember(jwks, true);
  free(payload);
  free(token);
  free(forged);
  free(longer);
  free(other_claims);
  free(spliced);
  EVP_PKEY_free(other);
}

/* ---- relays' leases: a grant signed with the test's key certifies a relay key of the test's own ---- */

static EVP_PKEY *relay_key;
static char *relay_x;

static const char *GRANT_HEADER = "{\"alg\":\"EdDSA\",\"kid\":\"test-kid\",\"typ\":\"keyward-grant+jwt\"}";

/* A pool grant's payload: the defaults, with members of override replacing theirs (null removes). */
static char *grant_with(const char *override_json) {
  char base[1024];
  snprintf(base, sizeof base,
           "{\"iss\":\"keyward\",\"sub\":\"relay-1\",\"jti\":\"G-1\",\"iat\":1799990000,\"nbf\":1799990000,"
           "\"exp\":1800700000,\"relay\":{\"key\":{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%s\","
           "\"kid\":\"relay-kid\"},\"fingerprint\":\"fp-relay\"},\"licenses\":[{\"assetNum\":\"A-2\","
           "\"crmProductId\":null,\"seats\":1},{\"assetNum\":\"A-1\",\"crmProductId\":\"P-1\",\"seats\":5}],"
           "\"machines\":null,\"overage\":{\"policy\":\"refuse\",\"seats\":0}}",
           relay_x);
  cJSON *p = cJSON_Parse(base);
  cJSON *o = cJSON_Parse(override_json);
  cJSON *item;
  cJSON_ArrayForEach(item, o) {
    if (cJSON_IsNull(item) && strcmp(item->string, "machines") != 0) cJSON_DeleteItemFromObjectCaseSensitive(p, item->string);
    else if (cJSON_GetObjectItemCaseSensitive(p, item->string) != NULL)
      cJSON_ReplaceItemInObjectCaseSensitive(p, item->string, cJSON_Duplicate(item, true));
    else cJSON_AddItemToObject(p, item->string, cJSON_Duplicate(item, true));
  }
  char *text = cJSON_PrintUnformatted(p);
  cJSON_Delete(p);
  cJSON_Delete(o);
  return text;
}

/*
 * A relay's lease: the grant (grant_header, NULL for the usual one; its payload grant_with's) signed
 * with the test's key, carried in the lease's header with kid (NULL: the relay's), the lease
 * (payload_with's) signed with the relay's key.
 */
static char *relay_lease(const char *grant_header, const char *grant_override, const char *kid,
                         const char *lease_override) {
  char *grant_payload = grant_with(grant_override);
  char *grant = sign_token(grant_header ? grant_header : GRANT_HEADER, grant_payload, NULL);
  size_t n = strlen(grant) + 128;
  char *header = malloc(n);
  snprintf(header, n, "{\"alg\":\"EdDSA\",\"kid\":\"%s\",\"typ\":\"keyward-lease+jwt\",\"grant\":\"%s\"}",
           kid ? kid : "relay-kid", grant);
  char *payload = payload_with(lease_override);
  char *token = sign_token(header, payload, relay_key);
  free(grant_payload);
  free(grant);
  free(header);
  free(payload);
  return token;
}

static const char *judge_relay_with(const char *grant_header, const char *grant_override, const char *kid,
                                    const char *lease_override, const char *audience) {
  char *token = relay_lease(grant_header, grant_override, kid, lease_override);
  const char *reason = judge(token, audience);
  free(token);
  return reason;
}

static const char *judge_relay(const char *grant_override, const char *lease_override) {
  return judge_relay_with(NULL, grant_override, NULL, lease_override, NULL);
}

static void test_relay_leases(void) {
  CHECK_STR(judge_relay("{}", "{}"), "valid");
  /* The grant's checks in their order, before the lease's kid and signature. */
  CHECK_STR(judge_relay_with("{\"alg\":\"HS256\",\"typ\":\"JWT\"}", "{\"iss\":\"other\"}", "other-kid", "{}", NULL),
            "signature");
  CHECK_STR(judge_relay_with("{\"alg\":\"EdDSA\",\"kid\":\"no-such-kid\",\"typ\":\"JWT\"}", "{\"exp\":1}",
                             "other-kid", "{}", NULL),
            "unknown-key");
  CHECK_STR(judge_relay_with("{\"alg\":\"EdDSA\",\"kid\":\"test-kid\",\"typ\":\"keyward-lease+jwt\"}", "{\"exp\":1}",
                             "other-kid", "{}", NULL),
            "malformed"); /* a lease's typ is no grant's */
  CHECK_STR(judge_relay_with("{\"alg\":\"EdDSA\",\"kid\":\"test-kid\",\"typ\":\"application/Keyward-Grant+JWT\"}", "{}",
                             NULL, "{}", NULL),
            "valid");
  CHECK_STR(judge_relay_with("{\"alg\":\"EdDSA\",\"kid\":\"test-kid\",\"typ\":\"keyward-grant+jwt\",\"crit\":[]}",
                             "{}", NULL, "{}", NULL),
            "malformed");
  CHECK_STR(judge_relay("{\"nbf\":1800000001,\"exp\":1700000000}", "{}"), "not-yet-valid");
  CHECK_STR(judge_relay("{\"exp\":1800000000}", "{\"exp\":1700000000}"), "grant-expired"); /* exp == now */
  CHECK_STR(judge_relay_with(NULL, "{\"exp\":1700000000}", "other-kid", "{}", NULL), "grant-expired");
  CHECK_STR(judge_relay_with(NULL, "{}", "other-kid", "{\"exp\":1700000000}", NULL), "unknown-key");
  CHECK_STR(judge_relay_with(NULL, "{}", "test-kid", "{}", NULL), "unknown-key"); /* a vendor key's kid */
  /* The lease's own checks, then beyond-grant, then the machine and the license's end. */
  CHECK_STR(judge_relay("{\"exp\":1800500000}", "{\"exp\":1700000000}"), "expired");
  CHECK_STR(judge_relay_with(NULL, "{\"exp\":1800500000}", NULL, "{}", "kw_other"), "audience");
  CHECK_STR(judge_relay("{\"exp\":1800500000}", "{\"holder\":null}"), "malformed");
  CHECK_STR(judge_relay("{\"exp\":1800500000}", "{\"fingerprint\":\"other-machine\"}"), "beyond-grant");
  CHECK_STR(judge_relay("{}", "{\"fingerprint\":\"other-machine\",\"limits.endDate\":1700000000000}"), "fingerprint");
  CHECK_STR(judge_relay("{}", "{\"limits.endDate\":1700000000000}"), "license-ended");
  /* Beyond the grant, each way; at its bounds, within. */
  CHECK_STR(judge_relay("{}", "{\"exp\":1800700000}"), "valid");
  CHECK_STR(judge_relay("{}", "{\"exp\":1800700001}"), "beyond-grant");
  CHECK_STR(judge_relay("{}", "{\"limits.concurrent\":5}"), "valid");
  CHECK_STR(judge_relay("{}", "{\"limits.concurrent\":6}"), "beyond-grant");
  CHECK_STR(judge_relay("{}", "{\"limits\":{\"concurrent\":null,\"endDate\":null}}"), "beyond-grant");
  CHECK_STR(judge_relay("{}", "{\"limits\":{\"concurrent\":0,\"endDate\":null}}"), "valid");
  CHECK_STR(judge_relay("{}", "{\"limits\":{\"amount\":1,\"endDate\":null}}"), "beyond-grant"); /* no concurrent */
  CHECK_STR(judge_relay("{}", "{\"limits.concurrent\":\"1\"}"), "beyond-grant");
  CHECK_STR(judge_relay("{}", "{\"limits.concurrent\":1.5}"), "beyond-grant");
  CHECK_STR(judge_relay("{}", "{\"assetNum\":\"A-9\"}"), "beyond-grant");
  CHECK_STR(judge_relay("{}", "{\"product\":{\"crmProductId\":\"P-2\"}}"), "beyond-grant");
  CHECK_STR(judge_relay("{}", "{\"product\":{\"productUri\":\"gms-1\"}}"), "beyond-grant"); /* absent: not null */
  CHECK_STR(judge_relay("{}", "{\"assetNum\":\"A-2\",\"product\":{\"crmProductId\":null}}"), "valid");
  CHECK_STR(judge_relay("{}", "{\"assetNum\":\"A-2\",\"product\":{\"crmProductId\":null},\"limits.concurrent\":2}"),
            "beyond-grant");
  CHECK_STR(judge_relay("{}", "{\"assetNum\":\"A-2\",\"product\":{\"crmProductId\":\"P-1\"}}"), "beyond-grant");
  CHECK_STR(judge_relay("{\"machines\":[\"fp-a\",\"" FP "\"]}", "{}"), "valid");
  CHECK_STR(judge_relay("{\"machines\":[\"fp-a\"]}", "{}"), "beyond-grant");
  CHECK_STR(judge_relay("{\"machines\":[]}", "{}"), "beyond-grant");
  CHECK_STR(judge_relay("{\"machines\":null}", "{}"), "valid");
  CHECK_STR(judge_relay("{\"machines\":null,\"overage\":null}", "{}"), "valid"); /* overage is not read */
  /* The grant's shape. */
  CHECK_STR(judge_relay("{\"machines\":[\"fp-a\",1]}", "{}"), "malformed");
  CHECK_STR(judge_relay("{\"machines\":\"" FP "\"}", "{}"), "malformed");
  CHECK_STR(judge_relay("{\"licenses\":[]}", "{}"), "malformed");
  CHECK_STR(judge_relay("{\"licenses\":[{\"assetNum\":\"A-1\",\"crmProductId\":\"P-1\",\"seats\":1000000000}]}", "{}"),
            "valid");
  CHECK_STR(judge_relay("{\"licenses\":[{\"assetNum\":\"A-1\",\"crmProductId\":\"P-1\",\"seats\":1000000001}]}", "{}"),
            "malformed");
  CHECK_STR(judge_relay("{\"licenses\":[{\"assetNum\":\"A-1\",\"crmProductId\":\"P-1\",\"seats\":0}]}", "{}"),
            "malformed");
  CHECK_STR(judge_relay("{\"licenses\":[{\"assetNum\":\"A-1\",\"crmProductId\":\"P-1\",\"seats\":2.5}]}", "{}"),
            "malformed");
  CHECK_STR(judge_relay("{\"licenses\":[{\"assetNum\":\"A-1\",\"seats\":5}]}", "{}"), "malformed");
  CHECK_STR(judge_relay("{\"licenses\":[[\"A-1\",\"P-1\",5]]}", "{}"), "malformed");
  CHECK_STR(judge_relay("{\"licenses\":{\"assetNum\":\"A-1\",\"crmProductId\":\"P-1\",\"seats\":5}}", "{}"),
            "malformed");
  CHECK_STR(judge_relay("{\"sub\":7}", "{}"), "malformed");
  CHECK_STR(judge_relay("{\"iss\":null}", "{}"), "malformed");
  CHECK_STR(judge_relay("{\"nbf\":-1}", "{}"), "malformed");
  CHECK_STR(judge_relay("{\"exp\":253402300800}", "{}"), "malformed");
  char relay[256];
  const char *keys[] = {
      "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%s=\",\"kid\":\"relay-kid\"}",  /* padded */
      "{\"kty\":\"OKP\",\"crv\":\"Ed448\",\"x\":\"%s\",\"kid\":\"relay-kid\"}",    /* another curve */
      "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%.42s\",\"kid\":\"relay-kid\"}", /* 31 bytes */
      "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%s\"}",                           /* no kid */
      "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%s\",\"kid\":null}",
  };
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
    char key[160];
    snprintf(key, sizeof key, keys[i], relay_x);
    snprintf(relay, sizeof relay, "{\"relay\":{\"key\":%s,\"fingerprint\":\"fp-relay\"}}", key);
    CHECK(strcmp(judge_relay(relay, "{}"), "malformed") == 0, "relay key %zu: %s", i, judge_relay(relay, "{}"));
  }
  snprintf(relay, sizeof relay,
           "{\"relay\":{\"key\":{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%s\",\"kid\":\"relay-kid\"}}}", relay_x);
  CHECK_STR(judge_relay(relay, "{}"), "malformed"); /* no relay.fingerprint */
  /* A relay key the grant does not certify, with the certified kid: no signature of it. */
  EVP_PKEY *other = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
  EVP_PKEY *certified = relay_key;
  char *token = relay_lease(NULL, "{}", NULL, "{}");
  relay_key = other;
  char *forged = relay_lease(NULL, "{}", NULL, "{}");
  relay_key = certified;
  CHECK_STR(judge(forged, NULL), "signature");

  /* The claims say whose lease it is; Keyward's own leases name no relay. */
  kw_claims *c = NULL;
  kw_error err;
  CHECK(kw_verify_lease(jwks, token, FP, "kw_app", NOW_MS, &c, &err) == KW_OK, "%s", err.message);
  if (c != NULL) {
    CHECK_STR(c->relay_id, "relay-1");
    CHECK_STR(c->sub, "L-1");
    CHECK(c->limits.concurrent == 1, "concurrent %lld", (long long)c->limits.concurrent);
  }
  kw_claims_free(c);
  c = NULL;
  char *payload = payload_with("{}");
  char *vendor = sign_token(HEADER, payload, NULL);
  CHECK(kw_verify_lease(jwks, vendor, FP, NULL, NOW_MS, &c, &err) == KW_OK && c != NULL && c->relay_id == NULL,
        "a lease Keyward signed names no relay");
  kw_claims_free(c);

  /* Remembered signatures: the grant's and the lease's, each by its own key, and nothing else. */
  for (int i = 0; i < 3; i++) CHECK_STR(judge(token, NULL), "valid");
  CHECK_STR(judge(forged, NULL), "signature");
  CHECK(kw_verify_lease(jwks, token, FP, NULL, 1800700000000LL, NULL, &err) == KW_ERR_LEASE_REFUSED &&
            strcmp(err.code, "grant-expired") == 0,
        "remembered, the grant still ends: %s", err.code);
  /* The relay's signature moved onto a lease of the vendor's key's kid, and back. */
  char *spliced = malloc(strlen(vendor) + strlen(token) + 1);
  size_t head = (size_t)(strrchr(vendor, '.') - vendor);
  memcpy(spliced, vendor, head);
  strcpy(spliced + head, strrchr(token, '.'));
  CHECK_STR(judge(spliced, NULL), "signature");
  kw__jwks_remember(jwks, false);
  CHECK_STR(judge(token, NULL), "valid");
  CHECK_STR(judge(forged, NULL), "signature");
  kw__jwks_remember(jwks, true);
  /* A grant that is no string, or no compact JWS. */
  char *odd = sign_token("{\"alg\":\"EdDSA\",\"kid\":\"relay-kid\",\"typ\":\"keyward-lease+jwt\",\"grant\":null}",
                         payload, relay_key);
  CHECK_STR(judge(odd, NULL), "malformed");
  free(odd);
  odd = sign_token("{\"alg\":\"EdDSA\",\"kid\":\"relay-kid\",\"typ\":\"keyward-lease+jwt\",\"grant\":\"a.b.c\"}",
                   payload, relay_key);
  CHECK_STR(judge(odd, NULL), "malformed");
  free(odd);
  odd = sign_token("{\"alg\":\"none\",\"kid\":\"relay-kid\",\"typ\":\"keyward-lease+jwt\",\"grant\":7}", payload,
                   relay_key);
  CHECK_STR(judge(odd, NULL), "signature"); /* alg before the grant */
  free(odd);
  free(payload);
  free(vendor);
  free(spliced);
  free(token);
  free(forged);
  EVP_PKEY_free(other);
}

static void test_jwks(void) {
  kw_jwks *set = NULL;
  kw_error err;
  CHECK(kw_jwks_parse("[]", 2, &set, &err) == KW_ERR_JWKS && set == NULL, "an array is no JWKS");
  CHECK_STR(err.code, "jwks-unavailable");
  CHECK(kw_jwks_parse("{\"keys\":{}}", 11, &set, &err) == KW_ERR_JWKS, "keys must be an array");
  const char *mixed = "{\"keys\":[{\"kty\":\"RSA\",\"kid\":\"r\",\"n\":\"AQAB\",\"e\":\"AQAB\"},"
                      "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"kid\":\"short\",\"x\":\"AAAA\"},"
                      "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"kid\":\"enc\",\"use\":\"enc\","
                      "\"x\":\"6SVDqvbVE-VLwIL4TKinRPng9SGZ-yhduJKFSNiXRBA\"},"
                      "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"kid\":\"good\","
                      "\"x\":\"6SVDqvbVE-VLwIL4TKinRPng9SGZ-yhduJKFSNiXRBA\"}]}";
  CHECK(kw_jwks_parse(mixed, strlen(mixed), &set, &err) == KW_OK, "%s", err.message);
  CHECK(kw_jwks_count(set) == 1, "only the Ed25519 signing key: %zu", kw_jwks_count(set));

  char dir[] = "/tmp/keyward-c-test-XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "tmp dir");
  char path[256];
  snprintf(path, sizeof path, "%s/jwks.json", dir);
  CHECK(kw_jwks_save(set, path, &err) == KW_OK, "%s", err.message);
  kw_jwks *loaded = NULL;
  CHECK(kw_jwks_load(path, &loaded, &err) == KW_OK, "%s", err.message);
  CHECK_STR(kw_jwks_json(loaded), mixed);
  CHECK(kw_jwks_count(loaded) == 1, "reloaded");
  kw_jwks_free(loaded);
  kw_jwks_free(set);

  char missing[300];
  snprintf(missing, sizeof missing, "%s/none.json", dir);
  CHECK(kw_jwks_load(missing, &loaded, &err) == KW_ERR_IO && loaded == NULL, "a missing file is KW_ERR_IO");
  CHECK(strstr(err.message, "none.json") != NULL, "names the file: %s", err.message);

  /* The signed lease's file: owner-only, the token back without the newline an editor adds. */
  char lease_path[300];
  snprintf(lease_path, sizeof lease_path, "%s/lease.jws", dir);
  CHECK(kw_lease_token_save("aaa.bbb.ccc", lease_path, &err) == KW_OK, "%s", err.message);
  struct stat st;
  CHECK(stat(lease_path, &st) == 0 && (st.st_mode & 0777) == 0600, "mode %o", st.st_mode & 0777);
  FILE *f = fopen(lease_path, "a");
  fputs("\n", f);
  fclose(f);
  char *token = NULL;
  CHECK(kw_lease_token_load(lease_path, &token, &err) == KW_OK, "%s", err.message);
  CHECK_STR(token, "aaa.bbb.ccc");
  kw_string_free(token);
  unlink(lease_path);
  unlink(path);
  rmdir(dir);
}

static void test_base64(void) {
  size_t n = 0;
  unsigned char *out = kw__b64url_decode("aGk", 3, &n);
  CHECK(out != NULL && n == 2 && memcmp(out, "hi", 2) == 0, "aGk is hi");
  free(out);
  CHECK(kw__b64url_decode("aGk=", 4, &n) == NULL, "no padding in base64url");
  CHECK(kw__b64url_decode("aGl", 3, &n) == NULL, "spare bits must be zero");
  CHECK(kw__b64url_decode("a", 1, &n) == NULL, "one character is no byte");
  CHECK(kw__b64url_decode("a+b/", 4, &n) == NULL, "+ and / are not base64url");
  out = kw__b64_decode("aGk=", 4, &n);
  CHECK(out != NULL && n == 2, "standard with padding");
  free(out);
  out = kw__b64_decode("aGk", 3, &n);
  CHECK(out != NULL && n == 2, "standard without padding");
  free(out);
  CHECK(kw__b64_decode("aG==", 4, &n) == NULL, "aG== has spare bits set");
  out = kw__b64_decode("aA==", 4, &n);
  CHECK(out != NULL && n == 1 && out[0] == 'h', "aA== is h");
  free(out);
  CHECK(kw__b64_decode("a===", 4, &n) == NULL, "three pads");
  char enc[16];
  kw__b64_encode((const unsigned char *)"hi!", 3, enc);
  CHECK_STR(enc, "aGkh");
  kw__b64_encode((const unsigned char *)"h", 1, enc);
  CHECK_STR(enc, "aA==");
}

/* A webhook signed here: v1,base64(HMAC-SHA256(key, id.ts.body)). */
static void sign_webhook(const char *key, const char *id, const char *ts, const char *body, char *out) {
  char content[1024];
  snprintf(content, sizeof content, "%s.%s.%s", id, ts, body);
  unsigned char mac[32];
  unsigned int mac_len = 0;
  HMAC(EVP_sha256(), key, (int)strlen(key), (const unsigned char *)content, strlen(content), mac, &mac_len);
  strcpy(out, "v1,");
  kw__b64_encode(mac, mac_len, out + 3);
}

static void test_webhooks(void) {
  const char *key = "a-secret-of-the-test";
  char secret[64] = "whsec_";
  kw__b64_encode((const unsigned char *)key, strlen(key), secret + 6);
  const char *secrets[] = {secret};
  const char *body = "{\"id\":\"evt_1\",\"type\":\"order.completed\",\"timestamp\":\"2027-01-15T08:00:00.000Z\"}";
  char sig[128];
  sign_webhook(key, "evt_1", "1800000000", body, sig);
  kw_webhook_event *event = NULL;
  kw_error err;
  CHECK(kw_verify_webhook_ms(secrets, 1, body, strlen(body), "evt_1", "1800000000", sig, NOW_MS, 0, &event, &err) == KW_OK,
        "%s", err.message);
  if (event != NULL) {
    CHECK_STR(event->id, "evt_1");
    CHECK_STR(event->type, "order.completed");
    CHECK_STR(event->timestamp, "2027-01-15T08:00:00.000Z");
    CHECK_STR(event->json, body);
  }
  kw_webhook_event_free(event);
  /* A secret without its whsec_ prefix is the same key. */
  const char *bare[] = {secret + 6};
  CHECK(kw_verify_webhook_ms(bare, 1, body, strlen(body), "evt_1", "1800000000", sig, NOW_MS, 0, NULL, &err) == KW_OK,
        "bare secret");
  /* Refusals by kind. */
  CHECK(kw_verify_webhook_ms(secrets, 1, body, strlen(body), NULL, "1800000000", sig, NOW_MS, 0, NULL, &err) ==
                KW_ERR_WEBHOOK_REFUSED &&
            strcmp(err.code, "missing-header") == 0,
        "missing id: %s", err.code);
  CHECK(kw_verify_webhook_ms(secrets, 1, body, strlen(body), "evt_1", "", sig, NOW_MS, 0, NULL, &err) ==
                KW_ERR_WEBHOOK_REFUSED &&
            strcmp(err.code, "missing-header") == 0,
        "empty timestamp: %s", err.code);
  CHECK(kw_verify_webhook_ms(secrets, 1, body, strlen(body), "evt_1", "18e8", sig, NOW_MS, 0, NULL, &err) ==
                KW_ERR_WEBHOOK_REFUSED &&
            strcmp(err.code, "timestamp") == 0,
        "not digits: %s", err.code);
  CHECK(kw_verify_webhook_ms(secrets, 1, body, strlen(body), "evt_1", "-1800000000", sig, NOW_MS, 0, NULL, &err) ==
            KW_ERR_WEBHOOK_REFUSED,
        "a sign is no digit");
  /* The tolerance's edges, either way. */
  char ts[32], s2[128];
  snprintf(ts, sizeof ts, "%lld", NOW_S - 300);
  sign_webhook(key, "evt_1", ts, body, s2);
  CHECK(kw_verify_webhook_ms(secrets, 1, body, strlen(body), "evt_1", ts, s2, NOW_MS, 0, NULL, &err) == KW_OK,
        "300 s old is within");
  snprintf(ts, sizeof ts, "%lld", NOW_S + 301);
  sign_webhook(key, "evt_1", ts, body, s2);
  CHECK(kw_verify_webhook_ms(secrets, 1, body, strlen(body), "evt_1", ts, s2, NOW_MS, 0, NULL, &err) ==
                KW_ERR_WEBHOOK_REFUSED &&
            strcmp(err.code, "timestamp") == 0,
        "301 s ahead is past");
  CHECK(kw_verify_webhook_ms(secrets, 1, body, strlen(body), "evt_1", ts, s2, NOW_MS, 400000, NULL, &err) == KW_OK,
        "a wider tolerance");
  /* A body with a NUL byte inside is bytes, signed as such. */
  const char raw[] = "{\"id\":\"evt_1\"}\0tail";
  char content[64];
  memcpy(content, "evt_1.1800000000.", 17);
  memcpy(content + 17, raw, sizeof raw - 1);
  unsigned char mac[32];
  unsigned int mac_len = 0;
  HMAC(EVP_sha256(), key, (int)strlen(key), (unsigned char *)content, 17 + sizeof raw - 1, mac, &mac_len);
  char s3[64] = "v1,";
  kw__b64_encode(mac, mac_len, s3 + 3);
  CHECK(kw_verify_webhook_ms(secrets, 1, raw, sizeof raw - 1, "evt_1", "1800000000", s3, NOW_MS, 0, NULL, &err) !=
            KW_ERR_WEBHOOK_REFUSED ||
            strcmp(err.code, "signature") != 0,
        "the whole body is signed");
  CHECK(kw_verify_webhook_ms(secrets, 1, raw, 14, "evt_1", "1800000000", s3, NOW_MS, 0, NULL, &err) ==
                KW_ERR_WEBHOOK_REFUSED &&
            strcmp(err.code, "signature") == 0,
        "a cut body is refused");
  /* Signed, but not an event. */
  sign_webhook(key, "evt_1", "1800000000", "not json", s2);
  CHECK(kw_verify_webhook_ms(secrets, 1, "not json", 8, "evt_1", "1800000000", s2, NOW_MS, 0, NULL, &err) ==
                KW_ERR_WEBHOOK_REFUSED &&
            strcmp(err.code, "malformed") == 0,
        "not an event: %s", err.code);
  /* A signature entry is compared whole: a prefix or a longer text is no match. */
  char prefix[128];
  snprintf(prefix, sizeof prefix, "%.*s", (int)strlen(sig) - 2, sig);
  CHECK(kw_verify_webhook_ms(secrets, 1, body, strlen(body), "evt_1", "1800000000", prefix, NOW_MS, 0, NULL, &err) ==
            KW_ERR_WEBHOOK_REFUSED,
        "prefix");
  snprintf(prefix, sizeof prefix, "%sAA", sig);
  CHECK(kw_verify_webhook_ms(secrets, 1, body, strlen(body), "evt_1", "1800000000", prefix, NOW_MS, 0, NULL, &err) ==
            KW_ERR_WEBHOOK_REFUSED,
        "longer");
  snprintf(prefix, sizeof prefix, "  v2,x   %s  ", sig);
  CHECK(kw_verify_webhook_ms(secrets, 1, body, strlen(body), "evt_1", "1800000000", prefix, NOW_MS, 0, NULL, &err) == KW_OK,
        "spaces around entries");
  /* Milliseconds: the tolerance's edge to the millisecond; a timestamp past int64's milliseconds. */
  snprintf(ts, sizeof ts, "%lld", NOW_S - 300);
  sign_webhook(key, "evt_1", ts, body, s2);
  CHECK(kw_verify_webhook_ms(secrets, 1, body, strlen(body), "evt_1", ts, s2, NOW_MS + 1, 0, NULL, &err) ==
                KW_ERR_WEBHOOK_REFUSED &&
            strcmp(err.code, "timestamp") == 0,
        "300.001 s old is past");
  sign_webhook(key, "evt_1", "999999999999999999", body, s2);
  CHECK(kw_verify_webhook_ms(secrets, 1, body, strlen(body), "evt_1", "999999999999999999", s2, NOW_MS, 0, NULL,
                             &err) == KW_ERR_WEBHOOK_REFUSED &&
            strcmp(err.code, "timestamp") == 0,
        "18 digits of seconds: %s", err.code);
  CHECK(kw_verify_webhook_ms(secrets, 1, body, strlen(body), "evt_1", "1800000000", sig, -1, 0, NULL, &err) ==
            KW_ERR_INVALID_ARGUMENT,
        "a clock before 1970");
  /* The deprecated seconds function answers as the milliseconds one. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
  CHECK(kw_verify_webhook(secrets, 1, body, strlen(body), "evt_1", "1800000000", sig, NOW_S, 0, NULL, &err) == KW_OK,
        "kw_verify_webhook, seconds: %s", err.message);
  snprintf(ts, sizeof ts, "%lld", NOW_S + 301);
  sign_webhook(key, "evt_1", ts, body, s2);
  CHECK(kw_verify_webhook(secrets, 1, body, strlen(body), "evt_1", ts, s2, NOW_S, 0, NULL, &err) ==
                KW_ERR_WEBHOOK_REFUSED &&
            strcmp(err.code, "timestamp") == 0,
        "kw_verify_webhook: 301 s ahead is past");
  CHECK(kw_verify_webhook(secrets, 1, body, strlen(body), "evt_1", ts, s2, NOW_S, 400, NULL, &err) == KW_OK,
        "kw_verify_webhook: a wider tolerance in seconds");
  CHECK(kw_verify_webhook(secrets, 1, body, strlen(body), "evt_1", "1800000000", sig, INT64_MAX, 0, NULL, &err) ==
                KW_ERR_WEBHOOK_REFUSED &&
            strcmp(err.code, "timestamp") == 0,
        "kw_verify_webhook: a clock past int64's milliseconds");
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
}

int main(void) {
  if (kw_global_init(NULL) != KW_OK) return 2;
  signing_key = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
  unsigned char pub[32];
  size_t pub_len = sizeof pub;
  EVP_PKEY_get_raw_public_key(signing_key, pub, &pub_len);
  char *x = b64url(pub, pub_len);
  char set[512];
  snprintf(set, sizeof set,
           "{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%s\",\"kid\":\"test-kid\",\"alg\":\"EdDSA\","
           "\"use\":\"sig\"}]}",
           x);
  free(x);
  kw_error err;
  if (kw_jwks_parse(set, strlen(set), &jwks, &err) != KW_OK) {
    fprintf(stderr, "test key set: %s\n", err.message);
    return 2;
  }

  test_base64();
  test_order_of_checks();
  test_json_exactly();
  test_header_checks();
  test_malformed_texts();
  test_claims_answered();
  test_remembered_signatures();
  relay_key = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
  pub_len = sizeof pub;
  EVP_PKEY_get_raw_public_key(relay_key, pub, &pub_len);
  relay_x = b64url(pub, pub_len);
  test_relay_leases();
  free(relay_x);
  EVP_PKEY_free(relay_key);
  test_jwks();
  test_webhooks();

  kw_jwks_free(jwks);
  EVP_PKEY_free(signing_key);
  kw_global_cleanup();
  printf("%d passed, %d failed\n", check_passed, check_failures);
  return check_failures == 0 ? 0 : 1;
}
