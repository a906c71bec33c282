/*
 * Offline activation:
 *
 *   test_activation CONFORMANCE_DIR
 *
 * First every case of sdks/conformance/activation.json, read at run time and judged by its
 * expectations alone (an expectation, a case member or a section this program does not know fails),
 * with the key set loaded from a file as a program loads its shipped JWKS. Then the library's own
 * checks: typed answers signed here with several defects at once (the order decides), the request
 * file and its save and load, the kinds and versions refused by name, arguments, the return code's
 * layout and the answer file's forms.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>

#include "check.h"
#include "internal.h"

static int passed = 0, failed = 0;

static void verdict(const char *suite, const char *name, bool ok, const char *why) {
  if (ok) {
    passed++;
    printf("ok   %s/%s\n", suite, name);
  } else {
    failed++;
    printf("FAIL %s/%s: %s\n", suite, name, why);
  }
}

static char *read_all(const char *path) {
  char *text = NULL;
  kw_error err;
  if (kw__read_file(path, 1 << 24, &text, NULL, &err) != KW_OK) {
    fprintf(stderr, "%s\n", err.message);
    exit(2);
  }
  return text;
}

static const char *text_of(const cJSON *object, const char *name) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, name);
  return cJSON_IsString(item) ? item->valuestring : NULL;
}

static size_t hex_decode(const char *hex, unsigned char *out, size_t max) {
  size_t n = strlen(hex) / 2;
  if (n > max || strlen(hex) % 2 != 0) return (size_t)-1;
  for (size_t i = 0; i < n; i++) {
    unsigned v;
    if (sscanf(hex + 2 * i, "%2x", &v) != 1) return (size_t)-1;
    out[i] = (unsigned char)v;
  }
  return n;
}

static void hex_encode(const unsigned char *in, size_t n, char *out) {
  for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", in[i]);
  out[2 * n] = '\0';
}

/* Whether every member of object is one of names (NULL-terminated); the first other in *unknown. */
static bool only_members(const cJSON *object, const char *const *names, const char **unknown) {
  const cJSON *item;
  cJSON_ArrayForEach(item, object) {
    bool known = false;
    for (const char *const *n = names; *n != NULL && !known; n++) known = strcmp(*n, item->string) == 0;
    if (!known) {
      *unknown = item->string;
      return false;
    }
  }
  return true;
}

static kw_jwks *jwks_from_file(const cJSON *jwks_json) {
  char *json = cJSON_PrintUnformatted(jwks_json);
  char path[] = "/tmp/keyward-c-activation-jwks-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0 || write(fd, json, strlen(json)) != (ssize_t)strlen(json)) {
    perror("jwks file");
    exit(2);
  }
  close(fd);
  free(json);
  kw_jwks *jwks = NULL;
  kw_error err;
  if (kw_jwks_load(path, &jwks, &err) != KW_OK) {
    fprintf(stderr, "the suite's key set does not load: %s\n", err.message);
    exit(2);
  }
  unlink(path);
  return jwks;
}

/* ---- the vectors ---- */

static void request_case(const cJSON *c) {
  static const char *const members[] = {"name", "description", "fields", "fingerprintHash", "code", NULL};
  static const char *const field_names[] = {"appKey", "assetNum",    "crmProductId", "days",
                                            "createdAt", "nonce", "fingerprint", NULL};
  const char *name = text_of(c, "name");
  const cJSON *fields = cJSON_GetObjectItemCaseSensitive(c, "fields");
  const char *code = text_of(c, "code");
  const char *fph = text_of(c, "fingerprintHash");
  const char *unknown = NULL;
  char why[1024] = "";
  if (name == NULL || !cJSON_IsObject(fields) || code == NULL || fph == NULL) {
    verdict("requests", name ? name : "?", false, "a case this program cannot read");
    return;
  }
  if (!only_members(c, members, &unknown) || !only_members(fields, field_names, &unknown)) {
    snprintf(why, sizeof why, "a member this SDK's test does not know: %s", unknown);
    verdict("requests", name, false, why);
    return;
  }
  unsigned char nonce[8];
  const char *nonce_hex = text_of(fields, "nonce");
  if (nonce_hex == NULL || hex_decode(nonce_hex, nonce, 8) != 8) {
    verdict("requests", name, false, "the nonce is not 8 bytes of hex");
    return;
  }
  kw_activation_params p = {0};
  p.app_key = text_of(fields, "appKey");
  p.asset_num = text_of(fields, "assetNum");
  p.crm_product_id = text_of(fields, "crmProductId");
  p.days = (int)kw__json_int(fields, "days");
  p.fingerprint = text_of(fields, "fingerprint");
  p.now_s = kw__json_int(fields, "createdAt");
  p.nonce = nonce;
  kw_activation_request request, back;
  kw_error err;
  char *got = NULL;
  bool ok = true;
  char fph_got[21];
  if (kw_activation_request_create(&p, &request, &err) != KW_OK ||
      kw_activation_request_code(&request, &got, &err) != KW_OK) {
    snprintf(why, sizeof why, "refused: %s", err.message);
    ok = false;
  } else if (strcmp(got, code) != 0) {
    snprintf(why, sizeof why, "code %.480s, expected %.480s", got, code);
    ok = false;
  } else if (hex_encode(request.fingerprint_hash, 10, fph_got), strcmp(fph_got, fph) != 0) {
    snprintf(why, sizeof why, "fingerprintHash %s, expected %s", fph_got, fph);
    ok = false;
  } else if (kw_activation_request_read(code, &back, &err) != KW_OK) {
    snprintf(why, sizeof why, "its code does not read back: %s", err.message);
    ok = false;
  } else if (strcmp(back.app_key, p.app_key) != 0 || strcmp(back.asset_num, p.asset_num) != 0 ||
             strcmp(back.crm_product_id, p.crm_product_id) != 0 || back.days != p.days ||
             back.created_at_s != p.now_s || memcmp(back.nonce, nonce, 8) != 0 ||
             memcmp(back.fingerprint_hash, request.fingerprint_hash, 10) != 0) {
    snprintf(why, sizeof why, "its code reads back as other fields");
    ok = false;
  }
  kw_string_free(got);
  verdict("requests", name, ok, why);
}

