/* The library's start, the session (app token, nonces, envelopes) and HTTP over libcurl. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>
#ifdef KEYWARD_HAVE_SODIUM
#  include <sodium.h>
#endif

#include "internal.h"

#define MAX_ANSWER_BYTES (4u << 20)
#define DEFAULT_TIMEOUT_MS 30000L

/* ---- library ---- */

kw_status kw_global_init(kw_error *err) {
  if (OPENSSL_init_crypto(0, NULL) != 1) return kw__fail(err, KW_ERR_INIT, NULL, "OpenSSL did not start");
#ifdef KEYWARD_HAVE_SODIUM
  if (sodium_init() < 0) return kw__fail(err, KW_ERR_INIT, NULL, "libsodium did not start");
#endif
  CURLcode c = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (c != CURLE_OK) return kw__fail(err, KW_ERR_INIT, NULL, "libcurl did not start: %s", curl_easy_strerror(c));
  kw__clear(err);
  return KW_OK;
}

void kw_global_cleanup(void) { curl_global_cleanup(); }

const char *kw_version(void) { return KW_VERSION; }

/* ---- session ---- */

static void share_lock(CURL *handle, curl_lock_data data, curl_lock_access access, void *user) {
  (void)handle;
  (void)access;
  kw_session *s = user;
  pthread_mutex_lock(&s->share_locks[data]);
}

static void share_unlock(CURL *handle, curl_lock_data data, void *user) {
  (void)handle;
  kw_session *s = user;
  pthread_mutex_unlock(&s->share_locks[data]);
}

static bool printable_url(const char *url) {
  return strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0;
}

kw_status kw_session_new(const char *base_url, const char *app_key, const char *app_secret, kw_session **out,
                         kw_error *err) {
  if (out == NULL) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "out is required");
  *out = NULL;
  if (base_url == NULL || app_key == NULL || app_secret == NULL || *app_key == '\0' || *app_secret == '\0')
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "base_url, app_key and app_secret are required");
  if (!printable_url(base_url))
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "base_url must start with http:// or https://");
  kw_session *s = calloc(1, sizeof *s);
  if (s == NULL) return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  s->base_url = kw__strdup(base_url);
  s->app_key = kw__strdup(app_key);
  s->app_secret = kw__strdup(app_secret);
  s->timeout_ms = DEFAULT_TIMEOUT_MS;
  s->refs = 1;
  s->clock_ms = kw__monotonic_ms;
  s->retry = (kw_retry_policy)KW_RETRY_POLICY_DEFAULT;
  s->sleep_ms = NULL;
  pthread_mutex_init(&s->lock, NULL);
  pthread_mutex_init(&s->token_lock, NULL);
  for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_init(&s->share_locks[i], NULL);
  s->share = curl_share_init();
  if (s->base_url == NULL || s->app_key == NULL || s->app_secret == NULL || s->share == NULL) {
    kw__session_release(s);
    return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  }
  size_t n = strlen(s->base_url);
  while (n > 0 && s->base_url[n - 1] == '/') s->base_url[--n] = '\0';
  /* Connections, DNS and TLS sessions are shared by every call of the session, whichever thread. */
  curl_share_setopt(s->share, CURLSHOPT_LOCKFUNC, share_lock);
  curl_share_setopt(s->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
  curl_share_setopt(s->share, CURLSHOPT_USERDATA, s);
  curl_share_setopt(s->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  curl_share_setopt(s->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  curl_share_setopt(s->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
  *out = s;
  kw__clear(err);
  return KW_OK;
}

static kw_status set_text(kw_session *s, char **field, const char *value, kw_error *err) {
  if (s == NULL) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "session is required");
  char *copy = NULL;
  if (value != NULL && (copy = kw__strdup(value)) == NULL) return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  pthread_mutex_lock(&s->lock);
  free(*field);
  *field = copy;
  pthread_mutex_unlock(&s->lock);
  kw__clear(err);
  return KW_OK;
}

kw_status kw_session_set_scope(kw_session *session, const char *scope, kw_error *err) {
  return set_text(session, session == NULL ? NULL : &session->scope, scope, err);
}

kw_status kw_session_set_ca_file(kw_session *session, const char *path, kw_error *err) {
  return set_text(session, session == NULL ? NULL : &session->ca_file, path, err);
}

kw_status kw_session_set_timeout_ms(kw_session *session, long timeout_ms, kw_error *err) {
  if (session == NULL || timeout_ms <= 0)
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "a session and a positive timeout are required");
  pthread_mutex_lock(&session->lock);
  session->timeout_ms = timeout_ms;
  pthread_mutex_unlock(&session->lock);
  kw__clear(err);
  return KW_OK;
}

kw_status kw_session_set_retry_policy(kw_session *session, const kw_retry_policy *policy, kw_error *err) {
  if (session == NULL || policy == NULL)
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "a session and a policy are required");
  if (policy->max_attempts < 1 || policy->initial_backoff_ms < 0 || policy->max_backoff_ms < 0 ||
      policy->max_retry_after_ms < 0 || policy->max_elapsed_ms < 0)
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "max_attempts must be at least 1, the durations not negative");
  pthread_mutex_lock(&session->lock);
  session->retry = *policy;
  pthread_mutex_unlock(&session->lock);
  kw__clear(err);
  return KW_OK;
}

