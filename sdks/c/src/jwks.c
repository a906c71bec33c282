/* The key set (JWKS) and offline lease verification. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>
#ifdef KEYWARD_HAVE_SODIUM
#  include <sodium.h>
#endif

#include "internal.h"

#define MAX_JWKS_BYTES (1u << 20)
#define MAX_TOKEN_BYTES (64u << 10)

/*
 * Ed25519 verification: libsodium's when the library was built with it (about twice as fast as
 * OpenSSL 3.0's here, which keeps kw_verify_lease under 100 µs), else OpenSSL's EVP. Both refuse a
 * non-canonical S; libsodium also refuses small-order points, which no Keyward key or signature is.
 */
typedef struct jwk {
  char *kid;
  unsigned char raw[32];
  EVP_PKEY *key;
} jwk;

/*
 * Signatures this key set has verified, remembered by a SHA-256 of (key, signed text, signature):
 * a program checks its one lease again and again (at each start, before each feature), and a
 * signature that verified once verifies again. A repeat costs a hash instead of an Ed25519
 * verification; every claim is still judged at every call. Only successes are kept.
 */
#define SEEN_SLOTS 16

struct kw_jwks {
  char *json;
  jwk *keys;
  size_t count;
  pthread_mutex_t seen_lock;
  unsigned char seen[SEEN_SLOTS][32];
  size_t seen_count, seen_next;
  bool remember;
};

void kw_jwks_free(kw_jwks *jwks) {
  if (jwks == NULL) return;
  for (size_t i = 0; i < jwks->count; i++) {
    free(jwks->keys[i].kid);
    EVP_PKEY_free(jwks->keys[i].key);
  }
  free(jwks->keys);
  free(jwks->json);
  pthread_mutex_destroy(&jwks->seen_lock);
  free(jwks);
}

kw_status kw_jwks_parse(const char *json, size_t len, kw_jwks **out, kw_error *err) {
  if (out != NULL) *out = NULL;
  if (json == NULL || out == NULL) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "json and out are required");
  cJSON *doc = cJSON_ParseWithLength(json, len);
  const cJSON *keys = cJSON_GetObjectItemCaseSensitive(doc, "keys");
  if (!cJSON_IsObject(doc) || !cJSON_IsArray(keys)) {
    cJSON_Delete(doc);
    return kw__fail(err, KW_ERR_JWKS, KW_REASON_JWKS_UNAVAILABLE, "not a JWKS: no \"keys\" array");
  }
  kw_jwks *set = calloc(1, sizeof *set);
  if (set != NULL) pthread_mutex_init(&set->seen_lock, NULL);
  size_t n = (size_t)cJSON_GetArraySize(keys);
  if (set == NULL || (set->json = malloc(len + 1)) == NULL ||
      (n > 0 && (set->keys = calloc(n, sizeof *set->keys)) == NULL)) {
    kw_jwks_free(set);
    cJSON_Delete(doc);
    return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  }
  memcpy(set->json, json, len);
  set->json[len] = '\0';
  set->remember = true;
  const cJSON *key;
  cJSON_ArrayForEach(key, keys) {
    const char *kty = kw__json_string(key, "kty");
    const char *crv = kw__json_string(key, "crv");
    const char *x = kw__json_string(key, "x");
    const char *kid = kw__json_string(key, "kid");
    const char *use = kw__json_string(key, "use");
    const char *alg = kw__json_string(key, "alg");
    /* Only Ed25519 signing keys with a kid can verify a lease: others are left out, not refused. */
    if (kty == NULL || strcmp(kty, "OKP") != 0 || crv == NULL || strcmp(crv, "Ed25519") != 0 || x == NULL ||
        kid == NULL || (use != NULL && strcmp(use, "sig") != 0) || (alg != NULL && strcmp(alg, "EdDSA") != 0))
      continue;
    size_t raw_len = 0;
    unsigned char *raw = kw__b64url_decode(x, strlen(x), &raw_len);
    EVP_PKEY *pkey = raw != NULL && raw_len == 32
                         ? EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, raw, raw_len)
                         : NULL;
    if (pkey == NULL) {
      free(raw);
      continue;
    }
    memcpy(set->keys[set->count].raw, raw, 32);
    free(raw);
    char *kid_copy = kw__strdup(kid);
    if (kid_copy == NULL) {
      EVP_PKEY_free(pkey);
      kw_jwks_free(set);
      cJSON_Delete(doc);
      return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
    }
    set->keys[set->count].kid = kid_copy;
    set->keys[set->count].key = pkey;
    set->count++;
  }
  cJSON_Delete(doc);
  *out = set;
  kw__clear(err);
  return KW_OK;
}