static void typed_code_case(const cJSON *c) {
  static const char *const members[] = {"name", "description", "text", "expect", NULL};
  static const char *const expectations[] = {"bytes", "error", "group", NULL};
  const char *name = text_of(c, "name");
  const char *text = text_of(c, "text");
  const cJSON *expect = cJSON_GetObjectItemCaseSensitive(c, "expect");
  const char *unknown = NULL;
  char why[1024] = "";
  if (name == NULL || text == NULL || !cJSON_IsObject(expect)) {
    verdict("typedCodes", name ? name : "?", false, "a case this program cannot read");
    return;
  }
  if (!only_members(c, members, &unknown) || !only_members(expect, expectations, &unknown)) {
    snprintf(why, sizeof why, "an expectation this SDK's test does not know: %s", unknown);
    verdict("typedCodes", name, false, why);
    return;
  }
  unsigned char bytes[1024];
  size_t len = 0;
  kw_error err;
  kw_status st = kw_typed_code_decode(text, bytes, sizeof bytes, &len, &err);
  const char *want_bytes = text_of(expect, "bytes");
  const cJSON *error = cJSON_GetObjectItemCaseSensitive(expect, "error");
  const cJSON *group = cJSON_GetObjectItemCaseSensitive(expect, "group");
  bool ok = true;
  if (want_bytes != NULL) {
    char got[2049];
    if (st != KW_OK) {
      snprintf(why, sizeof why, "refused (%s), expected bytes", err.message);
      ok = false;
    } else if (hex_encode(bytes, len, got), strcmp(got, want_bytes) != 0) {
      snprintf(why, sizeof why, "bytes %.400s, expected %.400s", got, want_bytes);
      ok = false;
    }
  } else if (cJSON_IsTrue(error)) {
    if (st != KW_ERR_FORMAT) {
      snprintf(why, sizeof why, "answered %s, expected a format error", kw_status_name(st));
      ok = false;
    } else if (group != NULL && (!cJSON_IsNumber(group) || err.group != group->valueint)) {
      snprintf(why, sizeof why, "group %d (%s), expected %d", err.group, err.message,
               cJSON_IsNumber(group) ? group->valueint : -1);
      ok = false;
    }
  } else {
    snprintf(why, sizeof why, "neither bytes nor an error expected");
    ok = false;
  }
  verdict("typedCodes", name, ok, why);
}

static void answer_case(const kw_jwks *jwks, int64_t now_s, const cJSON *c) {
  static const char *const members[] = {"name", "description", "request", "fingerprint", "answer", "expect", NULL};
  static const char *const expectations[] = {"valid", "leaseId", "expiresAt", "expBound", "reason", NULL};
  const char *name = text_of(c, "name");
  const char *request_code = text_of(c, "request");
  const char *fingerprint = text_of(c, "fingerprint");
  const char *answer = text_of(c, "answer");
  const cJSON *expect = cJSON_GetObjectItemCaseSensitive(c, "expect");
  const cJSON *valid = cJSON_GetObjectItemCaseSensitive(expect, "valid");
  const char *unknown = NULL;
  char why[1024] = "";
  if (name == NULL || request_code == NULL || fingerprint == NULL || answer == NULL || !cJSON_IsBool(valid)) {
    verdict("answers", name ? name : "?", false, "a case this program cannot read");
    return;
  }
  if (!only_members(c, members, &unknown) || !only_members(expect, expectations, &unknown)) {
    snprintf(why, sizeof why, "an expectation this SDK's test does not know: %s", unknown);
    verdict("answers", name, false, why);
    return;
  }
  kw_activation_request request;
  kw_error err;
  if (kw_activation_request_read(request_code, &request, &err) != KW_OK) {
    snprintf(why, sizeof why, "its request does not read: %s", err.message);
    verdict("answers", name, false, why);
    return;
  }
  kw_activated_lease lease;
  kw_status st = kw_verify_activation(jwks, answer, &request, fingerprint, now_s * 1000, &lease, &err);
  bool ok = true;
  if (cJSON_IsTrue(valid)) {
    if (st != KW_OK) {
      snprintf(why, sizeof why, "refused (%s: %s), expected valid", err.code, err.message);
      ok = false;
    }
    const char *lease_id = text_of(expect, "leaseId");
    const char *bound = text_of(expect, "expBound");
    int64_t expires = kw__json_int(expect, "expiresAt");
    if (ok && cJSON_GetObjectItemCaseSensitive(expect, "reason") != NULL) {
      snprintf(why, sizeof why, "a valid case with a reason");
      ok = false;
    }
    if (ok && lease_id != NULL && strcmp(lease.lease_id, lease_id) != 0) {
      snprintf(why, sizeof why, "leaseId %s, expected %s", lease.lease_id, lease_id);
      ok = false;
    }
    if (ok && cJSON_GetObjectItemCaseSensitive(expect, "expiresAt") != NULL && lease.expires_at_s != expires) {
      snprintf(why, sizeof why, "expiresAt %lld, expected %lld", (long long)lease.expires_at_s, (long long)expires);
      ok = false;
    }
    if (ok && bound != NULL && strcmp(lease.exp_bound, bound) != 0) {
      snprintf(why, sizeof why, "expBound %s, expected %s", lease.exp_bound, bound);
      ok = false;
    }
    if (ok && (strcmp(lease.asset_num, request.asset_num) != 0 || strcmp(lease.app_key, request.app_key) != 0 ||
               strcmp(lease.crm_product_id, request.crm_product_id) != 0 || lease.issued_at_s <= 0 ||
               lease.issued_at_s > now_s)) {
      snprintf(why, sizeof why, "the lease's asset, app, product or time differ from the request's");
      ok = false;
    }
  } else {
    const char *reason = text_of(expect, "reason");
    const cJSON *other;
    cJSON_ArrayForEach(other, expect) {
      if (strcmp(other->string, "valid") != 0 && strcmp(other->string, "reason") != 0) {
        snprintf(why, sizeof why, "a refusal case with %s", other->string);
        ok = false;
      }
    }
    if (!ok) {
    } else if (reason == NULL) {
      snprintf(why, sizeof why, "a refusal case without a reason");
      ok = false;
    } else if (st != KW_ERR_LEASE_REFUSED) {
      snprintf(why, sizeof why, "answered %s, expected a refusal", kw_status_name(st));
      ok = false;
    } else if (strcmp(err.code, reason) != 0) {
      snprintf(why, sizeof why, "reason %s (%s), expected %s", err.code, err.message, reason);
      ok = false;
    }
  }
  verdict("answers", name, ok, why);
}

