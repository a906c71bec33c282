/*
 * Offline activation (docs/activation.md): typed codes, the request, the answer's verification and
 * the return code, version 1 of the layouts. Local only: nothing here calls the server.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "internal.h"

static const char CROCKFORD[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
#define GROUP 5

#define VERSION 1
#define KIND_REQUEST 0x52
#define KIND_LEASE 0x4c
#define KIND_RETURN 0x58
#define NONCE_BYTES KW_ACTIVATION_NONCE_BYTES
#define FPH_BYTES KW_ACTIVATION_FINGERPRINT_HASH_BYTES
#define KID_PREFIX_BYTES 4
#define BINDING_BYTES 6
#define SIGNATURE_BYTES 64
#define TYPED_BODY_BYTES 55
/* The longest answer or request text read (a request is at most about 1,800 characters typed). */
#define MAX_TEXT_BYTES (64u << 10)

/* In front of a typed answer's signed bytes: it can never be taken for another signed message. */
static const char LABEL[] = "keyward typed lease v1\n";
static const char *const EXP_BOUNDS[] = {"offline-days", "license-end", "time-duration"};

/* ---- errors ---- */

/* A message that does not read: KW_ERR_FORMAT, code "malformed", the mistyped group (from 1) or 0. */
static kw_status bad(kw_error *err, int group, const char *message) {
  kw__fail(err, KW_ERR_FORMAT, KW_REASON_MALFORMED, "%s", message);
  if (err != NULL) err->group = group;
  return KW_ERR_FORMAT;
}

static kw_status refuse(kw_error *err, const char *reason, const char *why) {
  return kw__fail(err, KW_ERR_LEASE_REFUSED, reason, "activation refused (%s): %s", reason, why);
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

/* ---- typed codes ---- */

static int value_of(unsigned char c) {
  if (c >= 'a' && c <= 'z') c = (unsigned char)(c - 'a' + 'A');
  if (c == 'O') c = '0';
  else if (c == 'I' || c == 'L') c = '1';
  const char *at = c == '\0' ? NULL : strchr(CROCKFORD, c);
  return at == NULL ? -1 : (int)(at - CROCKFORD);
}

/* Luhn mod 32 over the group's number and its values, doubling from the rightmost value. */
static int check_character(size_t group_index, const unsigned char *values, size_t n) {
  unsigned sum = 0;
  bool twice = true;
  for (size_t i = n + 1; i-- > 0;) {
    unsigned v = i == 0 ? (unsigned)(group_index % 32) : values[i - 1];
    if (twice) {
      v *= 2;
      v = v / 32 + v % 32;
    }
    sum += v;
    twice = !twice;
  }
  return (int)((32 - sum % 32) % 32);
}

kw_status kw_typed_code_encode(const unsigned char *bytes, size_t len, char **code_out, kw_error *err) {
  if (code_out != NULL) *code_out = NULL;
  if ((bytes == NULL && len > 0) || code_out == NULL)
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "bytes and code_out are required");
  size_t count = (len * 8 + 4) / 5;
  unsigned char *values = malloc(count + 1);
  char *code = malloc(count + 2 * (count / GROUP + 1) + 1);
  if (values == NULL || code == NULL) {
    free(values);
    free(code);
    return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  }
  size_t n = 0;
  unsigned buffer = 0;
  int bits = 0;
  for (size_t i = 0; i < len; i++) {
    buffer = (buffer << 8) | bytes[i];
    bits += 8;
    while (bits >= 5) {
      values[n++] = (unsigned char)((buffer >> (bits - 5)) & 31);
      bits -= 5;
    }
    buffer &= (1u << bits) - 1;
  }
  if (bits > 0) values[n++] = (unsigned char)((buffer << (5 - bits)) & 31);
  size_t o = 0;
  for (size_t g = 0; g * GROUP < n; g++) {
    size_t from = g * GROUP, size = n - from < GROUP ? n - from : GROUP;
    if (g > 0) code[o++] = '-';
    for (size_t i = 0; i < size; i++) code[o++] = CROCKFORD[values[from + i]];
    code[o++] = CROCKFORD[check_character(g, values + from, size)];
  }
  code[o] = '\0';
  free(values);
  *code_out = code;
  kw__clear(err);
  return KW_OK;
}