kw_status kw_jwks_load(const char *path, kw_jwks **out, kw_error *err) {
  if (out != NULL) *out = NULL;
  char *text = NULL;
  size_t len = 0;
  kw_status st = kw__read_file(path, MAX_JWKS_BYTES, &text, &len, err);
  if (st != KW_OK) return st;
  st = kw_jwks_parse(text, len, out, err);
  if (st == KW_ERR_JWKS && err != NULL) {
    char message[sizeof err->message];
    kw__copy_text(message, sizeof message, err->message);
    size_t n = strlen(path);
    if (n > 200) n = 200;
    snprintf(err->message, sizeof err->message, "%.*s: %.300s", (int)n, path, message);
  }
  free(text);
  return st;
}

kw_status kw_jwks_save(const kw_jwks *jwks, const char *path, kw_error *err) {
  if (jwks == NULL) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "jwks is required");
  return kw__write_file_atomic(path, jwks->json, strlen(jwks->json), 0644, err);
}

kw_status kw_jwks_fetch(kw_session *session, kw_jwks **out, kw_error *err) {
  if (out != NULL) *out = NULL;
  if (session == NULL || out == NULL) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "session and out are required");
  kw_error local;
  kw__clear(&local);
  char url[2048];
  snprintf(url, sizeof url, "%s/.well-known/jwks.json", session->base_url);
  const char *headers[] = {"Accept: application/json", NULL};
  kw__http_answer a;
  kw_status st = kw__http(session, "GET", url, headers, NULL, 0, 0u, &a, &local);
  if (st == KW_OK) {
    if (a.status != 200) {
      char code[16];
      snprintf(code, sizeof code, "%ld", a.status);
      st = kw__fail(&local, KW_ERR_PROTOCOL, code, "GET /.well-known/jwks.json answered HTTP %ld", a.status);
      local.http_status = a.status;
      kw__copy_text(local.request_id, sizeof local.request_id, a.request_id);
    } else {
      st = kw_jwks_parse(a.body, a.len, out, &local);
    }
    kw__answer_free(&a);
  }
  if (st != KW_OK) kw__session_record(session, &local);
  if (err != NULL) *err = st == KW_OK ? (kw_error){0} : local;
  return st;
}

const char *kw_jwks_json(const kw_jwks *jwks) { return jwks == NULL ? NULL : jwks->json; }
size_t kw_jwks_count(const kw_jwks *jwks) { return jwks == NULL ? 0 : jwks->count; }

/* ---- kw_verify_lease ---- */

typedef struct claims_box {
  kw_claims pub; /* first: kw_claims * and claims_box * are the same address */
  cJSON *payload;
  char *payload_json;
} claims_box;

void kw_claims_free(kw_claims *claims) {
  if (claims == NULL) return;
  claims_box *box = (claims_box *)claims;
  cJSON_Delete(box->payload);
  free(box->payload_json);
  free(box);
}

static kw_status refuse(kw_error *err, const char *reason, const char *why) {
  return kw__fail(err, KW_ERR_LEASE_REFUSED, reason, "lease refused (%s): %s", reason, why);
}