static void return_case(const cJSON *c) {
  static const char *const members[] = {"name", "description", "request", "leaseId", "code", NULL};
  const char *name = text_of(c, "name");
  const char *request_code = text_of(c, "request");
  const char *lease_id = text_of(c, "leaseId");
  const char *code = text_of(c, "code");
  const char *unknown = NULL;
  char why[1024] = "";
  if (name == NULL || request_code == NULL || lease_id == NULL || code == NULL) {
    verdict("returns", name ? name : "?", false, "a case this program cannot read");
    return;
  }
  if (!only_members(c, members, &unknown)) {
    snprintf(why, sizeof why, "a member this SDK's test does not know: %s", unknown);
    verdict("returns", name, false, why);
    return;
  }
  kw_activation_request request;
  kw_error err;
  char *got = NULL;
  bool ok = kw_activation_request_read(request_code, &request, &err) == KW_OK &&
            kw_activation_return_code(&request, lease_id, &got, &err) == KW_OK;
  if (!ok) snprintf(why, sizeof why, "refused: %s", err.message);
  else if (strcmp(got, code) != 0) {
    snprintf(why, sizeof why, "code %.480s, expected %.480s", got, code);
    ok = false;
  }
  kw_string_free(got);
  verdict("returns", name, ok, why);
}

static void vectors(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/activation.json", dir);
  char *text = read_all(path);
  cJSON *doc = cJSON_Parse(text);
  free(text);
  const cJSON *version = cJSON_GetObjectItemCaseSensitive(doc, "version");
  if (!cJSON_IsNumber(version) || version->valueint != 1) {
    fprintf(stderr, "%s: not the version 1 this SDK reads\n", path);
    exit(2);
  }
  static const char *const sections[] = {"version", "now", "jwks", "requests", "typedCodes", "answers", "returns", NULL};
  const char *unknown = NULL;
  if (!only_members(doc, sections, &unknown)) {
    char why[256];
    snprintf(why, sizeof why, "a section this SDK's test does not know: %s", unknown);
    verdict("activation", "sections", false, why);
  }
  int64_t now_s = kw__json_int(doc, "now");
  kw_jwks *jwks = jwks_from_file(cJSON_GetObjectItemCaseSensitive(doc, "jwks"));
  size_t counts[4] = {0};
  const cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "requests")) {
    request_case(c);
    counts[0]++;
  }
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "typedCodes")) {
    typed_code_case(c);
    counts[1]++;
  }
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "answers")) {
    answer_case(jwks, now_s, c);
    counts[2]++;
  }
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "returns")) {
    return_case(c);
    counts[3]++;
  }
  if (counts[0] == 0 || counts[1] == 0 || counts[2] == 0 || counts[3] == 0)
    verdict("activation", "sections", false, "a section without cases");
  kw_jwks_free(jwks);
  cJSON_Delete(doc);
}

/* ---- the library's own checks ---- */

#define NOW_S 1800000000LL
#define FP "fp-activation-test-machine"

static EVP_PKEY *key;
static kw_jwks *test_jwks;
static const unsigned char KID_PREFIX[4] = {0x70, 0xbd, 0xd7, 0xee};
static const unsigned char NONCE[8] = {1, 2, 3, 4, 5, 6, 7, 8};

static void setup_key(void) {
  EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
  if (ctx == NULL || EVP_PKEY_keygen_init(ctx) != 1 || EVP_PKEY_keygen(ctx, &key) != 1) {
    fprintf(stderr, "no Ed25519 key\n");
    exit(2);
  }
  EVP_PKEY_CTX_free(ctx);
  unsigned char raw[32];
  size_t n = sizeof raw;
  EVP_PKEY_get_raw_public_key(key, raw, &n);
  char x[64], kid[64];
  kw__b64_encode(raw, 32, x);
  /* A kid whose first bytes are KID_PREFIX: "cL3X7u" is 70 bd d7 ee. */
  snprintf(kid, sizeof kid, "cL3X7uAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
  for (char *p = x; *p; p++) *p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
  x[43] = '\0';
  char json[512];
  /* A key of another kid prefix first: the typed answer's key is found by its prefix. */
  snprintf(json, sizeof json,
           "{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"xOx8JLIxliLK99DH_9HhPCWQ5zaxEN-r1-muh6RjQfg\","
           "\"kid\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"},"
           "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%s\",\"kid\":\"%s\"}]}",
           x, kid);
  kw_error err;
  if (kw_jwks_parse(json, strlen(json), &test_jwks, &err) != KW_OK) {
    fprintf(stderr, "test key set: %s\n", err.message);
    exit(2);
  }
}