/* One character as a person would read it in a message: the whole UTF-8 sequence, or an escape. */
static void describe_character(const char *at, char *out, size_t size) {
  unsigned char c = (unsigned char)*at;
  if (c >= 0x80) {
    size_t n = 1;
    while (n < 4 && ((unsigned char)at[n] & 0xC0) == 0x80) n++;
    snprintf(out, size, "\"%.*s\"", (int)n, at);
  } else if (c < 0x20 || c == 0x7f) {
    snprintf(out, size, "\"\\u%04x\"", c);
  } else if (c == '"' || c == '\\') {
    snprintf(out, size, "\"\\%c\"", c);
  } else {
    snprintf(out, size, "\"%c\"", c);
  }
}

/* The bytes of a typed code, malloc'd; NULL with the error (KW_ERR_FORMAT or KW_ERR_NO_MEMORY). */
static unsigned char *decode_typed(const char *text, size_t *len_out, kw_status *st, kw_error *err) {
  size_t text_len = strlen(text);
  unsigned char *values = malloc(text_len + 1);
  if (values == NULL) {
    *st = kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
    return NULL;
  }
  size_t n = 0;
  char why[160];
  for (const char *p = text; *p != '\0'; p++) {
    if (is_space(*p) || *p == '-') continue;
    int v = value_of((unsigned char)*p);
    if (v < 0) {
      int group = (int)(n / (GROUP + 1)) + 1;
      char what[24];
      describe_character(p, what, sizeof what);
      snprintf(why, sizeof why, "character %s in group %d is not one of the code's", what, group);
      free(values);
      *st = bad(err, group, why);
      return NULL;
    }
    values[n++] = (unsigned char)v;
  }
  if (n == 0) {
    free(values);
    *st = bad(err, 0, "the code is empty");
    return NULL;
  }
  /* The checked values, packed in place: each group's payload moves left over its check characters. */
  size_t data = 0;
  for (size_t g = 0, at = 0; at < n; g++, at += GROUP + 1) {
    size_t size = n - at < GROUP + 1 ? n - at : GROUP + 1;
    if (size < 2) {
      snprintf(why, sizeof why, "group %zu is cut short", g + 1);
      free(values);
      *st = bad(err, (int)g + 1, why);
      return NULL;
    }
    if (check_character(g, values + at, size - 1) != values[at + size - 1]) {
      snprintf(why, sizeof why, "group %zu does not check: a character in it is mistyped", g + 1);
      free(values);
      *st = bad(err, (int)g + 1, why);
      return NULL;
    }
    memmove(values + data, values + at, size - 1);
    data += size - 1;
  }
  size_t len = data * 5 / 8;
  unsigned char *out = malloc(len + 1);
  if (out == NULL) {
    free(values);
    *st = kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
    return NULL;
  }
  unsigned buffer = 0;
  int bits = 0;
  size_t o = 0;
  for (size_t i = 0; i < data; i++) {
    buffer = (buffer << 5) | values[i];
    bits += 5;
    if (bits >= 8) {
      if (o < len) out[o] = (unsigned char)((buffer >> (bits - 8)) & 255);
      o++;
      bits -= 8;
    }
    buffer &= (1u << bits) - 1;
  }
  free(values);
  *len_out = len;
  *st = KW_OK;
  return out;
}

kw_status kw_typed_code_decode(const char *text, unsigned char *buf, size_t buf_size, size_t *len_out,
                               kw_error *err) {
  if (len_out != NULL) *len_out = 0;
  if (text == NULL || len_out == NULL || (buf == NULL && buf_size > 0))
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "text and len_out are required");
  kw_status st;
  size_t len = 0;
  unsigned char *bytes = decode_typed(text, &len, &st, err);
  if (bytes == NULL) return st;
  *len_out = len;
  if (len > buf_size) {
    free(bytes);
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "the code holds %zu bytes; buf holds %zu", len, buf_size);
  }
  if (len > 0) memcpy(buf, bytes, len);
  free(bytes);
  kw__clear(err);
  return KW_OK;
}

/* ---- hashes and small forms ---- */

static bool sha256(const void *data, size_t len, unsigned char out[32]) {
  unsigned int n = 0;
  return EVP_Digest(data, len, out, &n, EVP_sha256(), NULL) == 1 && n == 32;
}

static bool fingerprint_hash(const char *fingerprint, unsigned char out[FPH_BYTES]) {
  unsigned char digest[32];
  if (!sha256(fingerprint, strlen(fingerprint), digest)) return false;
  memcpy(out, digest, FPH_BYTES);
  return true;
}