/* Whether these bytes are UTF-8 (RFC 3629: no overlong form, no surrogate, nothing past U+10FFFF). */
static bool is_utf8(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    size_t more;
    uint32_t cp;
    if (c < 0x80) {
      i++;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) {
      more = 1;
      cp = c & 0x1fu;
    } else if (c >= 0xe0 && c <= 0xef) {
      more = 2;
      cp = c & 0x0fu;
    } else if (c >= 0xf0 && c <= 0xf4) {
      more = 3;
      cp = c & 0x07u;
    } else {
      return false;
    }
    if (n - i <= more) return false;
    for (size_t k = 1; k <= more; k++) {
      if ((s[i + k] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3fu);
    }
    if ((more == 2 && cp < 0x800) || (more == 3 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    i += more + 1;
  }
  return true;
}

/*
 * JSON exactly (RFC 8259), which cJSON is not: it reads a number with strtod (01800604800, 1800604800.)
 * and takes raw control characters in a string. Each returns the position after what it read, or
 * NULL. Nesting deeper than cJSON's limit is refused as cJSON refuses it.
 */
static const char *json_space(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}

static bool is_digit(const char *p, const char *end) { return p < end && *p >= '0' && *p <= '9'; }

static const char *json_text(const char *p, const char *end) {
  if (p >= end || *p != '"') return NULL;
  for (p++; p < end; p++) {
    unsigned char c = (unsigned char)*p;
    if (c == '"') return p + 1;
    if (c < 0x20) return NULL;
    if (c != '\\') continue;
    if (++p >= end) return NULL;
    if (*p == 'u') {
      for (int k = 0; k < 4; k++)
        if (++p >= end || !isxdigit((unsigned char)*p)) return NULL;
    } else if (strchr("\"\\/bfnrt", *p) == NULL) {
      return NULL;
    }
  }
  return NULL;
}

static const char *json_number(const char *p, const char *end) {
  if (p < end && *p == '-') p++;
  if (p < end && *p == '0') p++;
  else if (is_digit(p, end)) while (is_digit(p, end)) p++;
  else return NULL;
  if (p < end && *p == '.') {
    if (!is_digit(++p, end)) return NULL;
    while (is_digit(p, end)) p++;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < end && (*p == '+' || *p == '-')) p++;
    if (!is_digit(p, end)) return NULL;
    while (is_digit(p, end)) p++;
  }
  return p;
}

static const char *json_word(const char *p, const char *end, const char *word) {
  size_t n = strlen(word);
  return (size_t)(end - p) >= n && memcmp(p, word, n) == 0 ? p + n : NULL;
}

static const char *json_value(const char *p, const char *end, int depth) {
  p = json_space(p, end);
  if (p >= end || depth >= CJSON_NESTING_LIMIT) return NULL;
  if (*p == '{' || *p == '[') {
    char close = *p == '{' ? '}' : ']';
    p = json_space(p + 1, end);
    if (p < end && *p == close) return p + 1;
    for (;;) {
      if (close == '}') {
        p = json_text(json_space(p, end), end);
        if (p == NULL || (p = json_space(p, end)) >= end || *p != ':') return NULL;
        p++;
      }
      if ((p = json_value(p, end, depth + 1)) == NULL || (p = json_space(p, end)) >= end) return NULL;
      if (*p == close) return p + 1;
      if (*p++ != ',') return NULL;
    }
  }
  if (*p == '"') return json_text(p, end);
  if (*p == 't') return json_word(p, end, "true");
  if (*p == 'f') return json_word(p, end, "false");
  if (*p == 'n') return json_word(p, end, "null");
  return json_number(p, end);
}

/* Whether these bytes are one JSON value and nothing else but whitespace. */
static bool is_json(const char *text, size_t n) {
  const char *after = json_value(text, text + n, 0);
  return after != NULL && json_space(after, text + n) == text + n;
}

/* Whether an object in this tree, at any depth, names a member twice (cJSON keeps both, and
   finds the first: another parser keeps the last, so one token would say two things). */
static bool names_a_member_twice(const cJSON *item) {
  for (const cJSON *child = item->child; child != NULL; child = child->next) {
    if (cJSON_IsObject(item)) {
      for (const cJSON *later = child->next; later != NULL; later = later->next)
        if (child->string != NULL && later->string != NULL && strcmp(child->string, later->string) == 0) return true;
    }
    if ((cJSON_IsObject(child) || cJSON_IsArray(child)) && names_a_member_twice(child)) return true;
  }
  return false;
}

/* A JSON object from one base64url part, and its text when text is not NULL (the caller frees it);
   NULL when either is malformed: UTF-8 JSON of one object, exactly (so no byte order mark, which
   cJSON would skip), no name given twice in any object. */
static cJSON *json_part(const char *part, size_t len, char **text) {
  size_t raw_len = 0;
  unsigned char *raw = kw__b64url_decode(part, len, &raw_len);
  if (raw == NULL) return NULL;
  /* JSON text and nothing after it: no NUL inside, and the parser must end at the one we add
     (the decoder leaves room for it). */
  if (memchr(raw, '\0', raw_len) != NULL || !is_utf8(raw, raw_len) || !is_json((const char *)raw, raw_len)) {
    free(raw);
    return NULL;
  }
  raw[raw_len] = '\0';
  cJSON *json = cJSON_ParseWithLengthOpts((const char *)raw, raw_len + 1, NULL, true);
  if (json != NULL && (!cJSON_IsObject(json) || names_a_member_twice(json))) {
    cJSON_Delete(json);
    json = NULL;
  }
  if (json != NULL && text != NULL) *text = (char *)raw;
  else free(raw);
  return json;
}

/* The latest time a lease may name: 9999-12-31T23:59:59Z. */
#define LAST_SECOND INT64_C(253402300799)

/* A time claim: a whole number of seconds from 1970 to the end of year 9999. */
static bool is_time(const cJSON *payload, const char *name) {
  int64_t t = kw__json_int(payload, name);
  return t != KW_UNSET && t >= 0 && t <= LAST_SECOND;
}

/* RFC 7515 §4.1.9: typ compares as a media type, without case, "application/" implied. */
static bool typ_matches(const char *typ) {
  static const char prefix[] = "application/";
  if (typ == NULL) return false;
  if (strncasecmp(typ, prefix, sizeof prefix - 1) == 0) typ += sizeof prefix - 1;
  return strcasecmp(typ, "keyward-lease+jwt") == 0;
}

static bool is_object(const cJSON *item) { return cJSON_IsObject(item); }

static bool is_text(const cJSON *object, const char *name) { return kw__json_string(object, name) != NULL; }

/* The audience asked for: aud must be that very string (as packages/client compares it). */
static bool audience_holds(const cJSON *aud, const char *audience) {
  return cJSON_IsString(aud) && strcmp(aud->valuestring, audience) == 0;
}

/* The lease's shape (packages/client's asLeaseClaims): holder, texts, product, limits, expBound. */
static bool has_lease_shape(const cJSON *p) {
  const cJSON *holder = cJSON_GetObjectItemCaseSensitive(p, "holder");
  const char *kind = kw__json_string(holder, "kind");
  bool holder_ok = is_object(holder) && kind != NULL &&
                   ((strcmp(kind, "member") == 0 && is_text(holder, "memberGlobalId") &&
                     is_text(holder, "enterpriseGlobalId")) ||
                    (strcmp(kind, "lock") == 0 && is_text(holder, "assetNum")));
  if (!holder_ok) return false;
  if (!is_text(p, "sub") || !is_text(p, "jti") || !is_text(p, "aud") || !is_text(p, "fingerprint") ||
      !is_text(p, "assetNum"))
    return false;
  const cJSON *limits = cJSON_GetObjectItemCaseSensitive(p, "limits");
  if (!is_object(cJSON_GetObjectItemCaseSensitive(p, "product")) || !is_object(limits)) return false;
  const cJSON *end = cJSON_GetObjectItemCaseSensitive(limits, "endDate");
  if (!cJSON_IsNull(end) && !(cJSON_IsNumber(end) && kw__json_int(limits, "endDate") != KW_UNSET)) return false;
  const cJSON *bound = cJSON_GetObjectItemCaseSensitive(p, "expBound");
  if (bound != NULL) {
    if (!cJSON_IsString(bound)) return false;
    const char *b = bound->valuestring;
    if (strcmp(b, "offline-days") != 0 && strcmp(b, "license-end") != 0 && strcmp(b, "time-duration") != 0)
      return false;
  }
  return true;
}

static const jwk *key_of(const kw_jwks *jwks, const char *kid) {
  for (size_t i = 0; i < jwks->count; i++) {
    if (strcmp(jwks->keys[i].kid, kid) == 0) return &jwks->keys[i];
  }
  return NULL;
}

/* The digest a verified signature is remembered by: which key, what it signed, the signature. */
static void seen_digest(const kw_jwks *jwks, const jwk *key, const char *signed_part, size_t signed_len,
                        const unsigned char *sig, size_t sig_len, unsigned char out[32]) {
  size_t index = (size_t)(key - jwks->keys);
  unsigned char tag[sizeof index];
  memcpy(tag, &index, sizeof index);
#ifdef KEYWARD_HAVE_SODIUM
  crypto_hash_sha256_state st;
  crypto_hash_sha256_init(&st);
  crypto_hash_sha256_update(&st, tag, sizeof tag);
  crypto_hash_sha256_update(&st, sig, sig_len);
  crypto_hash_sha256_update(&st, (const unsigned char *)signed_part, signed_len);
  crypto_hash_sha256_final(&st, out);
#else
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  unsigned int n = 0;
  if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1 || EVP_DigestUpdate(ctx, tag, sizeof tag) != 1 ||
      EVP_DigestUpdate(ctx, sig, sig_len) != 1 || EVP_DigestUpdate(ctx, signed_part, signed_len) != 1 ||
      EVP_DigestFinal_ex(ctx, out, &n) != 1)
    memset(out, 0, 32); /* all zero is never looked up: see seen_before */
  EVP_MD_CTX_free(ctx);
#endif
}