static kw_activation_request make_request(const char *asset) {
  kw_activation_params p = {0};
  p.app_key = "kw_app";
  p.asset_num = asset;
  p.crm_product_id = "modeler-pro";
  p.days = 30;
  p.fingerprint = FP;
  p.now_s = NOW_S - 600;
  p.nonce = NONCE;
  kw_activation_request r;
  kw_error err;
  if (kw_activation_request_create(&p, &r, &err) != KW_OK) {
    fprintf(stderr, "request: %s\n", err.message);
    exit(2);
  }
  return r;
}

typedef struct answer_spec {
  uint32_t issued_at, expires_at;
  unsigned bound;
  const unsigned char *nonce;
  const char *fingerprint;
  const unsigned char *fingerprint_hash; /* in place of the fingerprint's, when not NULL */
  const char *app_key, *asset_num, *crm_product_id; /* the binding */
  bool tamper;                                      /* one bit of the body changed after signing */
  unsigned kind, version;
  size_t cut;                                       /* bytes left off the end */
} answer_spec;

static answer_spec good_spec(void) {
  answer_spec s = {(uint32_t)(NOW_S - 300), (uint32_t)(NOW_S + 30 * 86400), 0, NONCE, FP, NULL, "kw_app", "A-1",
                   "modeler-pro", false, 0x4c, 1, 0};
  return s;
}

/* A typed answer signed with the test key. */
static char *typed_answer(answer_spec s) {
  unsigned char b[55 + 64];
  size_t at = 0;
  b[at++] = (unsigned char)s.kind;
  b[at++] = (unsigned char)s.version;
  memcpy(b + at, KID_PREFIX, 4);
  at += 4;
  static const unsigned char id[16] = {0x01, 0x93, 0x8f, 0x2e, 0x7c, 0x1a, 0x70, 0x00,
                                       0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0xb0, 0x02};
  memcpy(b + at, id, 16);
  at += 16;
  for (int i = 3; i >= 0; i--) b[at++] = (unsigned char)(s.issued_at >> (8 * i));
  for (int i = 3; i >= 0; i--) b[at++] = (unsigned char)(s.expires_at >> (8 * i));
  b[at++] = (unsigned char)s.bound;
  memcpy(b + at, s.nonce, 8);
  at += 8;
  unsigned char digest[32];
  unsigned int n;
  EVP_Digest(s.fingerprint, strlen(s.fingerprint), digest, &n, EVP_sha256(), NULL);
  memcpy(b + at, s.fingerprint_hash != NULL ? s.fingerprint_hash : digest, 10);
  at += 10;
  char binding[1024];
  snprintf(binding, sizeof binding, "%s\n%s\n%s", s.app_key, s.asset_num, s.crm_product_id);
  EVP_Digest(binding, strlen(binding), digest, &n, EVP_sha256(), NULL);
  memcpy(b + at, digest, 6);
  at += 6;
  unsigned char input[23 + 55];
  memcpy(input, "keyward typed lease v1\n", 23);
  memcpy(input + 23, b, 55);
  size_t sig_len = 64;
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  EVP_DigestSignInit(ctx, NULL, NULL, NULL, key);
  EVP_DigestSign(ctx, b + 55, &sig_len, input, sizeof input);
  EVP_MD_CTX_free(ctx);
  if (s.tamper) b[30] ^= 0x01;
  char *code = NULL;
  kw_typed_code_encode(b, sizeof b - s.cut, &code, NULL);
  return code;
}

/* The reason a typed answer of spec is refused with, or "valid". */
static const char *reason_for(answer_spec s, const kw_activation_request *r, const char *fingerprint, int64_t now_s,
                              kw_error *err) {
  char *code = typed_answer(s);
  kw_status st = kw_verify_activation(test_jwks, code, r, fingerprint, now_s * 1000, NULL, err);
  kw_string_free(code);
  return st == KW_OK ? "valid" : st == KW_ERR_LEASE_REFUSED ? err->code : kw_status_name(st);
}