void kw_session_get_retry_policy(const kw_session *session, kw_retry_policy *out) {
  if (out == NULL) return;
  if (session == NULL) {
    *out = (kw_retry_policy)KW_RETRY_POLICY_DEFAULT;
    return;
  }
  kw_session *s = (kw_session *)session;
  pthread_mutex_lock(&s->lock);
  *out = s->retry;
  pthread_mutex_unlock(&s->lock);
}

void kw__session_set_sleep(kw_session *session, kw__sleep_fn sleep_ms) {
  pthread_mutex_lock(&session->lock);
  session->sleep_ms = sleep_ms;
  pthread_mutex_unlock(&session->lock);
}

void kw__session_set_clock(kw_session *session, kw__clock_fn clock_ms) {
  pthread_mutex_lock(&session->lock);
  session->clock_ms = clock_ms == NULL ? kw__monotonic_ms : clock_ms;
  pthread_mutex_unlock(&session->lock);
}

void kw__session_retain(kw_session *session) {
  pthread_mutex_lock(&session->lock);
  session->refs++;
  pthread_mutex_unlock(&session->lock);
}

void kw__session_release(kw_session *s) {
  if (s == NULL) return;
  pthread_mutex_lock(&s->lock);
  int left = --s->refs;
  pthread_mutex_unlock(&s->lock);
  if (left > 0) return;
  if (s->share != NULL) curl_share_cleanup(s->share);
  for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_destroy(&s->share_locks[i]);
  pthread_mutex_destroy(&s->token_lock);
  pthread_mutex_destroy(&s->lock);
  if (s->app_secret != NULL) OPENSSL_cleanse(s->app_secret, strlen(s->app_secret));
  if (s->token != NULL) OPENSSL_cleanse(s->token, strlen(s->token));
  free(s->base_url);
  free(s->app_key);
  free(s->app_secret);
  free(s->scope);
  free(s->ca_file);
  free(s->token);
  free(s);
}

void kw_session_free(kw_session *session) { kw__session_release(session); }

void kw__session_record(kw_session *session, const kw_error *err) {
  if (session == NULL || err == NULL) return;
  pthread_mutex_lock(&session->lock);
  session->last_error = *err;
  pthread_mutex_unlock(&session->lock);
}

void kw_session_last_error(const kw_session *session, kw_error *out) {
  if (out == NULL) return;
  if (session == NULL) {
    kw__clear(out);
    return;
  }
  kw_session *s = (kw_session *)session;
  pthread_mutex_lock(&s->lock);
  *out = s->last_error;
  pthread_mutex_unlock(&s->lock);
}

kw_status kw_new_idempotency_key(char out[KW_IDEMPOTENCY_KEY_SIZE], kw_error *err) {
  if (out == NULL) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "out is required");
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return kw__fail(err, KW_ERR_INIT, NULL, "OpenSSL's random generator failed");
  char padded[25]; /* base64 of 16 bytes: 22 characters and "==" */
  kw__b64_encode(bytes, sizeof bytes, padded);
  for (size_t i = 0; i < 22; i++) out[i] = padded[i] == '+' ? '-' : padded[i] == '/' ? '_' : padded[i];
  out[22] = '\0';
  kw__clear(err);
  return KW_OK;
}