static const unsigned char ZERO[32];

static bool seen_before(kw_jwks *jwks, const unsigned char digest[32]) {
  if (memcmp(digest, ZERO, 32) == 0) return false;
  bool found = false;
  pthread_mutex_lock(&jwks->seen_lock);
  for (size_t i = 0; i < jwks->seen_count && !found; i++) found = memcmp(jwks->seen[i], digest, 32) == 0;
  pthread_mutex_unlock(&jwks->seen_lock);
  return found;
}

static void remember(kw_jwks *jwks, const unsigned char digest[32]) {
  if (memcmp(digest, ZERO, 32) == 0) return;
  pthread_mutex_lock(&jwks->seen_lock);
  memcpy(jwks->seen[jwks->seen_next], digest, 32);
  jwks->seen_next = (jwks->seen_next + 1) % SEEN_SLOTS;
  if (jwks->seen_count < SEEN_SLOTS) jwks->seen_count++;
  pthread_mutex_unlock(&jwks->seen_lock);
}

void kw__jwks_remember(kw_jwks *jwks, bool on) {
  pthread_mutex_lock(&jwks->seen_lock);
  jwks->remember = on;
  jwks->seen_count = 0;
  jwks->seen_next = 0;
  pthread_mutex_unlock(&jwks->seen_lock);
}

