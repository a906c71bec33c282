/*
 * The session against a local HTTP stub: the token (client credentials, reused, renewed before it
 * expires, obtained anew and the call retried once on 60000), nonces, the envelope's failures,
 * network and protocol errors, the heartbeat thread, check-in and the lease's scope.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "internal.h"
#include "stub.h"

#define KEY "kw_test_app"
#define SECRET "s3cret:with/odd chars"
#define FP "fp-test-machine-0001"

/* What the stub answers, per test. */
typedef struct world {
  int tokens_issued;
  int token_lifetime; /* expires_in */
  const char *token_lifetime_json; /* expires_in as written, when set (past an int) */
  int heartbeat_interval;
  const char *runtime_code; /* answer every runtime call with this failure code, when set */
  int fail_first_with_60000; /* the first N runtime calls answer 60000 */
  int heartbeats_ok_before_revoke; /* -1: never revoke */
  int heartbeats;
  bool token_refused;
  bool html_502;
  const char *consume_answer;
} world;

static void envelope_failure(stub_reply *reply, const char *code, const char *message) {
  reply->status = 299;
  snprintf(reply->body, sizeof reply->body, "{\"code\":\"%s\",\"message\":\"%s\",\"cause\":\"cause of %s\"}", code,
           message, code);
}

static void handler(const stub_request *req, size_t n, stub_reply *reply, void *user) {
  (void)n;
  world *w = user;
  if (strcmp(req->path, "/oauth2/token") == 0) {
    if (w->token_refused) {
      reply->status = 401;
      strcpy(reply->body, "{\"error\":\"invalid_client\",\"error_description\":\"unknown client or wrong secret\"}");
      return;
    }
    w->tokens_issued++;
    char lifetime[32];
    if (w->token_lifetime_json != NULL) {
      snprintf(lifetime, sizeof lifetime, "%s", w->token_lifetime_json);
    } else {
      snprintf(lifetime, sizeof lifetime, "%d", w->token_lifetime ? w->token_lifetime : 3600);
    }
    snprintf(reply->body, sizeof reply->body,
             "{\"access_token\":\"tok-%d\",\"token_type\":\"Bearer\",\"expires_in\":%s,\"scope\":\"auth_runtime\"}",
             w->tokens_issued, lifetime);
    return;
  }
  if (strcmp(req->path, "/.well-known/jwks.json") == 0) {
    strcpy(reply->body, "{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"kid\":\"k1\","
                        "\"x\":\"6SVDqvbVE-VLwIL4TKinRPng9SGZ-yhduJKFSNiXRBA\",\"alg\":\"EdDSA\",\"use\":\"sig\"}]}");
    return;
  }
  if (strncmp(req->path, "/runtime/v1/leases", 18) != 0) {
    reply->status = 404;
    strcpy(reply->body, "{\"code\":\"404\",\"message\":\"not found\",\"cause\":\"\"}");
    return;
  }
  if (w->html_502) {
    reply->status = 502;
    strcpy(reply->content_type, "text/html");
    strcpy(reply->body, "<html>Bad Gateway</html>");
    return;
  }
  if (w->fail_first_with_60000 > 0) {
    w->fail_first_with_60000--;
    envelope_failure(reply, "60000", "application token check failed");
    return;
  }
  if (w->runtime_code != NULL) {
    envelope_failure(reply, w->runtime_code, "refused by the stub");
    strcpy(reply->request_id, "req-refused");
    return;
  }
  const char *op = strrchr(req->path, '/');
  if (strcmp(req->path, "/runtime/v1/leases") == 0) {
    snprintf(reply->body, sizeof reply->body,
             "{\"code\":0,\"message\":\"success\",\"data\":{\"leaseId\":\"L-1\",\"status\":\"granted\","
             "\"assetNum\":\"A-1\",\"expiresAt\":1800000050000,\"heartbeatIntervalSeconds\":%d,"
             "\"product\":{\"crmProductId\":\"P-1\",\"productUri\":null,\"productName\":\"Modeler\"},"
             "\"limits\":{\"concurrent\":1,\"timeDurationSeconds\":null,\"amount\":100,\"startDate\":null,"
             "\"endDate\":1805184000000},\"offlineLease\":null}}",
             w->heartbeat_interval ? w->heartbeat_interval : 60);
  } else if (strcmp(op, "/heartbeat") == 0) {
    if (w->heartbeats_ok_before_revoke >= 0 && w->heartbeats >= w->heartbeats_ok_before_revoke) {
      envelope_failure(reply, "90009", "the lease was revoked: the asset is disabled");
      return;
    }
    w->heartbeats++;
    snprintf(reply->body, sizeof reply->body,
             "{\"code\":0,\"message\":\"success\",\"data\":{\"leaseId\":\"L-1\",\"expiresAt\":%d,"
             "\"heartbeatIntervalSeconds\":%d,\"usedSeconds\":%d}}",
             1800000100 + w->heartbeats, w->heartbeat_interval ? w->heartbeat_interval : 60, 10 * w->heartbeats);
  } else if (strcmp(op, "/consume") == 0) {
    snprintf(reply->body, sizeof reply->body, "{\"code\":0,\"message\":\"success\",\"data\":%s}",
             w->consume_answer ? w->consume_answer : "{\"consumed\":2,\"limit\":100,\"remaining\":98}");
  } else if (strcmp(op, "/check-in") == 0) {
    strcpy(reply->body, "{\"code\":0,\"message\":\"success\",\"data\":{\"usedSeconds\":42,\"seatFreeAt\":1800000000123}}");
  } else {
    reply->status = 404;
    strcpy(reply->body, "{\"code\":\"404\",\"message\":\"not found\",\"cause\":\"\"}");
  }
}