/* SHA-256 of "appKey\nassetNum\ncrmProductId", first bytes: binds an answer to what was asked. */
static bool binding_of(const kw_activation_request *r, unsigned char out[BINDING_BYTES]) {
  size_t a = strlen(r->app_key), s = strlen(r->asset_num), p = strlen(r->crm_product_id);
  char text[sizeof r->app_key + sizeof r->asset_num + sizeof r->crm_product_id];
  memcpy(text, r->app_key, a);
  text[a] = '\n';
  memcpy(text + a + 1, r->asset_num, s);
  text[a + 1 + s] = '\n';
  memcpy(text + a + 2 + s, r->crm_product_id, p);
  unsigned char digest[32];
  if (!sha256(text, a + s + p + 2, digest)) return false;
  memcpy(out, digest, BINDING_BYTES);
  return true;
}

/* "fph1:" and the hash in Crockford base32, no checks: 21 characters. */
static void activated_fingerprint(const unsigned char hash[FPH_BYTES], char out[KW_ACTIVATION_FINGERPRINT_SIZE]) {
  memcpy(out, "fph1:", 5);
  size_t o = 5;
  unsigned buffer = 0;
  int bits = 0;
  for (size_t i = 0; i < FPH_BYTES; i++) {
    buffer = (buffer << 8) | hash[i];
    bits += 8;
    while (bits >= 5) {
      out[o++] = CROCKFORD[(buffer >> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1u << bits) - 1;
  }
  out[o] = '\0'; /* 80 bits: no bits left over */
}

kw_status kw_activation_fingerprint(const char *fingerprint, char *buf, size_t buf_size, kw_error *err) {
  if (fingerprint == NULL || buf == NULL || buf_size < KW_ACTIVATION_FINGERPRINT_SIZE)
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL,
                    "fingerprint is required, and buf of at least KW_ACTIVATION_FINGERPRINT_SIZE bytes");
  unsigned char hash[FPH_BYTES];
  if (!fingerprint_hash(fingerprint, hash)) return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "SHA-256 failed");
  activated_fingerprint(hash, buf);
  kw__clear(err);
  return KW_OK;
}