static bool signature_holds(const jwk *key, const char *signed_part, size_t signed_len, const unsigned char *sig,
                            size_t sig_len) {
  if (sig_len != 64) return false;
#ifdef KEYWARD_HAVE_SODIUM
  return crypto_sign_verify_detached(sig, (const unsigned char *)signed_part, signed_len, key->raw) == 0;
#else
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  if (ctx == NULL) return false;
  bool ok = EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key->key) == 1 &&
            EVP_DigestVerify(ctx, sig, sig_len, (const unsigned char *)signed_part, signed_len) == 1;
  EVP_MD_CTX_free(ctx);
  return ok;
#endif
}

int kw__jwks_verify_prefixed(const kw_jwks *jwks, const unsigned char prefix[4], const unsigned char *msg, size_t len,
                             const unsigned char sig[64]) {
  for (size_t i = 0; i < jwks->count; i++) {
    /* Eight base64url characters are six whole bytes: the first four are the prefix. */
    const char *kid = jwks->keys[i].kid;
    if (strlen(kid) < 8) continue;
    size_t n = 0;
    unsigned char *head = kw__b64url_decode(kid, 8, &n);
    bool match = head != NULL && n == 6 && memcmp(head, prefix, 4) == 0;
    free(head);
    if (match) return signature_holds(&jwks->keys[i], (const char *)msg, len, sig, 64) ? 2 : 1;
  }
  return 0;
}