static void typed_answers(void) {
  kw_activation_request r = make_request("A-1");
  kw_error err;
  answer_spec s = good_spec();
  CHECK_STR(reason_for(s, &r, FP, NOW_S, &err), "valid");

  /* Each defect alone. */
  s = good_spec();
  s.tamper = true;
  CHECK_STR(reason_for(s, &r, FP, NOW_S, &err), "signature");
  s = good_spec();
  s.issued_at = (uint32_t)(NOW_S + 1);
  CHECK_STR(reason_for(s, &r, FP, NOW_S, &err), "not-yet-valid");
  s = good_spec();
  s.expires_at = (uint32_t)NOW_S; /* at now: expired */
  CHECK_STR(reason_for(s, &r, FP, NOW_S, &err), "expired");
  s.expires_at = (uint32_t)NOW_S + 1;
  CHECK_STR(reason_for(s, &r, FP, NOW_S, &err), "valid");
  s = good_spec();
  static const unsigned char other_nonce[8] = {9, 9, 9, 9, 9, 9, 9, 9};
  s.nonce = other_nonce;
  CHECK_STR(reason_for(s, &r, FP, NOW_S, &err), "request");
  s = good_spec();
  s.crm_product_id = "modeler-lite"; /* the binding: another product */
  CHECK_STR(reason_for(s, &r, FP, NOW_S, &err), "request");
  s = good_spec();
  s.app_key = "kw_other";
  CHECK_STR(reason_for(s, &r, FP, NOW_S, &err), "request");
  s = good_spec();
  CHECK_STR(reason_for(s, &r, "fp-another-machine", NOW_S, &err), "fingerprint");
  s.fingerprint = "fp-another-machine";
  CHECK_STR(reason_for(s, &r, FP, NOW_S, &err), "fingerprint");

  /* Several at once: the first in the order answers. */
  s = good_spec();
  s.tamper = true;
  s.expires_at = (uint32_t)(NOW_S - 10);
  CHECK_STR(reason_for(s, &r, "fp-another-machine", NOW_S, &err), "signature");
  s = good_spec();
  s.expires_at = (uint32_t)(NOW_S - 10);
  s.nonce = other_nonce;
  s.fingerprint = "fp-another-machine";
  CHECK_STR(reason_for(s, &r, FP, NOW_S, &err), "expired");
  s = good_spec();
  s.issued_at = (uint32_t)(NOW_S + 100);
  s.expires_at = (uint32_t)(NOW_S - 10);
  CHECK_STR(reason_for(s, &r, FP, NOW_S, &err), "not-yet-valid");
  s = good_spec();
  s.nonce = other_nonce;
  s.fingerprint = "fp-another-machine";
  CHECK_STR(reason_for(s, &r, FP, NOW_S, &err), "request");

  /* Layouts: another kind and version by name, an unknown bound, cut short, too long. */
  s = good_spec();
  s.kind = 0x52;
  CHECK_STR(reason_for(s, &r, FP, NOW_S, &err), "malformed");
  CHECK(strstr(err.message, "this is an activation request, not an activation answer") != NULL, "%s", err.message);
  s = good_spec();
  s.version = 2;
  CHECK_STR(reason_for(s, &r, FP, NOW_S, &err), "malformed");
  CHECK(strstr(err.message, "version 2; this reads version 1") != NULL, "%s", err.message);
  s = good_spec();
  s.bound = 3;
  CHECK_STR(reason_for(s, &r, FP, NOW_S, &err), "malformed");
  s = good_spec();
  s.bound = 2;
  kw_activated_lease lease;
  char *code = typed_answer(s);
  CHECK(kw_verify_activation(test_jwks, code, &r, FP, NOW_S * 1000, &lease, &err) == KW_OK, "%s", err.message);
  CHECK_STR(lease.exp_bound, "time-duration");
  CHECK_STR(lease.lease_id, "01938f2e-7c1a-7000-8000-00000000b002");
  CHECK(lease.issued_at_s == NOW_S - 300 && lease.expires_at_s == NOW_S + 30 * 86400, "times %lld %lld",
        (long long)lease.issued_at_s, (long long)lease.expires_at_s);
  CHECK_STR(lease.asset_num, "A-1");
  CHECK_STR(lease.crm_product_id, "modeler-pro");
  CHECK_STR(lease.app_key, "kw_app");
  /* Typed sloppily: lower case, spaces for dashes. */
  for (char *p = code; *p; p++) *p = *p == '-' ? ' ' : (*p >= 'A' && *p <= 'Z') ? (char)(*p - 'A' + 'a') : *p;
  CHECK(kw_verify_activation(test_jwks, code, &r, FP, NOW_S * 1000, NULL, &err) == KW_OK, "%s", err.message);
  /* The same as the only member of an answer file's lease. */
  char file[2048];
  snprintf(file, sizeof file, "  {\"keyward\":\"activation-answer\",\"version\":1,\"lease\":\"%s\"}\n", code);
  CHECK(kw_verify_activation(test_jwks, file, &r, FP, NOW_S * 1000, NULL, &err) == KW_OK, "%s", err.message);
  /* A mistyped character: malformed, its group named. */
  code[strlen(code) - 1] = code[strlen(code) - 1] == 'a' ? 'b' : 'a';
  CHECK(kw_verify_activation(test_jwks, code, &r, FP, NOW_S * 1000, &lease, &err) == KW_ERR_LEASE_REFUSED, "%s",
        err.message);
  CHECK_STR(err.code, "malformed");
  CHECK(err.group == 39, "group %d (%s)", err.group, err.message); /* 119 bytes: 191 values, 39 groups; the last */
  CHECK(lease.lease_id[0] == '\0', "nothing comes back from a refusal");
  kw_string_free(code);
  s = good_spec();
  s.cut = 1;
  CHECK_STR(reason_for(s, &r, FP, NOW_S, &err), "malformed");
  CHECK(strstr(err.message, "cut short: its signature is missing") != NULL, "%s", err.message);

  /* Key lookup by the kid's prefix: another set, no such key. */
  kw_jwks *other = NULL;
  const char *json = "{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"xOx8JLIxliLK99DH_9HhPCWQ5zaxEN-r1-"
                     "muh6RjQfg\",\"kid\":\"cL3X8tBPk0Cco7pH_xzoEX9Cyy_fQyotmDAILljnyPA\"}]}";
  CHECK(kw_jwks_parse(json, strlen(json), &other, &err) == KW_OK, "%s", err.message);
  code = typed_answer(good_spec());
  CHECK(kw_verify_activation(other, code, &r, FP, NOW_S * 1000, NULL, &err) == KW_ERR_LEASE_REFUSED, "refused");
  CHECK_STR(err.code, "unknown-key");
  kw_jwks_free(other);

  /* Answer files that are not. */
  CHECK(kw_verify_activation(test_jwks, "{\"keyward\":", &r, FP, NOW_S * 1000, NULL, &err) == KW_ERR_LEASE_REFUSED,
        "not JSON");
  CHECK_STR(err.code, "malformed");
  CHECK(strstr(err.message, "not JSON") != NULL, "%s", err.message);
  snprintf(file, sizeof file, "{\"keyward\":\"activation-request\",\"lease\":\"%s\"}", code);
  CHECK(kw_verify_activation(test_jwks, file, &r, FP, NOW_S * 1000, NULL, &err) == KW_ERR_LEASE_REFUSED, "request file");
  CHECK_STR(err.code, "malformed");
  CHECK(kw_verify_activation(test_jwks, "   ", &r, FP, NOW_S * 1000, NULL, &err) == KW_ERR_LEASE_REFUSED, "empty");
  CHECK_STR(err.code, "malformed");
  CHECK(kw_verify_activation(test_jwks, "a.b.c", &r, FP, NOW_S * 1000, NULL, &err) == KW_ERR_LEASE_REFUSED, "jws");
  CHECK_STR(err.code, "malformed");
  CHECK(strncmp(err.message, "activation refused (malformed): ", 32) == 0, "%s", err.message);
  CHECK(kw_verify_activation(NULL, code, &r, FP, 0, NULL, &err) == KW_ERR_INVALID_ARGUMENT, "no keys");
  CHECK(kw_verify_activation(test_jwks, code, NULL, FP, 0, NULL, &err) == KW_ERR_INVALID_ARGUMENT, "no request");
  kw_string_free(code);
  /* The system's clock when now is 0: an answer of an hour ago, for a day. */
  int64_t real_now = kw__realtime_ms() / 1000;
  s = good_spec();
  s.issued_at = (uint32_t)(real_now - 3600);
  s.expires_at = (uint32_t)(real_now + 86400);
  CHECK_STR(reason_for(s, &r, FP, 0, &err), "valid");
  s.issued_at = (uint32_t)(real_now + 3600);
  CHECK_STR(reason_for(s, &r, FP, 0, &err), "not-yet-valid");
}