/* A nonce as an activated lease's JWS names it (activation.nonce): base64url, 11 characters. */
static void nonce_text(const unsigned char nonce[NONCE_BYTES], char out[16]) {
  kw__b64_encode(nonce, NONCE_BYTES, out);
  size_t n = 0;
  for (char *p = out; *p != '\0' && *p != '='; p++) out[n++] = *p == '+' ? '-' : *p == '/' ? '_' : *p;
  out[n] = '\0';
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* A UUID's 16 bytes: 32 hexadecimal digits, dashes anywhere. */
static bool uuid_bytes(const char *id, unsigned char out[16]) {
  size_t n = 0;
  for (const char *p = id; *p != '\0'; p++) {
    if (*p == '-') continue;
    int v = hex_value(*p);
    if (v < 0 || n >= 32) return false;
    if (n % 2 == 0) out[n / 2] = (unsigned char)(v << 4);
    else out[n / 2] |= (unsigned char)v;
    n++;
  }
  return n == 32;
}

static void uuid_text(const unsigned char b[16], char out[37]) {
  snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3],
           b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* Strict UTF-8 (as a fatal decoder reads it: no overlong forms, no surrogates, at most U+10FFFF), no NUL. */
static bool is_utf8(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c == 0) return false;
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t extra;
    uint32_t cp, min;
    if (c >= 0xC2 && c <= 0xDF) extra = 1, cp = c & 0x1F, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF) extra = 2, cp = c & 0x0F, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4) extra = 3, cp = c & 0x07, min = 0x10000;
    else return false;
    for (size_t k = 1; k <= extra; k++) {
      if (i + k >= n || (s[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += extra + 1;
  }
  return true;
}

/* ---- layouts ---- */

typedef struct writer {
  unsigned char data[2 + 2 + 4 + NONCE_BYTES + FPH_BYTES + 3 * 256];
  size_t at;
} writer;

static void put_byte(writer *w, unsigned v) { w->data[w->at++] = (unsigned char)(v & 255); }
static void put_u16(writer *w, unsigned v) {
  put_byte(w, v >> 8);
  put_byte(w, v);
}
static void put_u32(writer *w, uint32_t v) {
  put_byte(w, v >> 24);
  put_byte(w, v >> 16);
  put_byte(w, v >> 8);
  put_byte(w, v);
}
static void put_bytes(writer *w, const unsigned char *b, size_t n) {
  memcpy(w->data + w->at, b, n);
  w->at += n;
}
static void put_text(writer *w, const char *s) {
  size_t n = strlen(s);
  put_byte(w, (unsigned)n);
  put_bytes(w, (const unsigned char *)s, n);
}

typedef struct reader {
  const unsigned char *data;
  size_t len, at;
  const char *what; /* "activation request" … */
  char why[160];    /* the first thing wrong */
} reader;

static bool need(reader *r, size_t n, const char *field) {
  if (r->why[0] != '\0') return false;
  if (r->at + n > r->len) {
    snprintf(r->why, sizeof r->why, "the %s is cut short: %s is missing", r->what, field);
    return false;
  }
  return true;
}
static unsigned get_byte(reader *r, const char *field) { return need(r, 1, field) ? r->data[r->at++] : 0; }
static unsigned get_u16(reader *r, const char *field) {
  unsigned hi = get_byte(r, field);
  return hi << 8 | get_byte(r, field);
}
static uint32_t get_u32(reader *r, const char *field) {
  uint32_t hi = get_u16(r, field);
  return hi << 16 | get_u16(r, field);
}
static void get_bytes(reader *r, unsigned char *out, size_t n, const char *field) {
  if (!need(r, n, field)) return;
  memcpy(out, r->data + r->at, n);
  r->at += n;
}
static void get_text(reader *r, char out[256], const char *field) {
  out[0] = '\0';
  size_t n = get_byte(r, field);
  if (r->why[0] != '\0') return;
  if (n == 0) {
    snprintf(r->why, sizeof r->why, "the %s's %s is empty", r->what, field);
    return;
  }
  if (!need(r, n, field)) return;
  if (!is_utf8(r->data + r->at, n)) {
    snprintf(r->why, sizeof r->why, "the %s's %s is not UTF-8", r->what, field);
    return;
  }
  memcpy(out, r->data + r->at, n);
  out[n] = '\0';
  r->at += n;
}
static void get_end(reader *r) {
  if (r->why[0] == '\0' && r->at != r->len)
    snprintf(r->why, sizeof r->why, "the %s has %zu bytes too many", r->what, r->len - r->at);
}

static const char *kind_name(unsigned kind) {
  switch (kind) {
  case KIND_REQUEST: return "an activation request";
  case KIND_LEASE: return "an activation answer";
  case KIND_RETURN: return "an activation return code";
  }
  return NULL;
}

/* Its kind and version: another kind is named ("this is an activation answer, not …"). */
static void get_header(reader *r, unsigned kind) {
  unsigned found = get_byte(r, "its kind");
  if (r->why[0] != '\0') return;
  if (found != kind) {
    const char *other = kind_name(found);
    if (other == NULL) snprintf(r->why, sizeof r->why, "this is not %s", kind_name(kind));
    else snprintf(r->why, sizeof r->why, "this is %s, not %s", other, kind_name(kind));
    return;
  }
  unsigned version = get_byte(r, "its version");
  if (r->why[0] == '\0' && version != VERSION)
    snprintf(r->why, sizeof r->why, "the %s is of version %u; this reads version %d", r->what, version, VERSION);
}

static kw_status decode_request(const unsigned char *bytes, size_t len, kw_activation_request *out, kw_error *err) {
  reader r = {bytes, len, 0, "activation request", ""};
  kw_activation_request q;
  memset(&q, 0, sizeof q);
  get_header(&r, KIND_REQUEST);
  q.days = (int)get_u16(&r, "days");
  q.created_at_s = get_u32(&r, "its time");
  get_bytes(&r, q.nonce, NONCE_BYTES, "its nonce");
  get_bytes(&r, q.fingerprint_hash, FPH_BYTES, "the machine's fingerprint");
  get_text(&r, q.app_key, "appKey");
  get_text(&r, q.asset_num, "assetNum");
  get_text(&r, q.crm_product_id, "crmProductId");
  get_end(&r);
  if (r.why[0] == '\0' && (q.days < 1 || q.days > KW_ACTIVATION_MAX_DAYS))
    snprintf(r.why, sizeof r.why, "the activation request asks for %d days; 1 to %d are possible", q.days,
             KW_ACTIVATION_MAX_DAYS);
  if (r.why[0] != '\0') return bad(err, 0, r.why);
  *out = q;
  kw__clear(err);
  return KW_OK;
}

typedef struct typed_lease {
  unsigned char kid_prefix[KID_PREFIX_BYTES];
  char lease_id[37];
  uint32_t issued_at, expires_at;
  unsigned exp_bound;
  unsigned char nonce[NONCE_BYTES];
  unsigned char fingerprint_hash[FPH_BYTES];
  unsigned char binding[BINDING_BYTES];
  unsigned char signature[SIGNATURE_BYTES];
} typed_lease;

/* The body and signature of a typed answer, read but not verified; false with why. */
static bool decode_typed_lease(const unsigned char *bytes, size_t len, typed_lease *t, char why[160]) {
  reader r = {bytes, len, 0, "activation answer", ""};
  unsigned char id[16] = {0};
  get_header(&r, KIND_LEASE);
  get_bytes(&r, t->kid_prefix, KID_PREFIX_BYTES, "its key");
  get_bytes(&r, id, 16, "its lease id");
  t->issued_at = get_u32(&r, "its time");
  t->expires_at = get_u32(&r, "its expiry");
  t->exp_bound = get_byte(&r, "its bound");
  get_bytes(&r, t->nonce, NONCE_BYTES, "its request's nonce");
  get_bytes(&r, t->fingerprint_hash, FPH_BYTES, "the machine's fingerprint");
  get_bytes(&r, t->binding, BINDING_BYTES, "what it was asked for");
  get_bytes(&r, t->signature, SIGNATURE_BYTES, "its signature");
  get_end(&r);
  if (r.why[0] == '\0' && t->exp_bound >= sizeof EXP_BOUNDS / sizeof *EXP_BOUNDS)
    snprintf(r.why, sizeof r.why, "the activation answer names an unknown bound");
  uuid_text(id, t->lease_id);
  memcpy(why, r.why, sizeof r.why);
  return r.why[0] == '\0';
}

/* ---- the request ---- */

static bool text_field_ok(const char *s) { return s != NULL && *s != '\0' && strlen(s) <= 255 && is_utf8((const unsigned char *)s, strlen(s)); }

kw_status kw_activation_request_create(const kw_activation_params *params, kw_activation_request *out, kw_error *err) {
  if (params == NULL || out == NULL) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "params and out are required");
  static const char *const names[] = {"app_key", "asset_num", "crm_product_id"};
  const char *texts[] = {params->app_key, params->asset_num, params->crm_product_id};
  for (size_t i = 0; i < 3; i++) {
    if (!text_field_ok(texts[i]))
      return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "params->%s must be 1 to 255 bytes of UTF-8", names[i]);
  }
  if (params->days < 1 || params->days > KW_ACTIVATION_MAX_DAYS)
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "params->days must be 1 to %d, not %d", KW_ACTIVATION_MAX_DAYS,
                    params->days);
  if (params->fingerprint == NULL || *params->fingerprint == '\0')
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "params->fingerprint is required");
  int64_t now = params->now_s != 0 ? params->now_s : kw__realtime_ms() / 1000;
  if (now < 0 || now > (int64_t)UINT32_MAX)
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "params->now_s must be 0 to 2^32-1 seconds");
  kw_activation_request q;
  memset(&q, 0, sizeof q);
  memcpy(q.app_key, params->app_key, strlen(params->app_key) + 1);
  memcpy(q.asset_num, params->asset_num, strlen(params->asset_num) + 1);
  memcpy(q.crm_product_id, params->crm_product_id, strlen(params->crm_product_id) + 1);
  q.days = params->days;
  q.created_at_s = now;
  if (params->nonce != NULL) memcpy(q.nonce, params->nonce, NONCE_BYTES);
  else if (RAND_bytes(q.nonce, NONCE_BYTES) != 1)
    return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "OpenSSL's random generator failed");
  if (!fingerprint_hash(params->fingerprint, q.fingerprint_hash))
    return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "SHA-256 failed");
  *out = q;
  kw__clear(err);
  return KW_OK;
}