/* The claims, owning payload and its text. */
static claims_box *claims_of(cJSON *payload, char *text, kw_error *err) {
  claims_box *box = calloc(1, sizeof *box);
  if (box == NULL) {
    kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
    return NULL;
  }
  box->payload = payload;
  box->payload_json = text;
  kw_claims *c = &box->pub;
  const cJSON *holder = cJSON_GetObjectItemCaseSensitive(payload, "holder");
  const cJSON *product = cJSON_GetObjectItemCaseSensitive(payload, "product");
  const cJSON *limits = cJSON_GetObjectItemCaseSensitive(payload, "limits");
  c->iss = kw__json_string(payload, "iss");
  c->sub = kw__json_string(payload, "sub");
  c->jti = kw__json_string(payload, "jti");
  c->aud = kw__json_string(payload, "aud");
  c->iat_s = kw__json_int(payload, "iat");
  c->nbf_s = kw__json_int(payload, "nbf");
  c->exp_s = kw__json_int(payload, "exp");
  c->holder_kind = kw__json_string(holder, "kind");
  c->holder_asset_num = kw__json_string(holder, "assetNum");
  c->member_global_id = kw__json_string(holder, "memberGlobalId");
  c->enterprise_global_id = kw__json_string(holder, "enterpriseGlobalId");
  c->fingerprint = kw__json_string(payload, "fingerprint");
  c->asset_num = kw__json_string(payload, "assetNum");
  c->product.crm_product_id = kw__json_string(product, "crmProductId");
  c->product.product_uri = kw__json_string(product, "productUri");
  c->product.product_name = kw__json_string(product, "productName");
  c->limits.concurrent = kw__json_int(limits, "concurrent");
  c->limits.time_duration_seconds = kw__json_int(limits, "timeDurationSeconds");
  c->limits.amount = kw__json_int(limits, "amount");
  c->limits.start_date_ms = kw__json_int(limits, "startDate");
  c->limits.end_date_ms = kw__json_int(limits, "endDate");
  c->exp_bound = kw__json_string(payload, "expBound");
  c->payload_json = text;
  return box;
}

/*
 * The checks in sdks/conformance/README.md's order; the first that fails answers:
 *   malformed  (three base64url parts, exactly; header and payload UTF-8 JSON objects naming each
 *               member once; no crit)
 *   signature  (alg other than EdDSA)
 *   unknown-key (no key with the header's kid)
 *   signature  (Ed25519 over "header.payload")
 *   malformed  (typ, iss, sub/jti/aud/iat/nbf/exp present; sub/jti/aud strings; the times whole
 *               seconds from 0 to 253402300799)
 *   not-yet-valid, expired, audience
 *   malformed  (the lease's shape), fingerprint, license-ended
 */