/* Changes what the handler answers, under the stub's lock. */
#define SET(s, stmt)                                                                                                   \
  do {                                                                                                                 \
    stub_lock(s);                                                                                                      \
    stmt;                                                                                                              \
    stub_unlock(s);                                                                                                    \
  } while (0)

static int issued(stub *s, const world *w) {
  stub_lock(s);
  int n = w->tokens_issued;
  stub_unlock(s);
  return n;
}

static kw_session *session_for(stub *s) {
  kw_session *session = NULL;
  kw_error err;
  if (kw_session_new(stub_url(s), KEY, SECRET, &session, &err) != KW_OK) {
    fprintf(stderr, "session: %s\n", err.message);
    exit(2);
  }
  kw_session_set_timeout_ms(session, 5000, NULL);
  return session;
}

static kw_checkout_params lock_params(void) {
  kw_checkout_params p = {0};
  p.fingerprint = FP;
  p.asset_num = "A-1";
  p.crm_product_id = "P-1";
  return p;
}

/* The g_nonce of a query: 32 hex digits, alone in the query. */
static bool nonce_of(const char *query, char out[64]) {
  if (strncmp(query, "g_nonce=", 8) != 0) return false;
  const char *v = query + 8;
  size_t n = strlen(v);
  if (n != 32) return false;
  for (size_t i = 0; i < n; i++) {
    if (!((v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'f'))) return false;
  }
  strcpy(out, v);
  return true;
}