bool kw__nonce(char out[33]) {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return false;
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < sizeof bytes; i++) {
    out[2 * i] = hex[bytes[i] >> 4];
    out[2 * i + 1] = hex[bytes[i] & 15];
  }
  out[32] = '\0';
  return true;
}

/* ---- HTTP ---- */

typedef struct sink {
  char *data;
  size_t len, cap;
  bool too_big;
} sink;

static size_t on_body(char *chunk, size_t size, size_t count, void *user) {
  sink *b = user;
  size_t n = size * count;
  if (b->len + n + 1 > MAX_ANSWER_BYTES) {
    b->too_big = true;
    return 0;
  }
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap == 0 ? 4096 : b->cap;
    while (cap < b->len + n + 1) cap *= 2;
    char *bigger = realloc(b->data, cap);
    if (bigger == NULL) return 0;
    b->data = bigger;
    b->cap = cap;
  }
  memcpy(b->data + b->len, chunk, n);
  b->len += n;
  b->data[b->len] = '\0';
  return n;
}

static size_t on_header(char *line, size_t size, size_t count, void *user) {
  kw__http_answer *a = user;
  size_t n = size * count;
  static const char rid[] = "x-request-id:";
  static const char ctype[] = "content-type:";
  static const char retry_after[] = "retry-after:";
  if (n > sizeof retry_after - 1 && strncasecmp(line, retry_after, sizeof retry_after - 1) == 0) {
    /* Delta-seconds, or an HTTP date. */
    char value[64];
    size_t len = n - (sizeof retry_after - 1);
    const char *v = line + sizeof retry_after - 1;
    while (len > 0 && (*v == ' ' || *v == '\t')) v++, len--;
    while (len > 0 && (v[len - 1] == '\r' || v[len - 1] == '\n' || v[len - 1] == ' ')) len--;
    if (len > 0 && len < sizeof value) {
      memcpy(value, v, len);
      value[len] = '\0';
      /* Held to KW_RETRY_AFTER_MAX_MS, so the milliseconds fit a 32-bit long (Windows). */
      const unsigned long max_s = (unsigned long)(KW_RETRY_AFTER_MAX_MS / 1000L);
      if (strspn(value, "0123456789") == len) {
        unsigned long seconds = len > 7 ? max_s : strtoul(value, NULL, 10);
        a->retry_after_ms = (long)(seconds < max_s ? seconds : max_s) * 1000L;
      } else {
        time_t when = curl_getdate(value, NULL);
        time_t now = time(NULL);
        if (when != (time_t)-1)
          a->retry_after_ms = when <= now ? 0L
                              : (unsigned long)(when - now) < max_s ? (long)(when - now) * 1000L
                                                                     : (long)max_s * 1000L;
      }
    }
  } else if (n > sizeof rid - 1 && strncasecmp(line, rid, sizeof rid - 1) == 0) {
    const char *v = line + sizeof rid - 1;
    size_t len = n - (sizeof rid - 1);
    while (len > 0 && (*v == ' ' || *v == '\t')) v++, len--;
    while (len > 0 && (v[len - 1] == '\r' || v[len - 1] == '\n' || v[len - 1] == ' ')) len--;
    if (len >= sizeof a->request_id) len = sizeof a->request_id - 1;
    memcpy(a->request_id, v, len);
    a->request_id[len] = '\0';
  } else if (n > sizeof ctype - 1 && strncasecmp(line, ctype, sizeof ctype - 1) == 0) {
    /* application/json; charset=utf-8 */
    const char *v = line + sizeof ctype - 1;
    while (*v == ' ' || *v == '\t') v++;
    a->json = strncasecmp(v, "application/json", 16) == 0;
  } else if (n >= 5 && strncmp(line, "HTTP/", 5) == 0) {
    /* A new status line (after a 100 Continue, say): forget the previous answer's headers. */
    a->request_id[0] = '\0';
    a->json = false;
    a->retry_after_ms = -1;
  }
  return n;
}

void kw__answer_free(kw__http_answer *answer) {
  if (answer == NULL) return;
  free(answer->body);
  memset(answer, 0, sizeof *answer);
}