kw_status kw_activation_request_code(const kw_activation_request *request, char **code_out, kw_error *err) {
  if (code_out != NULL) *code_out = NULL;
  if (request == NULL || code_out == NULL)
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "request and code_out are required");
  const char *texts[] = {request->app_key, request->asset_num, request->crm_product_id};
  for (size_t i = 0; i < 3; i++) {
    if (memchr(texts[i], '\0', 256) == NULL || !text_field_ok(texts[i]))
      return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "the request's appKey, assetNum and crmProductId must be 1 to 255 bytes of UTF-8");
  }
  if (request->days < 1 || request->days > KW_ACTIVATION_MAX_DAYS || request->created_at_s < 0 ||
      request->created_at_s > (int64_t)UINT32_MAX)
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "the request's days or time is out of range");
  writer w = {.at = 0};
  put_byte(&w, KIND_REQUEST);
  put_byte(&w, VERSION);
  put_u16(&w, (unsigned)request->days);
  put_u32(&w, (uint32_t)request->created_at_s);
  put_bytes(&w, request->nonce, NONCE_BYTES);
  put_bytes(&w, request->fingerprint_hash, FPH_BYTES);
  put_text(&w, request->app_key);
  put_text(&w, request->asset_num);
  put_text(&w, request->crm_product_id);
  return kw_typed_code_encode(w.data, w.at, code_out, err);
}