static void test_token_and_nonces(void) {
  world w = {.heartbeats_ok_before_revoke = -1};
  stub *s = stub_start(handler, &w);
  kw_session *session = session_for(s);
  kw_checkout_params p = lock_params();
  p.offline_days = 3;
  kw_lease *lease = NULL;
  kw_error err;
  CHECK(kw_checkout(session, &p, &lease, &err) == KW_OK, "%s", err.message);
  CHECK(kw_lease_heartbeat(lease, NULL, &err) == KW_OK, "%s", err.message);
  kw_heartbeat_result beat;
  CHECK(kw_lease_heartbeat(lease, &beat, &err) == KW_OK, "%s", err.message);
  CHECK(beat.used_seconds == 20 && beat.expires_at_ms == 1800000102, "heartbeat answer: %lld %lld",
        (long long)beat.used_seconds, (long long)beat.expires_at_ms);
  CHECK(kw_lease_expires_at_ms(lease) == 1800000102, "the lease moves with its heartbeats");

  CHECK(stub_count(s) == 4, "one token request and three calls, not %zu", stub_count(s));
  stub_request token = stub_get(s, 0);
  CHECK_STR(token.path, "/oauth2/token");
  CHECK_STR(token.method, "POST");
  CHECK_STR(token.body, "grant_type=client_credentials");
  CHECK_STR(token.content_type, "application/x-www-form-urlencoded");
  /* Basic base64("kw_test_app:s3cret%3Awith%2Fodd%20chars"): each part form-encoded first. */
  char expected_basic[256] = "Basic ";
  const char *pair = "kw_test_app:s3cret%3Awith%2Fodd%20chars";
  kw__b64_encode((const unsigned char *)pair, strlen(pair), expected_basic + 6);
  CHECK_STR(token.authorization, expected_basic);

  char nonces[3][64];
  for (size_t i = 1; i < 4; i++) {
    stub_request call = stub_get(s, i);
    CHECK_STR(call.authorization, "Bearer tok-1");
    CHECK_STR(call.content_type, "application/json");
    CHECK(nonce_of(call.query, nonces[i - 1]), "a fresh g_nonce of 32 hex digits, not %s", call.query);
  }
  CHECK(strcmp(nonces[0], nonces[1]) != 0 && strcmp(nonces[1], nonces[2]) != 0 && strcmp(nonces[0], nonces[2]) != 0,
        "every call its own nonce");

  stub_request checkout = stub_get(s, 1);
  CHECK_STR(checkout.path, "/runtime/v1/leases");
  cJSON *body = cJSON_Parse(checkout.body);
  CHECK_STR(kw__json_string(body, "fingerprint"), FP);
  CHECK_STR(kw__json_string(body, "assetNum"), "A-1");
  CHECK_STR(kw__json_string(body, "crmProductId"), "P-1");
  CHECK(kw__json_int(body, "offlineDays") == 3, "offlineDays sent");
  CHECK(cJSON_GetObjectItemCaseSensitive(body, "productUri") == NULL, "no productUri when not given");
  cJSON_Delete(body);
  stub_request hb = stub_get(s, 2);
  CHECK_STR(hb.path, "/runtime/v1/leases/L-1/heartbeat");
  CHECK_STR(hb.body, "{\"fingerprint\":\"" FP "\"}");
  CHECK_STR(hb.user_token, "");

  /* What the lease says. */
  CHECK_STR(kw_lease_id(lease), "L-1");
  CHECK_STR(kw_lease_status(lease), "granted");
  CHECK_STR(kw_lease_asset_num(lease), "A-1");
  CHECK(kw_lease_offline_token(lease) == NULL, "no offline lease asked");
  kw_product product;
  kw_lease_product(lease, &product);
  CHECK_STR(product.crm_product_id, "P-1");
  CHECK(product.product_uri == NULL, "null is NULL");
  kw_limits limits;
  kw_lease_limits(lease, &limits);
  CHECK(limits.concurrent == 1 && limits.time_duration_seconds == KW_UNSET && limits.start_date_ms == KW_UNSET &&
            limits.end_date_ms == 1805184000000LL,
        "limits");
  CHECK(kw_lease_heartbeat_interval(lease) == 60, "interval");
  kw_lease_free(lease); /* not checked in */
  CHECK(stub_count(s) == 4, "kw_lease_free sends nothing");
  kw_session_free(session);
  stub_stop(s);
}

static int64_t fake_now = 0;
static int64_t fake_clock(void) { return fake_now; }

static void test_token_renewal(void) {
  world w = {.heartbeats_ok_before_revoke = -1, .token_lifetime = 3600};
  stub *s = stub_start(handler, &w);
  kw_session *session = session_for(s);
  kw__session_set_clock(session, fake_clock);
  fake_now = 1000000;
  char token[128];
  kw_error err;
  CHECK(kw_session_token(session, token, sizeof token, &err) == KW_OK, "%s", err.message);
  CHECK_STR(token, "tok-1");
  /* A minute before the hour: still the same. */
  fake_now += 3600 * 1000 - 60 * 1000 - 1;
  CHECK(kw_session_token(session, token, sizeof token, &err) == KW_OK && strcmp(token, "tok-1") == 0,
        "reused until a minute before it expires: %s", token);
  fake_now += 1;
  CHECK(kw_session_token(session, token, sizeof token, &err) == KW_OK && strcmp(token, "tok-2") == 0,
        "renewed a minute before it expires: %s", token);
  /* A short lifetime: renewed at 90% of it. */
  SET(s, w.token_lifetime = 100);
  fake_now += 3600 * 1000; /* tok-2 is due */
  CHECK(kw_session_token(session, token, sizeof token, &err) == KW_OK && strcmp(token, "tok-3") == 0, "tok-3");
  fake_now += 89999;
  CHECK(kw_session_token(session, token, sizeof token, &err) == KW_OK && strcmp(token, "tok-3") == 0,
        "reused before 90%%: %s", token);
  fake_now += 1;
  CHECK(kw_session_token(session, token, sizeof token, &err) == KW_OK && strcmp(token, "tok-4") == 0,
        "renewed at 90%%: %s", token);
  CHECK(kw_session_token(session, token, 4, &err) == KW_ERR_INVALID_ARGUMENT, "a buffer too small");
  CHECK(issued(s, &w) == 4, "four tokens, not %d", issued(s, &w));
  kw_session_free(session);
  stub_stop(s);
}