kw_status kw__http(kw_session *s, const char *method, const char *url, const char *const *headers, const char *body,
                   size_t body_len, unsigned flags, kw__http_answer *answer, kw_error *err) {
  memset(answer, 0, sizeof *answer);
  answer->retry_after_ms = -1;
  CURL *curl = curl_easy_init();
  if (curl == NULL) return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "libcurl could not make a handle");
  struct curl_slist *list = NULL;
  for (const char *const *h = headers; h != NULL && *h != NULL; h++) {
    struct curl_slist *more = curl_slist_append(list, *h);
    if (more == NULL) {
      curl_slist_free_all(list);
      curl_easy_cleanup(curl);
      return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
    }
    list = more;
  }
  /* No 100-continue round trip for our small bodies. */
  struct curl_slist *more = curl_slist_append(list, "Expect:");
  if (more != NULL) list = more;

  pthread_mutex_lock(&s->lock);
  long timeout_ms = s->timeout_ms;
  char *ca_file = kw__strdup(s->ca_file);
  pthread_mutex_unlock(&s->lock);

  sink b = {0};
  char errbuf[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(curl, CURLOPT_URL, url);
  curl_easy_setopt(curl, CURLOPT_SHARE, s->share);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms < 10000 ? timeout_ms : 10000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM for timeouts */
#if LIBCURL_VERSION_NUM >= 0x075500 /* 7.85 */
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "keyward-c/" KW_VERSION);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &b);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, answer);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  if (ca_file != NULL) curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file);
  if (flags & KW__HTTP_FRESH_CONNECTION) curl_easy_setopt(curl, CURLOPT_FRESH_CONNECT, 1L);
  if (strcmp(method, "POST") == 0) {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body == NULL ? "" : body);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body == NULL ? 0 : body_len));
  } else {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  }
  CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(list);
  curl_easy_cleanup(curl);
  free(ca_file);

  if (rc != CURLE_OK) {
    free(b.data);
    /* Asking again changes nothing when the server's certificate is not trusted or the URL is wrong. */
    answer->permanent = rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
                        rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL;
    if (b.too_big)
      return kw__fail(err, KW_ERR_PROTOCOL, "", "the answer of %s is larger than %u bytes", s->base_url, MAX_ANSWER_BYTES);
    return kw__fail(err, KW_ERR_NETWORK, "network", "cannot reach %s: %s", s->base_url,
                    errbuf[0] != '\0' ? errbuf : curl_easy_strerror(rc));
  }
  answer->status = status;
  answer->body = b.data;
  answer->len = b.len;
  if (answer->body == NULL) {
    answer->body = calloc(1, 1);
    if (answer->body == NULL) return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  }
  return KW_OK;
}

/* ---- the token ---- */

/* "Basic base64(urlencode(key):urlencode(secret))" (RFC 6749 §2.3.1). */
static char *basic_header(const char *key, const char *secret) {
  char *k = curl_easy_escape(NULL, key, 0);
  char *v = curl_easy_escape(NULL, secret, 0);
  char *out = NULL;
  if (k != NULL && v != NULL) {
    size_t n = strlen(k) + 1 + strlen(v);
    char *pair = malloc(n + 1);
    out = malloc(sizeof "Authorization: Basic " + (n + 2) / 3 * 4 + 1);
    if (pair != NULL && out != NULL) {
      snprintf(pair, n + 1, "%s:%s", k, v);
      strcpy(out, "Authorization: Basic ");
      kw__b64_encode((const unsigned char *)pair, n, out + strlen(out));
      OPENSSL_cleanse(pair, n);
    } else {
      free(out);
      out = NULL;
    }
    free(pair);
  }
  if (v != NULL) OPENSSL_cleanse(v, strlen(v));
  curl_free(k);
  curl_free(v);
  return out;
}

/* The longest an app token is kept, in seconds, whatever its expires_in. */
#define KW__TOKEN_LIFETIME_MAX_S ((int64_t)86400)

