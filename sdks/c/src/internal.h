/* Internal to libkeyward: not installed, not part of the ABI. Tests link the static library and may use it. */
#ifndef KEYWARD_INTERNAL_H
#define KEYWARD_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "keyward.h"

#if defined(__GNUC__)
#  define KW_INTERNAL __attribute__((visibility("hidden")))
#  define KW_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#  define KW_INTERNAL
#  define KW_PRINTF(a, b)
#endif

/* ---- errors ---- */

/** Fills err (when not NULL) and answers status. code may be NULL (empty). */
KW_INTERNAL kw_status kw__fail(kw_error *err, kw_status status, const char *code, const char *fmt, ...)
    KW_PRINTF(4, 5);
KW_INTERNAL void kw__clear(kw_error *err);
KW_INTERNAL void kw__copy_text(char *dst, size_t dst_size, const char *src);

/* ---- base64 ---- */

/** Strict base64url without padding (RFC 7515 §2): NULL when any character or length is wrong. */
KW_INTERNAL unsigned char *kw__b64url_decode(const char *in, size_t len, size_t *out_len);
/** Standard base64 (RFC 4648 §4), padding optional: NULL when malformed. */
KW_INTERNAL unsigned char *kw__b64_decode(const char *in, size_t len, size_t *out_len);
/** Standard base64 with padding, NUL-terminated; out must hold 4*ceil(len/3)+1 bytes. */
KW_INTERNAL void kw__b64_encode(const unsigned char *in, size_t len, char *out);

/* ---- JSON helpers ---- */

/** The string member, or NULL when absent or not a string. */
KW_INTERNAL const char *kw__json_string(const cJSON *object, const char *name);
/** The member as an int64 when it is a number with an integral value; KW_UNSET otherwise. */
KW_INTERNAL int64_t kw__json_int(const cJSON *object, const char *name);
KW_INTERNAL char *kw__strdup(const char *s);

/* ---- time ---- */

KW_INTERNAL int64_t kw__realtime_ms(void);
KW_INTERNAL int64_t kw__monotonic_ms(void);

/* ---- files ---- */

KW_INTERNAL kw_status kw__write_file_atomic(const char *path, const char *data, size_t len, unsigned mode,
                                            kw_error *err);
KW_INTERNAL kw_status kw__read_file(const char *path, size_t max, char **out, size_t *out_len, kw_error *err);

/* ---- session and HTTP ---- */

typedef int64_t (*kw__clock_fn)(void);
typedef void (*kw__sleep_fn)(long ms);

struct kw_session {
  char *base_url; /* without a trailing slash */
  char *app_key;
  char *app_secret;
  char *scope;
  char *ca_file;
  long timeout_ms;

  pthread_mutex_t lock; /* guards everything below but token_lock's section */
  int refs;
  kw_error last_error;
  char *token;
  int64_t renew_at_ms; /* on clock_ms */
  kw__clock_fn clock_ms;

  pthread_mutex_t token_lock; /* held while a token is obtained: concurrent callers share one request */

  CURLSH *share;
  pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];

  kw_retry_policy retry; /* under lock */
  kw__sleep_fn sleep_ms; /* waits between attempts; tests record instead */
};

typedef struct kw__http_answer {
  long status;
  char *body;
  size_t len;
  char request_id[136];
  bool json; /* Content-Type application/json */
  long retry_after_ms; /* the answer's Retry-After; -1: none */
  bool permanent;      /* no answer, and none will come by asking again (a certificate not trusted) */
} kw__http_answer;

/* kw__http's flags. */
/* A connection of its own: libcurl resends a request whose reused connection died before an
   answer by itself, with the same g_nonce, which the server refuses for a consume (70001). */
#define KW__HTTP_FRESH_CONNECTION 1u

KW_INTERNAL void kw__answer_free(kw__http_answer *answer);

/** One HTTP request; headers is NULL-terminated (may be NULL). body NULL for GET. */
KW_INTERNAL kw_status kw__http(kw_session *session, const char *method, const char *url,
                               const char *const *headers, const char *body, size_t body_len,
                               unsigned flags, kw__http_answer *answer, kw_error *err);

/**
 * A runtime call: POST base_url + path with a JSON body, the app token and a fresh g_nonce;
 * answers the envelope's data (detached, caller frees) on code 0. Retries once on 60000 when the
 * token was not obtained for this call, and as the session's kw_retry_policy says on no answer,
 * 429 and 503. idempotency_key (may be NULL) goes with every attempt, on a connection of its own.
 */
KW_INTERNAL kw_status kw__session_post(kw_session *session, const char *path, const cJSON *body,
                                       const char *user_token, const char *idempotency_key, cJSON **data,
                                       kw_error *err);
KW_INTERNAL void kw__session_record(kw_session *session, const kw_error *err);
KW_INTERNAL void kw__session_retain(kw_session *session);
KW_INTERNAL void kw__session_release(kw_session *session);
/** A fresh nonce: 32 hex digits from OpenSSL's CSPRNG. out holds 33 bytes. */
KW_INTERNAL bool kw__nonce(char out[33]);

/**
 * A typed activation answer's signature: the first key of the set whose kid, base64url-decoded,
 * starts with prefix verifies sig over msg. 0: no such key; 1: the signature does not verify; 2: it does.
 */
KW_INTERNAL int kw__jwks_verify_prefixed(const kw_jwks *jwks, const unsigned char prefix[4], const unsigned char *msg,
                                         size_t len, const unsigned char sig[64]);

/** Tests and the benchmark: whether the key set remembers the signatures it verified (on by default). */
KW_INTERNAL void kw__jwks_remember(kw_jwks *jwks, bool on);

/** Tests: the clock the token's renewal is judged by (monotonic milliseconds). */
KW_INTERNAL void kw__session_set_clock(kw_session *session, kw__clock_fn clock_ms);
/* Replaces how the session waits between attempts (NULL: nanosleep), for the tests. */
KW_INTERNAL void kw__session_set_sleep(kw_session *session, kw__sleep_fn sleep_ms);

#endif