/* A hostile or mistaken expires_in: no overflow (UBSan watches the multiplication), and the token
 * is held a day at most. */
static void test_token_lifetime_bounded(void) {
  world w = {.heartbeats_ok_before_revoke = -1, .token_lifetime_json = "9000000000000000000"};
  stub *s = stub_start(handler, &w);
  kw_session *session = session_for(s);
  kw__session_set_clock(session, fake_clock);
  fake_now = 1000000;
  char token[128];
  kw_error err;
  CHECK(kw_session_token(session, token, sizeof token, &err) == KW_OK, "%s", err.message);
  CHECK_STR(token, "tok-1");
  fake_now += 86400 * 1000 - 60 * 1000 - 1;
  CHECK(kw_session_token(session, token, sizeof token, &err) == KW_OK && strcmp(token, "tok-1") == 0,
        "a huge expires_in: reused for the day: %s", token);
  fake_now += 1;
  CHECK(kw_session_token(session, token, sizeof token, &err) == KW_OK && strcmp(token, "tok-2") == 0,
        "a huge expires_in: renewed after a day: %s", token);
  kw_session_free(session);
  stub_stop(s);
}

static void test_retry_on_60000(void) {
  world w = {.heartbeats_ok_before_revoke = -1};
  stub *s = stub_start(handler, &w);
  kw_session *session = session_for(s);
  kw_lease *lease = NULL;
  kw_error err;
  kw_checkout_params p = lock_params();
  CHECK(kw_checkout(session, &p, &lease, &err) == KW_OK, "%s", err.message);
  /* The token the session holds is refused once (revoked, say): a new token, the call again. */
  SET(s, w.fail_first_with_60000 = 1);
  CHECK(kw_lease_heartbeat(lease, NULL, &err) == KW_OK, "retried: %s %s", err.code, err.message);
  CHECK(issued(s, &w) == 2, "a second token: %d", issued(s, &w));
  size_t n = stub_count(s);
  CHECK(n == 5, "token, check-out, heartbeat, token, heartbeat: %zu", n);
  if (n == 5) {
    stub_request first = stub_get(s, 2), token = stub_get(s, 3), again = stub_get(s, 4);
    CHECK_STR(first.authorization, "Bearer tok-1");
    CHECK_STR(token.path, "/oauth2/token");
    CHECK_STR(again.authorization, "Bearer tok-2");
    CHECK_STR(again.path, "/runtime/v1/leases/L-1/heartbeat");
    CHECK_STR(again.body, first.body);
    char a[64], b[64];
    CHECK(nonce_of(first.query, a) && nonce_of(again.query, b) && strcmp(a, b) != 0, "a new nonce for the retry");
  }
  /* Refused again with the new token: once only, and the caller gets 60000. */
  SET(s, w.fail_first_with_60000 = 2);
  size_t before = stub_count_path(s, "/runtime/v1/leases/L-1/heartbeat");
  CHECK(kw_lease_heartbeat(lease, NULL, &err) == KW_ERR_API, "refused");
  CHECK_STR(err.code, "60000");
  CHECK(stub_count_path(s, "/runtime/v1/leases/L-1/heartbeat") == before + 2, "one retry, not more");
  CHECK(issued(s, &w) == 3, "one new token for the retry: %d", issued(s, &w));
  CHECK(kw_lease_get_state(lease, NULL) == KW_LEASE_ACTIVE, "60000 does not end the lease");
  kw_lease_free(lease);
  kw_session_free(session);
  stub_stop(s);

  /* A token obtained for this very call and refused: asking again cures nothing (as the TS client). */
  world fresh = {.heartbeats_ok_before_revoke = -1, .fail_first_with_60000 = 1};
  s = stub_start(handler, &fresh);
  session = session_for(s);
  CHECK(kw_checkout(session, &p, &lease, &err) == KW_ERR_API && lease == NULL, "refused");
  CHECK_STR(err.code, "60000");
  CHECK(stub_count_path(s, "/runtime/v1/leases") == 1 && issued(s, &fresh) == 1, "no retry with a fresh token");
  kw_session_free(session);
  stub_stop(s);
}