/* POST /oauth2/token with the client credentials: the token and its lifetime in seconds. */
static kw_status request_token(kw_session *s, char **token, int64_t *expires_in, kw_error *err) {
  pthread_mutex_lock(&s->lock);
  char *scope = s->scope == NULL ? NULL : curl_easy_escape(NULL, s->scope, 0);
  pthread_mutex_unlock(&s->lock);
  char form[1024];
  int n = scope == NULL ? snprintf(form, sizeof form, "grant_type=client_credentials")
                        : snprintf(form, sizeof form, "grant_type=client_credentials&scope=%s", scope);
  curl_free(scope);
  if (n < 0 || (size_t)n >= sizeof form) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "the scope is too long");
  char *auth = basic_header(s->app_key, s->app_secret);
  if (auth == NULL) return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  const char *headers[] = {auth, "Content-Type: application/x-www-form-urlencoded", "Accept: application/json", NULL};
  char url[2048];
  snprintf(url, sizeof url, "%s/oauth2/token", s->base_url);
  kw__http_answer a;
  kw_status st = kw__http(s, "POST", url, headers, form, (size_t)n, 0u, &a, err);
  OPENSSL_cleanse(auth, strlen(auth));
  free(auth);
  if (st != KW_OK) return st;
  cJSON *json = cJSON_ParseWithLength(a.body, a.len);
  const char *access = kw__json_string(json, "access_token");
  int64_t lifetime = kw__json_int(json, "expires_in");
  if (a.status == 200 && access != NULL && *access != '\0' && lifetime != KW_UNSET && lifetime > 0) {
    *token = kw__strdup(access);
    *expires_in = lifetime;
    st = *token == NULL ? kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory") : KW_OK;
  } else if (kw__json_string(json, "error") != NULL) {
    const char *description = kw__json_string(json, "error_description");
    st = kw__fail(err, KW_ERR_AUTH, kw__json_string(json, "error"), "%s", description == NULL ? "" : description);
  } else {
    char code[16];
    snprintf(code, sizeof code, "%ld", a.status);
    st = kw__fail(err, KW_ERR_PROTOCOL, code, "the token endpoint answered HTTP %ld without a token", a.status);
  }
  if (st != KW_OK && err != NULL) {
    err->http_status = a.status;
    kw__copy_text(err->request_id, sizeof err->request_id, a.request_id);
    err->retry_after_ms = a.retry_after_ms > 0 ? a.retry_after_ms : 0L;
  }
  cJSON_Delete(json);
  kw__answer_free(&a);
  return st;
}

/* A live token (a copy): the one held, or a new one when none is or it is due for renewal. */
static kw_status live_token(kw_session *s, char **token, bool *fresh, kw_error *err) {
  pthread_mutex_lock(&s->token_lock);
  pthread_mutex_lock(&s->lock);
  if (s->token != NULL && s->clock_ms() < s->renew_at_ms) {
    *token = kw__strdup(s->token);
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_unlock(&s->token_lock);
    *fresh = false;
    return *token == NULL ? kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory") : KW_OK;
  }
  pthread_mutex_unlock(&s->lock);
  char *obtained = NULL;
  int64_t expires_in = 0;
  kw_status st = request_token(s, &obtained, &expires_in, err);
  if (st == KW_OK) {
    *token = kw__strdup(obtained);
    if (*token == NULL) st = kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  }
  if (st == KW_OK) {
    /* Renew a minute early, or at 90% of a short lifetime, so no call carries a dying token. A
     * lifetime is held to a day: a token is renewed at least daily whatever the server answers,
     * and a hostile expires_in (up to 9.2e18) cannot overflow the milliseconds. */
    int64_t lifetime_ms = (expires_in < KW__TOKEN_LIFETIME_MAX_S ? expires_in : KW__TOKEN_LIFETIME_MAX_S) * 1000;
    int64_t margin = lifetime_ms / 10 < 60000 ? lifetime_ms / 10 : 60000;
    pthread_mutex_lock(&s->lock);
    if (s->token != NULL) OPENSSL_cleanse(s->token, strlen(s->token));
    free(s->token);
    s->token = obtained;
    s->renew_at_ms = s->clock_ms() + lifetime_ms - margin;
    pthread_mutex_unlock(&s->lock);
    *fresh = true;
  } else {
    free(obtained);
  }
  pthread_mutex_unlock(&s->token_lock);
  return st;
}

/* The server refused token: the next call obtains a new one (unless another thread did already). */
static void discard_token(kw_session *s, const char *token) {
  pthread_mutex_lock(&s->lock);
  if (s->token != NULL && strcmp(s->token, token) == 0) {
    OPENSSL_cleanse(s->token, strlen(s->token));
    free(s->token);
    s->token = NULL;
  }
  pthread_mutex_unlock(&s->lock);
}