kw_status kw_verify_lease(const kw_jwks *jwks, const char *token, const char *fingerprint, const char *audience,
                          int64_t now_ms, kw_claims **out, kw_error *err) {
  if (out != NULL) *out = NULL;
  if (jwks == NULL || token == NULL || fingerprint == NULL)
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "jwks, token and fingerprint are required");
  if (now_ms == 0) now_ms = kw__realtime_ms();
  /* Seconds as jose takes them: the floor of the millisecond clock. */
  int64_t now_s = now_ms >= 0 ? now_ms / 1000 : -((-now_ms + 999) / 1000);

  size_t len = strnlen(token, MAX_TOKEN_BYTES + 1);
  if (len > MAX_TOKEN_BYTES) return refuse(err, KW_REASON_MALFORMED, "longer than any lease");
  const char *dot1 = memchr(token, '.', len);
  const char *dot2 = dot1 == NULL ? NULL : memchr(dot1 + 1, '.', len - (size_t)(dot1 + 1 - token));
  if (dot1 == NULL || dot2 == NULL || memchr(dot2 + 1, '.', len - (size_t)(dot2 + 1 - token)) != NULL)
    return refuse(err, KW_REASON_MALFORMED, "not three base64url parts");
  size_t header_len = (size_t)(dot1 - token);
  size_t payload_len = (size_t)(dot2 - dot1 - 1);
  size_t sig_text_len = len - (size_t)(dot2 + 1 - token);

  size_t sig_len = 0;
  unsigned char *sig = kw__b64url_decode(dot2 + 1, sig_text_len, &sig_len);
  if (sig == NULL) return refuse(err, KW_REASON_MALFORMED, "the signature is not base64url");
  char *payload_text = NULL;
  cJSON *header = json_part(token, header_len, NULL);
  cJSON *payload = header == NULL ? NULL : json_part(dot1 + 1, payload_len, &payload_text);
  kw_status st = KW_OK;
  if (header == NULL || payload == NULL) {
    st = refuse(err, KW_REASON_MALFORMED, "the header or the payload is not a base64url JSON object");
    goto done;
  }
  /* A lease uses no extension (RFC 7515 §4.1.11). */
  if (cJSON_GetObjectItemCaseSensitive(header, "crit") != NULL) {
    st = refuse(err, KW_REASON_MALFORMED, "the header has crit parameters");
    goto done;
  }

  const char *alg = kw__json_string(header, "alg");
  if (alg == NULL || strcmp(alg, "EdDSA") != 0) {
    st = refuse(err, KW_REASON_SIGNATURE, "not signed with EdDSA");
    goto done;
  }
  const char *kid = kw__json_string(header, "kid");
  const jwk *key = kid == NULL ? NULL : key_of(jwks, kid);
  if (key == NULL) {
    st = refuse(err, KW_REASON_UNKNOWN_KEY, "no key of the key set has its kid (fetch the JWKS again when online)");
    goto done;
  }
  {
    kw_jwks *set = (kw_jwks *)jwks; /* its memory of verified signatures has a lock of its own */
    size_t signed_len = header_len + 1 + payload_len;
    unsigned char digest[32];
    pthread_mutex_lock(&set->seen_lock);
    bool use_memory = set->remember;
    pthread_mutex_unlock(&set->seen_lock);
    if (use_memory) seen_digest(set, key, token, signed_len, sig, sig_len, digest);
    if (!use_memory || !seen_before(set, digest)) {
      if (!signature_holds(key, token, signed_len, sig, sig_len)) {
        st = refuse(err, KW_REASON_SIGNATURE, "the signature does not verify");
        goto done;
      }
      if (use_memory) remember(set, digest);
    }
  }
  /* Signed by a Keyward key from here on. */
  if (!typ_matches(kw__json_string(header, "typ"))) {
    st = refuse(err, KW_REASON_MALFORMED, "the header's typ is not keyward-lease+jwt");
    goto done;
  }
  static const char *const required[] = {"sub", "jti", "aud", "iat", "nbf", "exp"};
  for (size_t i = 0; i < sizeof required / sizeof *required; i++) {
    if (cJSON_GetObjectItemCaseSensitive(payload, required[i]) == NULL) {
      char why[64];
      snprintf(why, sizeof why, "the %s claim is missing", required[i]);
      st = refuse(err, KW_REASON_MALFORMED, why);
      goto done;
    }
  }
  const char *iss = kw__json_string(payload, "iss");
  if (iss == NULL || strcmp(iss, "keyward") != 0) {
    st = refuse(err, KW_REASON_MALFORMED, "the issuer is not keyward");
    goto done;
  }
  if (!is_text(payload, "sub") || !is_text(payload, "jti") || !is_text(payload, "aud")) {
    st = refuse(err, KW_REASON_MALFORMED, "sub, jti and aud must be strings");
    goto done;
  }
  if (!is_time(payload, "iat") || !is_time(payload, "nbf") || !is_time(payload, "exp")) {
    st = refuse(err, KW_REASON_MALFORMED, "iat, nbf and exp must be whole seconds from 0 to 253402300799");
    goto done;
  }
  if (kw__json_int(payload, "nbf") > now_s) {
    st = refuse(err, KW_REASON_NOT_YET_VALID, "its nbf is later than now");
    goto done;
  }
  if (kw__json_int(payload, "exp") <= now_s) {
    st = refuse(err, KW_REASON_EXPIRED, "its exp is past");
    goto done;
  }
  if (audience != NULL && !audience_holds(cJSON_GetObjectItemCaseSensitive(payload, "aud"), audience)) {
    st = refuse(err, KW_REASON_AUDIENCE, "it was checked out by another application");
    goto done;
  }
  if (!has_lease_shape(payload)) {
    st = refuse(err, KW_REASON_MALFORMED, "its claims are not an offline lease");
    goto done;
  }
  if (strcmp(kw__json_string(payload, "fingerprint"), fingerprint) != 0) {
    st = refuse(err, KW_REASON_FINGERPRINT, "it was checked out for another machine");
    goto done;
  }
  int64_t end = kw__json_int(cJSON_GetObjectItemCaseSensitive(payload, "limits"), "endDate");
  if (end != KW_UNSET && now_ms > end) {
    st = refuse(err, KW_REASON_LICENSE_ENDED, "the license it came from has ended");
    goto done;
  }
  if (out != NULL) {
    claims_box *box = claims_of(payload, payload_text, err);
    if (box == NULL) {
      st = KW_ERR_NO_MEMORY;
      goto done;
    }
    payload = NULL; /* the claims own them */
    payload_text = NULL;
    *out = &box->pub;
  }
  kw__clear(err);

done:
  free(payload_text);
  free(sig);
  cJSON_Delete(header);
  cJSON_Delete(payload);
  return st;
}