static void test_failures(void) {
  world w = {.heartbeats_ok_before_revoke = -1, .runtime_code = "90005"};
  stub *s = stub_start(handler, &w);
  kw_session *session = session_for(s);
  kw_lease *lease = NULL;
  kw_error err;
  kw_checkout_params p = lock_params();
  CHECK(kw_checkout(session, &p, &lease, &err) == KW_ERR_API && lease == NULL, "a refusal");
  CHECK(err.status == KW_ERR_API, "status in the error");
  CHECK_STR(err.code, "90005");
  CHECK_STR(err.message, "refused by the stub");
  CHECK_STR(err.cause, "cause of 90005");
  CHECK(err.http_status == 299, "HTTP %ld", err.http_status);
  CHECK_STR(err.request_id, "req-refused");
  kw_error last;
  kw_session_last_error(session, &last);
  CHECK_STR(last.code, "90005");
  /* Without an error struct: the status alone, and the session keeps the details. */
  CHECK(kw_checkout(session, &p, &lease, NULL) == KW_ERR_API, "NULL err");
  kw_session_last_error(session, &last);
  CHECK_STR(last.code, "90005");

  /* Not an envelope: HTTP's status as the code, never a bare failure. */
  SET(s, w.runtime_code = NULL);
  SET(s, w.html_502 = true);
  CHECK(kw_checkout(session, &p, &lease, &err) == KW_ERR_PROTOCOL, "502");
  CHECK_STR(err.code, "502");
  CHECK(err.http_status == 502, "HTTP %ld", err.http_status);
  kw_session_free(session);

  /* The token endpoint refuses the credentials. */
  SET(s, w.html_502 = false);
  SET(s, w.token_refused = true);
  session = session_for(s);
  CHECK(kw_checkout(session, &p, &lease, &err) == KW_ERR_AUTH, "refused credentials");
  CHECK_STR(err.code, "invalid_client");
  CHECK_STR(err.message, "unknown client or wrong secret");
  CHECK(err.http_status == 401, "HTTP %ld", err.http_status);
  CHECK(stub_count_path(s, "/runtime/v1/leases") == 3, "no call without a token");
  kw_session_free(session);
  stub_stop(s);

  /* Nobody listens: a network error, distinct from any refusal. */
  stub *gone = stub_start(handler, &w);
  char url[64];
  snprintf(url, sizeof url, "%s", stub_url(gone));
  stub_stop(gone);
  CHECK(kw_session_new(url, KEY, SECRET, &session, &err) == KW_OK, "session");
  CHECK(kw_checkout(session, &p, &lease, &err) == KW_ERR_NETWORK, "network: %s", kw_status_name(err.status));
  CHECK_STR(err.code, "network");
  CHECK(err.http_status == 0, "no HTTP answer");
  kw_session_free(session);

  /* Arguments. */
  CHECK(kw_session_new("ftp://x", KEY, SECRET, &session, &err) == KW_ERR_INVALID_ARGUMENT, "http(s) only");
  CHECK(kw_session_new("http://x", KEY, NULL, &session, &err) == KW_ERR_INVALID_ARGUMENT, "secret");
  CHECK(kw_session_new("http://x", KEY, SECRET, &session, &err) == KW_OK, "session");
  kw_checkout_params none = {0};
  CHECK(kw_checkout(session, &none, &lease, &err) == KW_ERR_INVALID_ARGUMENT, "no fingerprint");
  none.fingerprint = FP;
  CHECK(kw_checkout(session, &none, &lease, &err) == KW_ERR_INVALID_ARGUMENT, "no product");
  kw_session_free(session);
}

typedef struct beats {
  pthread_mutex_t lock;
  int ok;
  int failed;
  char last_code[48];
  bool ended;
} beats;