/* As JavaScript's toISOString: 2027-01-15T07:50:00.000Z. */
static void iso_time(int64_t seconds, char out[32]) {
  time_t t = (time_t)seconds;
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, 32, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
}

kw_status kw_activation_request_file(const kw_activation_request *request, char **json_out, kw_error *err) {
  if (json_out != NULL) *json_out = NULL;
  if (json_out == NULL) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "json_out is required");
  char *code = NULL;
  kw_status st = kw_activation_request_code(request, &code, err);
  if (st != KW_OK) return st;
  char created[32];
  iso_time(request->created_at_s, created);
  cJSON *file = cJSON_CreateObject();
  bool built = file != NULL && cJSON_AddStringToObject(file, "keyward", "activation-request") != NULL &&
               cJSON_AddNumberToObject(file, "version", VERSION) != NULL &&
               cJSON_AddStringToObject(file, "code", code) != NULL &&
               cJSON_AddStringToObject(file, "appKey", request->app_key) != NULL &&
               cJSON_AddStringToObject(file, "assetNum", request->asset_num) != NULL &&
               cJSON_AddStringToObject(file, "crmProductId", request->crm_product_id) != NULL &&
               cJSON_AddNumberToObject(file, "days", request->days) != NULL &&
               cJSON_AddStringToObject(file, "createdAt", created) != NULL;
  char *printed = built ? cJSON_PrintUnformatted(file) : NULL;
  char *json = kw__strdup(printed); /* the caller frees it with kw_string_free, whatever cJSON's allocator */
  cJSON_free(printed);
  cJSON_Delete(file);
  kw_string_free(code);
  if (json == NULL) return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  *json_out = json;
  kw__clear(err);
  return KW_OK;
}

/* Leading and trailing whitespace dropped: [*start, *start + *len). */
static void trim(const char *text, const char **start, size_t *len) {
  const char *s = text;
  while (is_space(*s)) s++;
  size_t n = strlen(s);
  while (n > 0 && is_space(s[n - 1])) n--;
  *start = s;
  *len = n;
}

static kw_status request_from_code(const char *code, kw_activation_request *out, kw_error *err) {
  kw_status st;
  size_t len = 0;
  unsigned char *bytes = decode_typed(code, &len, &st, err);
  if (bytes == NULL) return st;
  st = decode_request(bytes, len, out, err);
  free(bytes);
  return st;
}

kw_status kw_activation_request_read(const char *text, kw_activation_request *out, kw_error *err) {
  if (text == NULL || out == NULL) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "text and out are required");
  const char *start;
  size_t len;
  trim(text, &start, &len);
  if (len > MAX_TEXT_BYTES) return bad(err, 0, "longer than any activation request");
  if (len > 0 && start[0] == '{') {
    cJSON *file = cJSON_ParseWithLength(start, len);
    if (file == NULL) return bad(err, 0, "the request file is not JSON");
    const char *keyward = kw__json_string(file, "keyward");
    const char *code = kw__json_string(file, "code");
    kw_status st = keyward == NULL || strcmp(keyward, "activation-request") != 0 || code == NULL
                       ? bad(err, 0, "the file is not a Keyward activation request")
                       : request_from_code(code, out, err);
    cJSON_Delete(file);
    return st;
  }
  char *code = malloc(len + 1);
  if (code == NULL) return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  memcpy(code, start, len);
  code[len] = '\0';
  kw_status st = request_from_code(code, out, err);
  free(code);
  return st;
}

kw_status kw_activation_request_save(const kw_activation_request *request, const char *path, kw_error *err) {
  if (path == NULL) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "path is required");
  char *json = NULL;
  kw_status st = kw_activation_request_file(request, &json, err);
  if (st != KW_OK) return st;
  /* One line of JSON, nothing after it: the file is sent to Keyward as it is. */
  st = kw__write_file_atomic(path, json, strlen(json), 0600, err);
  kw_string_free(json);
  if (st == KW_OK) kw__clear(err);
  return st;
}

kw_status kw_activation_request_load(const char *path, kw_activation_request *out, kw_error *err) {
  if (path == NULL || out == NULL) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "path and out are required");
  char *text = NULL;
  kw_status st = kw__read_file(path, MAX_TEXT_BYTES, &text, NULL, err);
  if (st != KW_OK) return st;
  st = kw_activation_request_read(text, out, err);
  free(text);
  if (st == KW_ERR_FORMAT && err != NULL) {
    char message[sizeof err->message];
    kw__copy_text(message, sizeof message, err->message);
    snprintf(err->message, sizeof err->message, "%.200s: %.300s", path, message);
  }
  return st;
}

