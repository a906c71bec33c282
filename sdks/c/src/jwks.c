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
  cJSON *grant; /* a relay's lease: its grant's payload, which relay_id points into */
} claims_box;

void kw_claims_free(kw_claims *claims) {
  if (claims == NULL) return;
  claims_box *box = (claims_box *)claims;
  cJSON_Delete(box->payload);
  free(box->payload_json);
  cJSON_Delete(box->grant);
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
static bool typ_matches(const char *typ, const char *expected) {
  static const char prefix[] = "application/";
  if (typ == NULL) return false;
  if (strncasecmp(typ, prefix, sizeof prefix - 1) == 0) typ += sizeof prefix - 1;
  return strcasecmp(typ, expected) == 0;
}

static bool is_object(const cJSON *item) { return cJSON_IsObject(item); }

static bool is_text(const cJSON *object, const char *name) { return kw__json_string(object, name) != NULL; }

/* The string member is exactly want. */
static bool text_is(const cJSON *object, const char *name, const char *want) {
  const char *text = kw__json_string(object, name);
  return text != NULL && strcmp(text, want) == 0;
}

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

/* An Ed25519 public key as a JWK's x: exactly the unpadded base64url of 32 bytes, into raw. */
static bool ed25519_x(const char *x, unsigned char raw[32]) {
  if (x == NULL || strlen(x) != 43) return false;
  size_t n = 0;
  unsigned char *bytes = kw__b64url_decode(x, 43, &n);
  bool ok = bytes != NULL && n == 32;
  if (ok) memcpy(raw, bytes, 32);
  free(bytes);
  return ok;
}

/*
 * A pool grant's shape (packages/client's asGrantClaims): iss keyward, sub and jti strings, the
 * times, relay.key an Ed25519 JWK with a kid (its key into relay_raw), relay.fingerprint, licenses
 * (a non-empty array of {assetNum, crmProductId string or null, seats 1 to 1e9}), machines absent,
 * null or an array of strings. overage is the relay's to apply, and not read.
 */
static bool has_grant_shape(const cJSON *p, unsigned char relay_raw[32]) {
  if (!text_is(p, "iss", "keyward") || !is_text(p, "sub") || !is_text(p, "jti") || !is_time(p, "iat") ||
      !is_time(p, "nbf") || !is_time(p, "exp"))
    return false;
  const cJSON *relay = cJSON_GetObjectItemCaseSensitive(p, "relay");
  const cJSON *key = cJSON_GetObjectItemCaseSensitive(relay, "key");
  if (!is_object(relay) || !is_object(key) || !text_is(key, "kty", "OKP") || !text_is(key, "crv", "Ed25519") ||
      !is_text(key, "kid") || !ed25519_x(kw__json_string(key, "x"), relay_raw) || !is_text(relay, "fingerprint"))
    return false;
  const cJSON *licenses = cJSON_GetObjectItemCaseSensitive(p, "licenses");
  if (!cJSON_IsArray(licenses) || licenses->child == NULL) return false;
  const cJSON *license;
  cJSON_ArrayForEach(license, licenses) {
    const cJSON *product = cJSON_GetObjectItemCaseSensitive(license, "crmProductId");
    int64_t seats = kw__json_int(license, "seats");
    if (!is_object(license) || !is_text(license, "assetNum") || !(cJSON_IsNull(product) || cJSON_IsString(product)) ||
        seats == KW_UNSET || seats < 1 || seats > 1000000000)
      return false;
  }
  const cJSON *machines = cJSON_GetObjectItemCaseSensitive(p, "machines");
  if (machines == NULL || cJSON_IsNull(machines)) return true;
  if (!cJSON_IsArray(machines)) return false;
  const cJSON *machine;
  cJSON_ArrayForEach(machine, machines) {
    if (!cJSON_IsString(machine)) return false;
  }
  return true;
}

/*
 * Why a relay's lease (of the lease's shape) says more than its grant (of the grant's shape) lets
 * the relay give, or NULL when it does not: its exp past the grant's; no license of the grant for
 * its assetNum and product.crmProductId (null matches null, the first such license counts); its
 * limits.concurrent not a whole number within that license's seats (null is no limit); a machine
 * not on the grant's list, when it has one.
 */
static const char *beyond_grant(const cJSON *lease, const cJSON *grant) {
  if (kw__json_int(lease, "exp") > kw__json_int(grant, "exp")) return "it runs past its grant";
  const char *asset_num = kw__json_string(lease, "assetNum");
  const cJSON *product = cJSON_GetObjectItemCaseSensitive(lease, "product");
  const cJSON *product_id = cJSON_GetObjectItemCaseSensitive(product, "crmProductId");
  const cJSON *licenses = cJSON_GetObjectItemCaseSensitive(grant, "licenses");
  const cJSON *license = NULL, *l;
  cJSON_ArrayForEach(l, licenses) {
    const cJSON *granted = cJSON_GetObjectItemCaseSensitive(l, "crmProductId");
    bool same_product = cJSON_IsNull(granted) ? cJSON_IsNull(product_id)
                                              : cJSON_IsString(product_id) &&
                                                    strcmp(granted->valuestring, product_id->valuestring) == 0;
    if (same_product && strcmp(kw__json_string(l, "assetNum"), asset_num) == 0) {
      license = l;
      break;
    }
  }
  if (license == NULL) return "its license and product are not in its grant";
  int64_t seats = kw__json_int(cJSON_GetObjectItemCaseSensitive(lease, "limits"), "concurrent");
  if (seats == KW_UNSET || seats > kw__json_int(license, "seats")) return "it names more seats than its grant gives";
  const cJSON *machines = cJSON_GetObjectItemCaseSensitive(grant, "machines");
  if (cJSON_IsArray(machines)) {
    const char *fingerprint = kw__json_string(lease, "fingerprint");
    const cJSON *machine;
    cJSON_ArrayForEach(machine, machines) {
      if (strcmp(machine->valuestring, fingerprint) == 0) return NULL;
    }
    return "its machine is not on its grant's list";
  }
  return NULL;
}

static const jwk *key_of(const kw_jwks *jwks, const char *kid) {
  for (size_t i = 0; i < jwks->count; i++) {
    if (strcmp(jwks->keys[i].kid, kid) == 0) return &jwks->keys[i];
  }
  return NULL;
}

/*
 * The digest a verified signature is remembered by: which key (its 32 bytes: a key of the set, or
 * the relay key a grant certifies), the signature (64 bytes), what it signed. The first two have
 * fixed lengths, so no other key, signature and text run together into the same bytes.
 */
static void seen_digest(const jwk *key, const char *signed_part, size_t signed_len, const unsigned char sig[64],
                        unsigned char out[32]) {
#ifdef KEYWARD_HAVE_SODIUM
  crypto_hash_sha256_state st;
  crypto_hash_sha256_init(&st);
  crypto_hash_sha256_update(&st, key->raw, 32);
  crypto_hash_sha256_update(&st, sig, 64);
  crypto_hash_sha256_update(&st, (const unsigned char *)signed_part, signed_len);
  crypto_hash_sha256_final(&st, out);
#else
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  unsigned int n = 0;
  if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1 || EVP_DigestUpdate(ctx, key->raw, 32) != 1 ||
      EVP_DigestUpdate(ctx, sig, 64) != 1 || EVP_DigestUpdate(ctx, signed_part, signed_len) != 1 ||
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

/*
 * A compact JWS as read before any key is tried: a lease, or the pool grant a relay's lease carries
 * in its header. text is the caller's (the token, or the grant's string in the lease's header).
 */
typedef struct jws {
  const char *text;
  size_t signed_len; /* of "header.payload", what the signature covers */
  cJSON *header;
  cJSON *payload;
  char *payload_text; /* the payload's JSON text, when asked for */
  unsigned char *sig;
  size_t sig_len;
} jws;

static void jws_free(jws *j) {
  cJSON_Delete(j->header);
  cJSON_Delete(j->payload);
  free(j->payload_text);
  free(j->sig);
  memset(j, 0, sizeof *j);
}

/*
 * Reads text (len bytes, no NUL among them) into j: NULL when it is a compact JWS by the suite's
 * rules of the form and the JSON (three parts, each exactly base64url; header and payload UTF-8
 * JSON objects naming each member once; no crit in the header: neither a lease nor a grant uses an
 * extension, RFC 7515 §4.1.11), else why not, j left empty. keep_text: j->payload_text receives the
 * payload's JSON text.
 */
static const char *jws_read(const char *text, size_t len, bool keep_text, jws *j) {
  memset(j, 0, sizeof *j);
  const char *dot1 = memchr(text, '.', len);
  const char *dot2 = dot1 == NULL ? NULL : memchr(dot1 + 1, '.', len - (size_t)(dot1 + 1 - text));
  if (dot1 == NULL || dot2 == NULL || memchr(dot2 + 1, '.', len - (size_t)(dot2 + 1 - text)) != NULL)
    return "not three base64url parts";
  size_t header_len = (size_t)(dot1 - text);
  size_t payload_len = (size_t)(dot2 - dot1 - 1);
  j->sig = kw__b64url_decode(dot2 + 1, len - (size_t)(dot2 + 1 - text), &j->sig_len);
  if (j->sig == NULL) return "the signature is not base64url";
  j->header = json_part(text, header_len, NULL);
  j->payload = j->header == NULL ? NULL : json_part(dot1 + 1, payload_len, keep_text ? &j->payload_text : NULL);
  if (j->header == NULL || j->payload == NULL) {
    jws_free(j);
    return "the header or the payload is not a base64url JSON object";
  }
  if (cJSON_GetObjectItemCaseSensitive(j->header, "crit") != NULL) {
    jws_free(j);
    return "the header has crit parameters";
  }
  j->text = text;
  j->signed_len = header_len + 1 + payload_len;
  return NULL;
}

/* Whether key signed j: Ed25519 over its "header.payload", or a signature the set remembers. */
static bool jws_signed_by(kw_jwks *set, const jwk *key, const jws *j) {
  if (j->sig_len != 64) return false;
  pthread_mutex_lock(&set->seen_lock); /* the set's memory has a lock of its own */
  bool use_memory = set->remember;
  pthread_mutex_unlock(&set->seen_lock);
  unsigned char digest[32];
  if (use_memory) {
    seen_digest(key, j->text, j->signed_len, j->sig, digest);
    if (seen_before(set, digest)) return true;
  }
  if (!signature_holds(key, j->text, j->signed_len, j->sig, j->sig_len)) return false;
  if (use_memory) remember(set, digest);
  return true;
}

/* The pool grant a relay's lease carries, verified: the relay key it certifies, and its claims. */
typedef struct grant {
  jws jws;
  const char *relay_kid; /* in jws.payload */
  jwk relay;             /* kid unused; key only without libsodium */
} grant;

static void grant_free(grant *g) {
  jws_free(&g->jws);
  EVP_PKEY_free(g->relay.key);
  memset(g, 0, sizeof *g);
}

/*
 * The grant of a relay's lease (item: the header's grant), checked as a lease is up to its times,
 * in the suite's steps 2 to 5: its form (malformed); alg EdDSA (signature); a key of the set by its
 * kid (unknown-key); the signature (signature); typ keyward-grant+jwt and the grant's shape
 * (malformed); nbf (not-yet-valid); exp (grant-expired). On KW_OK g holds the relay key it
 * certifies; whatever the answer, the caller frees g with grant_free.
 */
static kw_status verify_grant(kw_jwks *set, const cJSON *item, int64_t now_s, grant *g, kw_error *err) {
  if (!cJSON_IsString(item)) return refuse(err, KW_REASON_MALFORMED, "its grant is not a string");
  /* Within the lease's header, so within MAX_TOKEN_BYTES. */
  const char *why = jws_read(item->valuestring, strlen(item->valuestring), false, &g->jws);
  if (why != NULL) {
    char text[128];
    snprintf(text, sizeof text, "its grant: %s", why);
    return refuse(err, KW_REASON_MALFORMED, text);
  }
  const cJSON *header = g->jws.header, *claims = g->jws.payload;
  if (!text_is(header, "alg", "EdDSA")) return refuse(err, KW_REASON_SIGNATURE, "its grant is not signed with EdDSA");
  const char *kid = kw__json_string(header, "kid");
  const jwk *vendor = kid == NULL ? NULL : key_of(set, kid);
  if (vendor == NULL)
    return refuse(err, KW_REASON_UNKNOWN_KEY,
                  "no key of the key set has its grant's kid (fetch the JWKS again when online)");
  if (!jws_signed_by(set, vendor, &g->jws))
    return refuse(err, KW_REASON_SIGNATURE, "its grant's signature does not verify");
  /* Signed by a Keyward key from here on. */
  if (!typ_matches(kw__json_string(header, "typ"), "keyward-grant+jwt"))
    return refuse(err, KW_REASON_MALFORMED, "its grant's typ is not keyward-grant+jwt");
  if (!has_grant_shape(claims, g->relay.raw))
    return refuse(err, KW_REASON_MALFORMED, "its grant's claims are not a pool grant");
  if (kw__json_int(claims, "nbf") > now_s) return refuse(err, KW_REASON_NOT_YET_VALID, "its grant's nbf is later than now");
  if (kw__json_int(claims, "exp") <= now_s) return refuse(err, KW_REASON_GRANT_EXPIRED, "its grant's exp is past");
  const cJSON *relay_key = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(claims, "relay"), "key");
  g->relay_kid = kw__json_string(relay_key, "kid");
#ifndef KEYWARD_HAVE_SODIUM
  g->relay.key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, g->relay.raw, 32);
  if (g->relay.key == NULL) return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
#endif
  return KW_OK;
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
 *   a relay's lease (its header has grant), verify_grant: malformed, signature, unknown-key,
 *               signature, malformed, not-yet-valid, grant-expired (the grant's own checks)
 *   unknown-key (no key with the header's kid; for a relay's lease, a kid other than the relay
 *               key's its grant certifies)
 *   signature  (Ed25519 over "header.payload", with that key)
 *   malformed  (typ, iss, sub/jti/aud/iat/nbf/exp present; sub/jti/aud strings; the times whole
 *               seconds from 0 to 253402300799)
 *   not-yet-valid, expired, audience
 *   malformed  (the lease's shape)
 *   beyond-grant (a relay's lease saying more than its grant gives)
 *   fingerprint, license-ended
 */
kw_status kw_verify_lease(const kw_jwks *jwks, const char *token, const char *fingerprint, const char *audience,
                          int64_t now_ms, kw_claims **out, kw_error *err) {
  if (out != NULL) *out = NULL;
  if (jwks == NULL || token == NULL || fingerprint == NULL)
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "jwks, token and fingerprint are required");
  if (now_ms == 0) now_ms = kw__realtime_ms();
  /* Seconds as jose takes them: the floor of the millisecond clock. */
  int64_t now_s = now_ms >= 0 ? now_ms / 1000 : -((-now_ms + 999) / 1000);
  kw_jwks *set = (kw_jwks *)jwks; /* its memory of verified signatures has a lock of its own */

  size_t len = strnlen(token, MAX_TOKEN_BYTES + 1);
  if (len > MAX_TOKEN_BYTES) return refuse(err, KW_REASON_MALFORMED, "longer than any lease");
  jws lease;
  const char *why = jws_read(token, len, true, &lease);
  if (why != NULL) return refuse(err, KW_REASON_MALFORMED, why);
  grant g;
  memset(&g, 0, sizeof g);
  const cJSON *header = lease.header, *payload = lease.payload;
  kw_status st = KW_OK;

  if (!text_is(header, "alg", "EdDSA")) {
    st = refuse(err, KW_REASON_SIGNATURE, "not signed with EdDSA");
    goto done;
  }
  /* A relay's lease: its grant is checked first, and certifies the one key that may have signed it. */
  const cJSON *grant_item = cJSON_GetObjectItemCaseSensitive(header, "grant");
  bool relayed = grant_item != NULL;
  if (relayed && (st = verify_grant(set, grant_item, now_s, &g, err)) != KW_OK) goto done;
  const char *kid = kw__json_string(header, "kid");
  const jwk *key;
  if (relayed) {
    key = kid != NULL && strcmp(kid, g.relay_kid) == 0 ? &g.relay : NULL;
    why = "it is not signed by the relay key its grant certifies";
  } else {
    key = kid == NULL ? NULL : key_of(jwks, kid);
    why = "no key of the key set has its kid (fetch the JWKS again when online)";
  }
  if (key == NULL) {
    st = refuse(err, KW_REASON_UNKNOWN_KEY, why);
    goto done;
  }
  if (!jws_signed_by(set, key, &lease)) {
    st = refuse(err, KW_REASON_SIGNATURE, "the signature does not verify");
    goto done;
  }
  /* Signed by a Keyward key, or by a relay's key a Keyward key certifies, from here on. */
  if (!typ_matches(kw__json_string(header, "typ"), "keyward-lease+jwt")) {
    st = refuse(err, KW_REASON_MALFORMED, "the header's typ is not keyward-lease+jwt");
    goto done;
  }
  static const char *const required[] = {"sub", "jti", "aud", "iat", "nbf", "exp"};
  for (size_t i = 0; i < sizeof required / sizeof *required; i++) {
    if (cJSON_GetObjectItemCaseSensitive(payload, required[i]) == NULL) {
      char missing[64];
      snprintf(missing, sizeof missing, "the %s claim is missing", required[i]);
      st = refuse(err, KW_REASON_MALFORMED, missing);
      goto done;
    }
  }
  if (!text_is(payload, "iss", "keyward")) {
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
  if (relayed && (why = beyond_grant(payload, g.jws.payload)) != NULL) {
    st = refuse(err, KW_REASON_BEYOND_GRANT, why);
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
    claims_box *box = claims_of(lease.payload, lease.payload_text, err);
    if (box == NULL) {
      st = KW_ERR_NO_MEMORY;
      goto done;
    }
    lease.payload = NULL; /* the claims own them */
    lease.payload_text = NULL;
    if (relayed) {
      box->grant = g.jws.payload;
      g.jws.payload = NULL;
      box->pub.relay_id = kw__json_string(box->grant, "sub");
    }
    *out = &box->pub;
  }
  kw__clear(err);

done:
  jws_free(&lease);
  grant_free(&g);
  return st;
}