static void on_beat(kw_lease *lease, kw_status status, const kw_error *err, void *user) {
  beats *b = user;
  pthread_mutex_lock(&b->lock);
  if (status == KW_OK) {
    b->ok++;
  } else {
    b->failed++;
    snprintf(b->last_code, sizeof b->last_code, "%s", err->code);
    b->ended = kw_lease_get_state(lease, NULL) == KW_LEASE_ENDED;
  }
  pthread_mutex_unlock(&b->lock);
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

static void test_heartbeat_thread(void) {
  /* Two heartbeats answered, then the lease is revoked: the loop stops itself and says so. */
  world w = {.heartbeat_interval = 1, .heartbeats_ok_before_revoke = 2};
  stub *s = stub_start(handler, &w);
  kw_session *session = session_for(s);
  kw_lease *lease = NULL;
  kw_error err;
  kw_checkout_params p = lock_params();
  CHECK(kw_checkout(session, &p, &lease, &err) == KW_OK, "%s", err.message);
  beats b = {.lock = PTHREAD_MUTEX_INITIALIZER};
  CHECK(kw_lease_start_heartbeats(lease, on_beat, &b, &err) == KW_OK, "%s", err.message);
  CHECK(kw_lease_start_heartbeats(lease, on_beat, &b, &err) == KW_ERR_INVALID_ARGUMENT, "one loop per lease");
  bool ended = false;
  for (int i = 0; i < 80 && !ended; i++) {
    sleep_ms(100);
    pthread_mutex_lock(&b.lock);
    ended = b.ended;
    pthread_mutex_unlock(&b.lock);
  }
  CHECK(ended, "the loop reported the revocation");
  pthread_mutex_lock(&b.lock);
  int ok = b.ok, failed = b.failed;
  char last_code[48];
  memcpy(last_code, b.last_code, sizeof last_code);
  pthread_mutex_unlock(&b.lock);
  CHECK(ok == 2 && failed == 1, "two beats then the refusal: %d ok, %d failed", ok, failed);
  CHECK_STR(last_code, "90009");
  CHECK(kw_lease_heartbeat_count(lease) == 2, "count %llu", (unsigned long long)kw_lease_heartbeat_count(lease));
  kw_error why;
  CHECK(kw_lease_get_state(lease, &why) == KW_LEASE_ENDED, "ended");
  CHECK_STR(why.code, "90009");
  CHECK(strstr(why.message, "revoked") != NULL, "the server's words: %s", why.message);
  /* Nothing more is sent for it; the loop sends no more either. */
  size_t sent = stub_count(s);
  CHECK(kw_lease_heartbeat(lease, NULL, &err) == KW_ERR_LEASE_ENDED, "ended lease");
  CHECK_STR(err.code, "90009");
  CHECK(kw_lease_consume(lease, 1, NULL, &err) == KW_ERR_LEASE_ENDED, "ended lease");
  CHECK(kw_lease_start_heartbeats(lease, on_beat, &b, &err) == KW_ERR_LEASE_ENDED, "ended lease");
  sleep_ms(1300);
  CHECK(stub_count(s) == sent, "no request after the end: %zu, %zu", stub_count(s), sent);
  /* Closing an ended lease checks nothing in. */
  CHECK(kw_lease_close(lease, &err) == KW_OK, "close: %s", err.message);
  CHECK(stub_count_path(s, "/runtime/v1/leases/L-1/check-in") == 0, "no check-in of an ended lease");
  kw_session_free(session);
  stub_stop(s);
}

static void test_check_in_and_scope(void) {
  world w = {.heartbeat_interval = 1, .heartbeats_ok_before_revoke = -1};
  stub *s = stub_start(handler, &w);
  kw_session *session = session_for(s);
  kw_error err;
  kw_checkout_params p = lock_params();
  {
    KW_LEASE_SCOPED kw_lease *lease = NULL;
    CHECK(kw_checkout(session, &p, &lease, &err) == KW_OK, "%s", err.message);
    CHECK(kw_lease_start_heartbeats(lease, NULL, NULL, &err) == KW_OK, "%s", err.message);
    sleep_ms(1500);
    CHECK(kw_lease_heartbeat_count(lease) >= 1, "a background beat");
  } /* checked in here */
  CHECK(stub_count_path(s, "/runtime/v1/leases/L-1/check-in") == 1, "the scope's end checks in");
  size_t beats_then = stub_count_path(s, "/runtime/v1/leases/L-1/heartbeat");
  sleep_ms(1200);
  CHECK(stub_count_path(s, "/runtime/v1/leases/L-1/heartbeat") == beats_then, "and stops the heartbeats");

  /* Check-in by hand: its answer, then nothing more for the lease. */
  kw_lease *lease = NULL;
  CHECK(kw_checkout(session, &p, &lease, &err) == KW_OK, "%s", err.message);
  kw_checkin_result done;
  CHECK(kw_lease_check_in(lease, &done, &err) == KW_OK, "%s", err.message);
  CHECK(done.used_seconds == 42 && done.seat_free_at_ms == 1800000000123LL, "check-in answer");
  CHECK(kw_lease_get_state(lease, NULL) == KW_LEASE_CHECKED_IN, "checked in");
  CHECK(kw_lease_check_in(lease, NULL, &err) == KW_ERR_LEASE_ENDED, "twice");
  CHECK(kw_lease_heartbeat(lease, NULL, &err) == KW_ERR_LEASE_ENDED, "heartbeat after check-in");
  CHECK(stub_count_path(s, "/runtime/v1/leases/L-1/check-in") == 2, "the second check-in was not sent");
  CHECK(kw_lease_close(lease, &err) == KW_OK, "close after check-in");
  CHECK(stub_count_path(s, "/runtime/v1/leases/L-1/check-in") == 2, "close sends none either");

  /* Consume: the answer, no limit as KW_UNSET, the amount's bounds checked before sending. */
  CHECK(kw_checkout(session, &p, &lease, &err) == KW_OK, "%s", err.message);
  kw_consumption used;
  CHECK(kw_lease_consume(lease, 2, &used, &err) == KW_OK, "%s", err.message);
  CHECK(used.consumed == 2 && used.limit == 100 && used.remaining == 98, "consume answer");
  SET(s, w.consume_answer = "{\"consumed\":7,\"limit\":null,\"remaining\":null}");
  CHECK(kw_lease_consume(lease, 5, &used, &err) == KW_OK, "%s", err.message);
  CHECK(used.consumed == 7 && used.limit == KW_UNSET && used.remaining == KW_UNSET, "no limit");
  size_t sent = stub_count(s);
  CHECK(kw_lease_consume(lease, 0, &used, &err) == KW_ERR_INVALID_ARGUMENT, "0");
  CHECK(kw_lease_consume(lease, 1000000001, &used, &err) == KW_ERR_INVALID_ARGUMENT, "10^9 + 1");
  CHECK(stub_count(s) == sent, "nothing sent");
  stub_request c = stub_get(s, sent - 1);
  CHECK_STR(c.body, "{\"fingerprint\":\"" FP "\",\"amount\":5}");
  /* The session may be freed first: the lease keeps it alive. */
  kw_session_free(session);
  CHECK(kw_lease_close(lease, &err) == KW_OK, "%s", err.message);
  stub_stop(s);
}

static void test_member_and_jwks(void) {
  world w = {.heartbeats_ok_before_revoke = -1};
  stub *s = stub_start(handler, &w);
  kw_session *session = session_for(s);
  kw_error err;
  kw_checkout_params p = {0};
  p.fingerprint = FP;
  p.product_uri = "gms-1";
  p.user_token = "member-token-1";
  kw_lease *lease = NULL;
  CHECK(kw_checkout(session, &p, &lease, &err) == KW_OK, "%s", err.message);
  stub_request call = stub_get(s, 1);
  CHECK_STR(call.user_token, "member-token-1");
  CHECK_STR(call.body, "{\"fingerprint\":\"" FP "\",\"productUri\":\"gms-1\"}");
  kw_lease_free(lease);

  kw_jwks *jwks = NULL;
  CHECK(kw_jwks_fetch(session, &jwks, &err) == KW_OK, "%s", err.message);
  CHECK(kw_jwks_count(jwks) == 1, "one key");
  stub_request get = stub_get(s, stub_count(s) - 1);
  CHECK_STR(get.method, "GET");
  CHECK_STR(get.path, "/.well-known/jwks.json");
  CHECK_STR(get.authorization, "");
  kw_jwks_free(jwks);
  kw_session_free(session);
  stub_stop(s);
}

int main(void) {
  if (kw_global_init(NULL) != KW_OK) return 2;
  test_token_and_nonces();
  test_token_renewal();
  test_token_lifetime_bounded();
  test_retry_on_60000();
  test_failures();
  test_heartbeat_thread();
  test_check_in_and_scope();
  test_member_and_jwks();
  kw_global_cleanup();
  printf("%d passed, %d failed\n", check_passed, check_failures);
  return check_failures == 0 ? 0 : 1;
}