kw_status kw_session_token(kw_session *session, char *buf, size_t buf_size, kw_error *err) {
  if (session == NULL || buf == NULL) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "session and buf are required");
  char *token = NULL;
  bool fresh = false;
  kw_error local;
  kw_status st = live_token(session, &token, &fresh, &local);
  if (st == KW_OK) {
    size_t n = strlen(token);
    if (n >= buf_size) st = kw__fail(&local, KW_ERR_INVALID_ARGUMENT, NULL, "buf holds %zu bytes; the token needs %zu", buf_size, n + 1);
    else memcpy(buf, token, n + 1);
    OPENSSL_cleanse(token, n);
    free(token);
  }
  if (st != KW_OK) kw__session_record(session, &local);
  if (err != NULL) *err = st == KW_OK ? (kw_error){0} : local;
  return st;
}

/* ---- runtime calls ---- */

/* Judges an answer: the envelope's data on code 0, else the failure it says. */
static kw_status judge(const kw__http_answer *a, cJSON **data, kw_error *err) {
  cJSON *json = cJSON_ParseWithLength(a->body, a->len);
  const cJSON *code = cJSON_GetObjectItemCaseSensitive(json, "code");
  kw_status st;
  if (a->status == 200 && cJSON_IsNumber(code) && code->valuedouble == 0) {
    cJSON *d = cJSON_DetachItemFromObjectCaseSensitive(json, "data");
    if (d == NULL) d = cJSON_CreateNull();
    if (data != NULL) *data = d;
    else cJSON_Delete(d);
    st = KW_OK;
  } else if (cJSON_IsObject(json) && cJSON_IsString(code) && a->status != 200) {
    const char *message = kw__json_string(json, "message");
    st = kw__fail(err, KW_ERR_API, code->valuestring, "%s", message == NULL ? "" : message);
    if (err != NULL) kw__copy_text(err->cause, sizeof err->cause, kw__json_string(json, "cause"));
  } else {
    char digits[16];
    snprintf(digits, sizeof digits, "%ld", a->status);
    st = kw__fail(err, KW_ERR_PROTOCOL, digits, "unexpected answer: HTTP %ld%s", a->status,
                  json == NULL ? ", not JSON" : ", not a Keyward envelope");
  }
  if (st != KW_OK && err != NULL) {
    err->http_status = a->status;
    kw__copy_text(err->request_id, sizeof err->request_id, a->request_id);
    err->retry_after_ms = a->retry_after_ms > 0 ? a->retry_after_ms : 0L;
  }
  cJSON_Delete(json);
  return st;
}

/* What one attempt learnt for the retry policy. */
typedef struct attempt_outcome {
  long retry_after_ms; /* -1: none */
  bool permanent;      /* a network failure asking again will not cure */
} attempt_outcome;

/* One attempt of a runtime call: one more with a new token when the server answers 60000 to one it
   issued earlier. */
static kw_status post_once(kw_session *s, const char *path, const char *text, const char *user_header,
                           const char *key_header, cJSON **data, attempt_outcome *outcome, kw_error *err) {
  kw_status st = KW_OK;
  outcome->retry_after_ms = -1;
  outcome->permanent = false;
  for (int attempt = 0; attempt < 2; attempt++) {
    char *token = NULL;
    bool fresh = false;
    st = live_token(s, &token, &fresh, err);
    if (st != KW_OK) break;
    char nonce[33];
    if (!kw__nonce(nonce)) {
      free(token);
      st = kw__fail(err, KW_ERR_INIT, NULL, "OpenSSL's random generator failed");
      break;
    }
    size_t url_len = strlen(s->base_url) + strlen(path) + 64;
    char *url = malloc(url_len);
    size_t auth_len = strlen(token) + sizeof "Authorization: Bearer ";
    char *auth = malloc(auth_len);
    if (url == NULL || auth == NULL) {
      free(url);
      free(auth);
      free(token);
      st = kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
      break;
    }
    snprintf(url, url_len, "%s%s%cg_nonce=%s", s->base_url, path, strchr(path, '?') ? '&' : '?', nonce);
    snprintf(auth, auth_len, "Authorization: Bearer %s", token);
    /* The optional headers last: a NULL ends the list. */
    const char *headers[] = {auth, "Content-Type: application/json", "Accept: application/json", NULL, NULL, NULL};
    size_t h = 3;
    if (key_header != NULL) headers[h++] = key_header;
    if (user_header != NULL) headers[h++] = user_header;
    kw__http_answer a;
    st = kw__http(s, "POST", url, headers, text, strlen(text), key_header != NULL ? KW__HTTP_FRESH_CONNECTION : 0u,
                  &a, err);
    OPENSSL_cleanse(auth, strlen(auth));
    free(auth);
    free(url);
    outcome->retry_after_ms = a.retry_after_ms;
    outcome->permanent = a.permanent;
    if (st == KW_OK) {
      st = judge(&a, data, err);
      kw__answer_free(&a);
    }
    /* A token the server issued earlier may be revoked or expired early: one retry with a new one. */
    bool retry = st == KW_ERR_API && strcmp(err->code, "60000") == 0 && !fresh && attempt == 0;
    if (retry) discard_token(s, token);
    OPENSSL_cleanse(token, strlen(token));
    free(token);
    if (!retry) break;
  }
  return st;
}