static void requests(void) {
  kw_error err;
  kw_activation_request r = make_request("A-1"), back;
  char *code = NULL, *json = NULL;
  CHECK(kw_activation_request_code(&r, &code, &err) == KW_OK, "%s", err.message);
  CHECK(kw_activation_request_file(&r, &json, &err) == KW_OK, "%s", err.message);
  cJSON *file = cJSON_Parse(json);
  CHECK_STR(text_of(file, "keyward"), "activation-request");
  CHECK(kw__json_int(file, "version") == 1, "version");
  CHECK_STR(text_of(file, "code"), code);
  CHECK_STR(text_of(file, "appKey"), "kw_app");
  CHECK_STR(text_of(file, "assetNum"), "A-1");
  CHECK_STR(text_of(file, "crmProductId"), "modeler-pro");
  CHECK(kw__json_int(file, "days") == 30, "days");
  CHECK_STR(text_of(file, "createdAt"), "2027-01-15T07:50:00.000Z");
  cJSON_Delete(file);

  /* The file's text reads back by its code alone. */
  CHECK(kw_activation_request_read(json, &back, &err) == KW_OK, "%s", err.message);
  CHECK(memcmp(&back.nonce, NONCE, 8) == 0 && back.created_at_s == NOW_S - 600 && back.days == 30, "fields");
  const char *forged = "{\"keyward\":\"activation-request\",\"version\":1,\"code\":\"%s\",\"assetNum\":\"B-2\"}";
  char text[2048];
  snprintf(text, sizeof text, forged, code);
  CHECK(kw_activation_request_read(text, &back, &err) == KW_OK && strcmp(back.asset_num, "A-1") == 0, "the code counts");
  CHECK(kw_activation_request_read("{\"keyward\":\"activation-answer\",\"code\":\"x\"}", &back, &err) == KW_ERR_FORMAT,
        "an answer file");
  CHECK(kw_activation_request_read("{nope", &back, &err) == KW_ERR_FORMAT, "not JSON");
  CHECK_STR(err.message, "the request file is not JSON");

  /* Saved and loaded: the pending request keeps its nonce; the file is its owner's. */
  char dir[] = "/tmp/keyward-c-activation-XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  char path[256];
  snprintf(path, sizeof path, "%s/request.json", dir);
  CHECK(kw_activation_request_save(&r, path, &err) == KW_OK, "%s", err.message);
  struct stat st;
  CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "mode %o", st.st_mode & 0777);
  char *saved = NULL;
  CHECK(kw__read_file(path, 1 << 16, &saved, NULL, &err) == KW_OK && strcmp(saved, json) == 0,
        "the file is the request file's JSON, one line, nothing after it");
  free(saved);
  memset(&back, 0, sizeof back);
  CHECK(kw_activation_request_load(path, &back, &err) == KW_OK, "%s", err.message);
  CHECK(memcmp(&back, &r, sizeof r) == 0, "the loaded request is the saved one");
  /* A file of the typed code alone loads too. */
  CHECK(kw__write_file_atomic(path, code, strlen(code), 0600, &err) == KW_OK, "%s", err.message);
  CHECK(kw_activation_request_load(path, &back, &err) == KW_OK && memcmp(&back, &r, sizeof r) == 0, "%s", err.message);
  CHECK(kw__write_file_atomic(path, "{}", 2, 0600, &err) == KW_OK, "%s", err.message);
  CHECK(kw_activation_request_load(path, &back, &err) == KW_ERR_FORMAT, "not a request");
  CHECK(strstr(err.message, path) == err.message, "the message names the file: %s", err.message);
  unlink(path);
  CHECK(kw_activation_request_load(path, &back, &err) == KW_ERR_IO, "missing file");
  rmdir(dir);

  /* A mistyped request names its group; another kind names itself. */
  char *mistyped = kw__strdup(code);
  mistyped[8] = mistyped[8] == 'Z' ? 'Y' : 'Z'; /* group 2 */
  CHECK(kw_activation_request_read(mistyped, &back, &err) == KW_ERR_FORMAT, "mistyped");
  CHECK(err.group == 2, "group %d", err.group);
  CHECK_STR(err.code, "malformed");
  CHECK_STR(err.message, "group 2 does not check: a character in it is mistyped");
  free(mistyped);
  char *ret = NULL;
  CHECK(kw_activation_return_code(&r, "01938f2e-7c1a-7000-8000-00000000b002", &ret, &err) == KW_OK, "%s", err.message);
  CHECK(kw_activation_request_read(ret, &back, &err) == KW_ERR_FORMAT, "a return code");
  CHECK_STR(err.message, "this is an activation return code, not an activation request");
  CHECK(err.group == 0, "no group");

  /* The return code's layout: kind, version, lease id, nonce, fingerprint hash. */
  unsigned char bytes[64];
  size_t len = 0;
  CHECK(kw_typed_code_decode(ret, bytes, sizeof bytes, &len, &err) == KW_OK && len == 36, "len %zu", len);
  static const unsigned char id[16] = {0x01, 0x93, 0x8f, 0x2e, 0x7c, 0x1a, 0x70, 0x00,
                                       0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0xb0, 0x02};
  CHECK(bytes[0] == 0x58 && bytes[1] == 1 && memcmp(bytes + 2, id, 16) == 0 && memcmp(bytes + 18, NONCE, 8) == 0 &&
            memcmp(bytes + 26, r.fingerprint_hash, 10) == 0,
        "return code layout");
  CHECK(kw_typed_code_decode(ret, bytes, 10, &len, &err) == KW_ERR_INVALID_ARGUMENT && len == 36, "buf too small");
  kw_string_free(ret);
  CHECK(kw_activation_return_code(&r, "not-a-uuid", &ret, &err) == KW_ERR_INVALID_ARGUMENT && ret == NULL, "bad id");

  /* Version 2 of a request is refused by name; days out of range are refused. */
  CHECK(kw_typed_code_decode(code, bytes, sizeof bytes, &len, &err) == KW_OK, "%s", err.message);
  bytes[1] = 2;
  char *v2 = NULL;
  kw_typed_code_encode(bytes, len, &v2, NULL);
  CHECK(kw_activation_request_read(v2, &back, &err) == KW_ERR_FORMAT, "version 2");
  CHECK_STR(err.message, "the activation request is of version 2; this reads version 1");
  kw_string_free(v2);
  bytes[1] = 1;
  bytes[2] = 1, bytes[3] = 110; /* 366 days */
  kw_typed_code_encode(bytes, len, &v2, NULL);
  CHECK(kw_activation_request_read(v2, &back, &err) == KW_ERR_FORMAT, "366 days");
  CHECK_STR(err.message, "the activation request asks for 366 days; 1 to 365 are possible");
  kw_string_free(v2);
  bytes[2] = 0, bytes[3] = 30;
  kw_typed_code_encode(bytes, len + 0, &v2, NULL);
  CHECK(kw_activation_request_read(v2, &back, &err) == KW_OK, "%s", err.message);
  kw_string_free(v2);
  kw_typed_code_encode(bytes, len - 1, &v2, NULL);
  CHECK(kw_activation_request_read(v2, &back, &err) == KW_ERR_FORMAT, "cut");
  CHECK_STR(err.message, "the activation request is cut short: crmProductId is missing");
  kw_string_free(v2);
  bytes[len] = 0;
  kw_typed_code_encode(bytes, len + 1, &v2, NULL);
  CHECK(kw_activation_request_read(v2, &back, &err) == KW_ERR_FORMAT, "long");
  CHECK_STR(err.message, "the activation request has 1 bytes too many");
  kw_string_free(v2);
  bytes[len - 1] = 0xff; /* the product's last byte: not UTF-8 */
  kw_typed_code_encode(bytes, len, &v2, NULL);
  CHECK(kw_activation_request_read(v2, &back, &err) == KW_ERR_FORMAT, "utf-8");
  CHECK_STR(err.message, "the activation request's crmProductId is not UTF-8");
  kw_string_free(v2);
  kw_string_free(code);
  kw_string_free(json);

  /* Arguments. */
  kw_activation_params p = {0};
  p.app_key = "kw_app";
  p.asset_num = "A-1";
  p.crm_product_id = "modeler-pro";
  p.fingerprint = FP;
  p.days = 0;
  CHECK(kw_activation_request_create(&p, &r, &err) == KW_ERR_INVALID_ARGUMENT, "0 days");
  p.days = 366;
  CHECK(kw_activation_request_create(&p, &r, &err) == KW_ERR_INVALID_ARGUMENT, "366 days");
  p.days = 365;
  p.asset_num = "";
  CHECK(kw_activation_request_create(&p, &r, &err) == KW_ERR_INVALID_ARGUMENT, "empty asset");
  CHECK(strstr(err.message, "asset_num") != NULL, "%s", err.message);
  char longer[300];
  memset(longer, 'x', 256);
  longer[256] = '\0';
  p.asset_num = longer;
  CHECK(kw_activation_request_create(&p, &r, &err) == KW_ERR_INVALID_ARGUMENT, "256 bytes");
  longer[255] = '\0';
  CHECK(kw_activation_request_create(&p, &r, &err) == KW_OK, "255 bytes: %s", err.message);
  p.asset_num = "\xc3\x28";
  CHECK(kw_activation_request_create(&p, &r, &err) == KW_ERR_INVALID_ARGUMENT, "not UTF-8");
  p.asset_num = "A-1";
  p.fingerprint = NULL;
  CHECK(kw_activation_request_create(&p, &r, &err) == KW_ERR_INVALID_ARGUMENT, "no fingerprint");
  /* Random nonces and the system's clock. */
  p.fingerprint = FP;
  kw_activation_request a, b;
  CHECK(kw_activation_request_create(&p, &a, &err) == KW_OK && kw_activation_request_create(&p, &b, &err) == KW_OK,
        "%s", err.message);
  CHECK(memcmp(a.nonce, b.nonce, 8) != 0, "two requests, two nonces");
  CHECK(a.created_at_s > NOW_S - 5 * 365 * 86400LL && a.created_at_s <= b.created_at_s, "now: %lld", (long long)a.created_at_s);

  /* The activated fingerprint. */
  char fph[KW_ACTIVATION_FINGERPRINT_SIZE];
  CHECK(kw_activation_fingerprint("fp-conformance-offline-machine", fph, sizeof fph, &err) == KW_OK, "%s", err.message);
  CHECK_STR(fph, "fph1:134JR0ARVRSF645J");
  CHECK(kw_activation_fingerprint(FP, fph, 21, &err) == KW_ERR_INVALID_ARGUMENT, "small buffer");
}