/* ---- the answer ---- */

static kw_status verify_typed(const kw_jwks *jwks, const char *code, const kw_activation_request *request,
                              const char *fingerprint, int64_t now_s, kw_activated_lease *out, kw_error *err) {
  kw_status st;
  size_t len = 0;
  unsigned char *bytes = decode_typed(code, &len, &st, err);
  if (bytes == NULL) {
    if (st != KW_ERR_FORMAT) return st;
    int group = err != NULL ? err->group : 0;
    char why[sizeof err->message];
    kw__copy_text(why, sizeof why, err != NULL ? err->message : "the code does not read");
    refuse(err, KW_REASON_MALFORMED, why);
    if (err != NULL) err->group = group;
    return KW_ERR_LEASE_REFUSED;
  }
  typed_lease t;
  char why[160];
  bool read = decode_typed_lease(bytes, len, &t, why);
  if (!read) {
    free(bytes);
    return refuse(err, KW_REASON_MALFORMED, why);
  }
  /* The signature covers the label and the 55 bytes of the body. */
  unsigned char signed_text[sizeof LABEL - 1 + TYPED_BODY_BYTES];
  memcpy(signed_text, LABEL, sizeof LABEL - 1);
  memcpy(signed_text + sizeof LABEL - 1, bytes, TYPED_BODY_BYTES);
  free(bytes);
  int verdict = kw__jwks_verify_prefixed(jwks, t.kid_prefix, signed_text, sizeof signed_text, t.signature);
  if (verdict == 0) return refuse(err, KW_REASON_UNKNOWN_KEY, "no key of the key set signed it");
  if (verdict == 1) return refuse(err, KW_REASON_SIGNATURE, "its signature does not verify");
  if ((int64_t)t.issued_at > now_s) return refuse(err, KW_REASON_NOT_YET_VALID, "it is dated in the future");
  if ((int64_t)t.expires_at <= now_s) return refuse(err, KW_REASON_EXPIRED, "it has expired");
  unsigned char binding[BINDING_BYTES], hash[FPH_BYTES];
  if (!binding_of(request, binding) || !fingerprint_hash(fingerprint, hash))
    return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "SHA-256 failed");
  if (memcmp(t.nonce, request->nonce, NONCE_BYTES) != 0 || memcmp(t.binding, binding, BINDING_BYTES) != 0)
    return refuse(err, KW_REASON_REQUEST, "it answers another activation request");
  if (memcmp(t.fingerprint_hash, hash, FPH_BYTES) != 0)
    return refuse(err, KW_REASON_FINGERPRINT, "it was activated for another machine");
  if (out != NULL) {
    memset(out, 0, sizeof *out);
    memcpy(out->lease_id, t.lease_id, sizeof out->lease_id);
    out->issued_at_s = t.issued_at;
    out->expires_at_s = t.expires_at;
    kw__copy_text(out->exp_bound, sizeof out->exp_bound, EXP_BOUNDS[t.exp_bound]);
    kw__copy_text(out->asset_num, sizeof out->asset_num, request->asset_num);
    kw__copy_text(out->crm_product_id, sizeof out->crm_product_id, request->crm_product_id);
    kw__copy_text(out->app_key, sizeof out->app_key, request->app_key);
  }
  kw__clear(err);
  return KW_OK;
}