/* A uniformly random number of milliseconds in [0, ceiling]. */
static long jitter_ms(long ceiling) {
  if (ceiling <= 0) return 0;
  uint64_t r = 0;
  if (RAND_bytes((unsigned char *)&r, sizeof r) != 1) return ceiling;
  return (long)(r % ((uint64_t)ceiling + 1u));
}

/* The pause before retry number retry (1 for the first). */
static long wait_before(const kw_retry_policy *p, int retry, long retry_after_ms) {
  long ceiling = p->max_backoff_ms;
  if (retry - 1 < 30) {
    long grown = p->initial_backoff_ms;
    for (int i = 1; i < retry && grown < ceiling; i++) grown *= 2;
    if (grown < ceiling) ceiling = grown;
  }
  long wait = jitter_ms(ceiling);
  if (retry_after_ms >= 0) {
    long asked = retry_after_ms < p->max_retry_after_ms ? retry_after_ms : p->max_retry_after_ms;
    if (asked > wait) wait = asked;
  }
  return wait;
}

static void sleep_for(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* Whether a failed attempt may pass if sent again: no answer, or HTTP 429 or 503. */
static bool worth_retrying(kw_status st, const kw_error *err, const attempt_outcome *outcome) {
  if (st == KW_ERR_NETWORK) return !outcome->permanent;
  if (st == KW_ERR_API || st == KW_ERR_PROTOCOL || st == KW_ERR_AUTH)
    return err->http_status == 429 || err->http_status == 503;
  return false;
}

kw_status kw__session_post(kw_session *s, const char *path, const cJSON *body, const char *user_token,
                           const char *idempotency_key, cJSON **data, kw_error *err) {
  /* err is never NULL here: the retries read the code. */
  char *text = cJSON_PrintUnformatted(body);
  if (text == NULL) return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  char *user_header = NULL;
  char *key_header = NULL;
  if (user_token != NULL) {
    size_t n = strlen(user_token) + sizeof "userToken: ";
    if ((user_header = malloc(n)) != NULL) snprintf(user_header, n, "userToken: %s", user_token);
  }
  if (idempotency_key != NULL) {
    size_t n = strlen(idempotency_key) + sizeof "Idempotency-Key: ";
    if ((key_header = malloc(n)) != NULL) snprintf(key_header, n, "Idempotency-Key: %s", idempotency_key);
  }
  if ((user_token != NULL && user_header == NULL) || (idempotency_key != NULL && key_header == NULL)) {
    free(user_header);
    free(key_header);
    free(text);
    return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  }
  pthread_mutex_lock(&s->lock);
  kw_retry_policy policy = s->retry;
  kw__sleep_fn sleep_ms = s->sleep_ms == NULL ? sleep_for : s->sleep_ms;
  kw__clock_fn clock_ms = s->clock_ms;
  pthread_mutex_unlock(&s->lock);
  int64_t started = clock_ms();
  kw_status st;
  for (int attempt = 1;; attempt++) {
    attempt_outcome outcome;
    st = post_once(s, path, text, user_header, key_header, data, &outcome, err);
    if (st == KW_OK || attempt >= policy.max_attempts || !worth_retrying(st, err, &outcome)) break;
    long wait = wait_before(&policy, attempt, outcome.retry_after_ms);
    if (clock_ms() - started + wait > policy.max_elapsed_ms) break;
    sleep_ms(wait);
  }
  free(key_header);
  free(user_header);
  free(text);
  return st;
}