static void typed_codes(void) {
  kw_error err;
  char *code = NULL;
  CHECK(kw_typed_code_encode((const unsigned char *)"", 0, &code, &err) == KW_OK && strcmp(code, "") == 0, "empty");
  kw_string_free(code);
  unsigned char one = 0xff, out[8];
  size_t len = 0;
  CHECK(kw_typed_code_encode(&one, 1, &code, &err) == KW_OK, "one byte");
  CHECK(strlen(code) == 3, "one byte: two values and a check: %s", code);
  CHECK(kw_typed_code_decode(code, out, sizeof out, &len, &err) == KW_OK && len == 1 && out[0] == 0xff, "%s", code);
  kw_string_free(code);
  CHECK(kw_typed_code_decode("", out, sizeof out, &len, &err) == KW_ERR_FORMAT && err.group == 0, "empty");
  CHECK_STR(err.message, "the code is empty");
  CHECK(kw_typed_code_decode("005HCD-8", out, sizeof out, &len, &err) == KW_ERR_FORMAT && err.group == 2, "cut");
  CHECK_STR(err.message, "group 2 is cut short");
  CHECK(kw_typed_code_decode("005HCD-89C6XD-14TP37-\xc3\xa9", out, sizeof out, &len, &err) == KW_ERR_FORMAT, "é");
  CHECK(err.group == 4, "group %d", err.group);
  CHECK_STR(err.message, "character \"\xc3\xa9\" in group 4 is not one of the code's");
  CHECK(kw_typed_code_decode("005HCD-8UC6XD", out, sizeof out, &len, &err) == KW_ERR_FORMAT, "U");
  CHECK_STR(err.message, "character \"U\" in group 2 is not one of the code's");
  CHECK(kw_typed_code_decode(NULL, out, sizeof out, &len, &err) == KW_ERR_INVALID_ARGUMENT, "NULL");
}