static kw_status verify_jws(const kw_jwks *jwks, const char *token, const kw_activation_request *request,
                            const char *fingerprint, int64_t now_ms, kw_activated_lease *out, kw_error *err) {
  char fph[KW_ACTIVATION_FINGERPRINT_SIZE];
  kw_status st = kw_activation_fingerprint(fingerprint, fph, sizeof fph, err);
  if (st != KW_OK) return st;
  kw_claims *claims = NULL;
  st = kw_verify_lease(jwks, token, fph, request->app_key, now_ms, &claims, err);
  if (st == KW_ERR_LEASE_REFUSED && err != NULL && strncmp(err->message, "lease refused", 13) == 0) {
    char why[sizeof err->message];
    kw__copy_text(why, sizeof why, err->message + 13);
    snprintf(err->message, sizeof err->message, "activation refused%.490s", why);
  }
  if (st != KW_OK) return st;
  /* Signed by a Keyward key, for this machine and app: does it answer this very request? */
  cJSON *payload = cJSON_Parse(claims->payload_json);
  if (payload == NULL) {
    kw_claims_free(claims);
    return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  }
  char nonce[16];
  nonce_text(request->nonce, nonce);
  const char *their_nonce = kw__json_string(cJSON_GetObjectItemCaseSensitive(payload, "activation"), "nonce");
  bool same = their_nonce != NULL && strcmp(their_nonce, nonce) == 0 && claims->asset_num != NULL &&
              strcmp(claims->asset_num, request->asset_num) == 0 && claims->product.crm_product_id != NULL &&
              strcmp(claims->product.crm_product_id, request->crm_product_id) == 0;
  cJSON_Delete(payload);
  if (!same) {
    kw_claims_free(claims);
    return refuse(err, KW_REASON_REQUEST, "it answers another activation request");
  }
  if (out != NULL) {
    memset(out, 0, sizeof *out);
    kw__copy_text(out->lease_id, sizeof out->lease_id, claims->sub);
    out->issued_at_s = claims->iat_s;
    out->expires_at_s = claims->exp_s;
    kw__copy_text(out->exp_bound, sizeof out->exp_bound, claims->exp_bound ? claims->exp_bound : "offline-days");
    kw__copy_text(out->asset_num, sizeof out->asset_num, claims->asset_num);
    kw__copy_text(out->crm_product_id, sizeof out->crm_product_id, request->crm_product_id);
    kw__copy_text(out->app_key, sizeof out->app_key, request->app_key);
  }
  kw_claims_free(claims);
  kw__clear(err);
  return KW_OK;
}

kw_status kw_verify_activation(const kw_jwks *jwks, const char *answer, const kw_activation_request *request,
                               const char *fingerprint, int64_t now_ms, kw_activated_lease *out, kw_error *err) {
  if (out != NULL) memset(out, 0, sizeof *out);
  if (jwks == NULL || answer == NULL || request == NULL || fingerprint == NULL)
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "jwks, answer, request and fingerprint are required");
  if (memchr(request->app_key, '\0', sizeof request->app_key) == NULL ||
      memchr(request->asset_num, '\0', sizeof request->asset_num) == NULL ||
      memchr(request->crm_product_id, '\0', sizeof request->crm_product_id) == NULL)
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "the request's texts are not NUL-terminated");
  if (now_ms == 0) now_ms = kw__realtime_ms();
  int64_t now_s = now_ms >= 0 ? now_ms / 1000 : -((-now_ms + 999) / 1000);
  const char *start;
  size_t len;
  trim(answer, &start, &len);
  if (len > MAX_TEXT_BYTES) return refuse(err, KW_REASON_MALFORMED, "longer than any activation answer");
  char *text = malloc(len + 1);
  if (text == NULL) return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  memcpy(text, start, len);
  text[len] = '\0';
  char *lease = text; /* the typed code or the JWS */
  cJSON *file = NULL;
  if (text[0] == '{') {
    file = cJSON_Parse(text);
    const char *keyward = kw__json_string(file, "keyward");
    lease = (char *)kw__json_string(file, "lease");
    if (file == NULL || keyward == NULL || strcmp(keyward, "activation-answer") != 0 || lease == NULL) {
      kw_status st = refuse(err, KW_REASON_MALFORMED,
                            file == NULL ? "the answer file is not JSON" : "the file is not a Keyward activation answer");
      cJSON_Delete(file);
      free(text);
      return st;
    }
  }
  size_t dots = 0;
  for (const char *p = lease; *p != '\0'; p++) dots += *p == '.';
  kw_status st = dots == 2 ? verify_jws(jwks, lease, request, fingerprint, now_ms, out, err)
                           : verify_typed(jwks, lease, request, fingerprint, now_s, out, err);
  cJSON_Delete(file);
  free(text);
  return st;
}

/* ---- the return code ---- */

kw_status kw_activation_return_code(const kw_activation_request *request, const char *lease_id, char **code_out,
                                    kw_error *err) {
  if (code_out != NULL) *code_out = NULL;
  if (request == NULL || lease_id == NULL || code_out == NULL)
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "request, lease_id and code_out are required");
  unsigned char id[16];
  if (!uuid_bytes(lease_id, id))
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "%.64s is not a lease id", lease_id);
  unsigned char bytes[2 + 16 + NONCE_BYTES + FPH_BYTES];
  bytes[0] = KIND_RETURN;
  bytes[1] = VERSION;
  memcpy(bytes + 2, id, 16);
  memcpy(bytes + 18, request->nonce, NONCE_BYTES);
  memcpy(bytes + 18 + NONCE_BYTES, request->fingerprint_hash, FPH_BYTES);
  return kw_typed_code_encode(bytes, sizeof bytes, code_out, err);
}