/*
 * For tests/modeler_activation.sh: the typed answer to a kept request, as Keyward would sign it
 * (here with this run's key, written as OUT_DIR/jwks.json), valid for life seconds from now.
 */
static int answer_for(const char *request_path, const char *out_dir, long life) {
  kw_activation_request r;
  kw_error err;
  if (kw_activation_request_load(request_path, &r, &err) != KW_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 2;
  }
  setup_key();
  char path[4096];
  snprintf(path, sizeof path, "%s/jwks.json", out_dir);
  const char *json = kw_jwks_json(test_jwks);
  if (kw__write_file_atomic(path, json, strlen(json), 0644, &err) != KW_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 2;
  }
  int64_t now = kw__realtime_ms() / 1000;
  answer_spec s = {(uint32_t)(now - 5), (uint32_t)(now + life), 0, r.nonce, "", r.fingerprint_hash, r.app_key,
                   r.asset_num, r.crm_product_id, false, 0x4c, 1, 0};
  char *code = typed_answer(s);
  printf("%s\n", code);
  kw_string_free(code);
  kw_jwks_free(test_jwks);
  EVP_PKEY_free(key);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CONFORMANCE_DIR\n       %s --answer REQUEST_FILE OUT_DIR [SECONDS]\n", argv[0], argv[0]);
    return 2;
  }
  if (kw_global_init(NULL) != KW_OK) return 2;
  if (strcmp(argv[1], "--answer") == 0 && argc >= 4) {
    int rc = answer_for(argv[2], argv[3], argc >= 5 ? strtol(argv[4], NULL, 10) : 7 * 86400L);
    kw_global_cleanup();
    return rc;
  }
  vectors(argv[1]);
  printf("%d vectors passed, %d failed\n", passed, failed);
  setup_key();
  typed_codes();
  requests();
  typed_answers();
  printf("%d checks passed, %d failed\n", check_passed, check_failures);
  kw_jwks_free(test_jwks);
  EVP_PKEY_free(key);
  kw_global_cleanup();
  return failed == 0 && check_failures == 0 ? 0 : 1;
}
