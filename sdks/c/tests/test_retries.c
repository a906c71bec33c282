/*
 * The retry policy of runtime calls against the local stub: what is sent again (no answer, 429,
 * 503), what is not (a refusal), how long it waits (Retry-After, backoff, max_elapsed_ms), and a
 * consume's Idempotency-Key, one per call and the same on each of its attempts.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "internal.h"
#include "stub.h"

#define FP "fp-test-machine-0001"
#define MAX_SCRIPT 8

/* Answers the next runtime calls but check-out get, in order; then the usual success. */
typedef struct script {
  int status[MAX_SCRIPT];
  const char *retry_after[MAX_SCRIPT];
  int count, next;
} script;

static script plan;
/* When set, the token endpoint answers 429 with this Retry-After. */
static const char *token_busy;

/* A scripted answer: status 0 drops the connection; 429 and 503 answer Keyward's envelope. */
static void add(int status, const char *retry_after) {
  plan.status[plan.count] = status;
  plan.retry_after[plan.count] = retry_after;
  plan.count++;
}

static void handler(const stub_request *req, size_t n, stub_reply *reply, void *user) {
  (void)n;
  (void)user;
  if (strcmp(req->path, "/oauth2/token") == 0 && token_busy != NULL) {
    reply->status = 429;
    snprintf(reply->retry_after, sizeof reply->retry_after, "%s", token_busy);
    strcpy(reply->body, "{\"error\":\"temporarily_unavailable\",\"error_description\":\"slow down\"}");
    return;
  }
  if (strcmp(req->path, "/oauth2/token") == 0) {
    strcpy(reply->body, "{\"access_token\":\"tok-1\",\"token_type\":\"Bearer\",\"expires_in\":3600}");
    return;
  }
  const char *op = strrchr(req->path, '/');
  if (strcmp(req->path, "/runtime/v1/leases") == 0) {
    strcpy(reply->body, "{\"code\":0,\"message\":\"success\",\"data\":{\"leaseId\":\"L-1\",\"status\":\"granted\","
                        "\"assetNum\":\"A-1\",\"expiresAt\":1800000050000,\"heartbeatIntervalSeconds\":60,"
                        "\"product\":{},\"limits\":{},\"offlineLease\":null}}");
    return;
  }
  if (plan.next < plan.count) {
    int status = plan.status[plan.next];
    const char *retry_after = plan.retry_after[plan.next];
    plan.next++;
    if (status == 0) {
      reply->drop = 1;
      return;
    }
    reply->status = status;
    if (retry_after != NULL) snprintf(reply->retry_after, sizeof reply->retry_after, "%s", retry_after);
    snprintf(reply->body, sizeof reply->body, "{\"code\":\"%s\",\"message\":\"stub\",\"cause\":\"stub\"}",
             status == 299 ? "90007" : status == 400 ? "90000" : status == 429 ? "429" : status == 503 ? "503" : "500");
    return;
  }
  if (strcmp(op, "/consume") == 0) {
    strcpy(reply->body, "{\"code\":0,\"message\":\"success\",\"data\":{\"consumed\":2,\"limit\":100,\"remaining\":98}}");
  } else if (strcmp(op, "/check-in") == 0) {
    strcpy(reply->body, "{\"code\":0,\"message\":\"success\",\"data\":{\"usedSeconds\":42,\"seatFreeAt\":1800000000123}}");
  } else {
    strcpy(reply->body, "{\"code\":0,\"message\":\"success\",\"data\":{\"leaseId\":\"L-1\",\"expiresAt\":1800000100000,"
                        "\"heartbeatIntervalSeconds\":60,\"usedSeconds\":10}}");
  }
}

/* The waits the session asked for, not taken. */
static long waits[16];
static int wait_count;
static void record_wait(long ms) {
  if (wait_count < 16) waits[wait_count] = ms;
  wait_count++;
}

typedef struct fixture {
  stub *server;
  kw_session *session;
  kw_lease *lease;
} fixture;

static fixture start(const kw_retry_policy *policy) {
  memset(&plan, 0, sizeof plan);
  token_busy = NULL;
  wait_count = 0;
  fixture f = {0};
  f.server = stub_start(handler, NULL);
  kw_error err;
  if (kw_session_new(stub_url(f.server), "kw_app", "s3cret", &f.session, &err) != KW_OK) exit(2);
  kw_session_set_timeout_ms(f.session, 5000, NULL);
  kw__session_set_sleep(f.session, record_wait);
  if (policy != NULL) kw_session_set_retry_policy(f.session, policy, NULL);
  kw_checkout_params p = {0};
  p.fingerprint = FP;
  p.asset_num = "A-1";
  p.crm_product_id = "P-1";
  if (kw_checkout(f.session, &p, &f.lease, &err) != KW_OK) {
    fprintf(stderr, "check-out: %s\n", err.message);
    exit(2);
  }
  return f;
}

static void stop(fixture *f) {
  kw_lease_free(f->lease);
  kw_session_free(f->session);
  stub_stop(f->server);
}

/* The requests to path, in order, copied into out (at most max); how many there were. */
static size_t requests_to(stub *s, const char *path, stub_request *out, size_t max) {
  size_t found = 0;
  for (size_t i = 0; i < stub_count(s); i++) {
    stub_request r = stub_get(s, i);
    if (strcmp(r.path, path) == 0) {
      if (found < max) out[found] = r;
      found++;
    }
  }
  return found;
}

static void test_a_503_is_sent_again_with_a_fresh_nonce(void) {
  fixture f = start(NULL);
  stub_lock(f.server);
  add(503, NULL);
  add(503, NULL);
  stub_unlock(f.server);
  kw_heartbeat_result beat;
  kw_error err;
  CHECK(kw_lease_heartbeat(f.lease, &beat, &err) == KW_OK, "heartbeat: %s", err.message);
  stub_request sent[4];
  CHECK(requests_to(f.server, "/runtime/v1/leases/L-1/heartbeat", sent, 4) == 3, "three attempts");
  CHECK(strcmp(sent[0].query, sent[1].query) != 0 && strcmp(sent[1].query, sent[2].query) != 0,
        "each attempt has its own nonce");
  CHECK(wait_count == 2 && waits[0] <= 500 && waits[1] <= 1000, "waits %ld %ld (full jitter under 500, 1000)",
        waits[0], waits[1]);
  stop(&f);
}

static void test_retry_after_is_honoured_and_capped(void) {
  kw_retry_policy policy = KW_RETRY_POLICY_DEFAULT;
  policy.max_elapsed_ms = 3600000L;
  fixture f = start(&policy);
  stub_lock(f.server);
  add(429, "7");
  add(503, "120");
  stub_unlock(f.server);
  kw_error err;
  CHECK(kw_lease_consume(f.lease, 2, NULL, &err) == KW_OK, "consume: %s", err.message);
  CHECK(wait_count == 2 && waits[0] == 7000 && waits[1] == 30000, "waits %ld %ld, expected 7000 30000", waits[0],
        waits[1]);
  stop(&f);
}

/* A consume goes on a connection of its own: libcurl resends a request whose reused connection
   died by itself, with the same nonce, which the server would refuse (70001). The second attempt
   here is the SDK's, after a wait, with a fresh nonce. */
static void test_a_lost_answer_is_sent_again(void) {
  fixture f = start(NULL);
  stub_lock(f.server);
  add(0, NULL);
  stub_unlock(f.server);
  kw_consumption used;
  kw_error err;
  CHECK(kw_lease_consume(f.lease, 2, &used, &err) == KW_OK && used.remaining == 98, "consume: %s", err.message);
  stub_request sent[4];
  CHECK(requests_to(f.server, "/runtime/v1/leases/L-1/consume", sent, 4) == 2, "two attempts");
  CHECK(wait_count == 1, "%d waits: the retry was not the SDK's", wait_count);
  CHECK(strcmp(sent[0].query, sent[1].query) != 0, "the same nonce sent again");
  stop(&f);
}

static void test_a_refusal_is_not_sent_again(void) {
  fixture f = start(NULL);
  stub_lock(f.server);
  add(299, NULL);
  add(400, NULL);
  add(500, NULL);
  stub_unlock(f.server);
  kw_error err;
  CHECK(kw_lease_consume(f.lease, 5, NULL, &err) == KW_ERR_API, "299 refused");
  CHECK_STR(err.code, "90007");
  CHECK(kw_lease_heartbeat(f.lease, NULL, &err) == KW_ERR_API && err.http_status == 400, "400 refused");
  CHECK(kw_lease_heartbeat(f.lease, NULL, &err) == KW_ERR_API && err.http_status == 500, "500 refused");
  stub_request sent[4];
  CHECK(requests_to(f.server, "/runtime/v1/leases/L-1/consume", sent, 4) == 1, "one consume");
  CHECK(requests_to(f.server, "/runtime/v1/leases/L-1/heartbeat", sent, 4) == 2, "one attempt each");
  CHECK(wait_count == 0, "%d waits", wait_count);
  stop(&f);
}

static void test_it_gives_up_with_the_last_failure(void) {
  fixture f = start(NULL);
  stub_lock(f.server);
  for (int i = 0; i < 5; i++) add(503, "1");
  stub_unlock(f.server);
  kw_error err;
  CHECK(kw_lease_heartbeat(f.lease, NULL, &err) == KW_ERR_API && err.http_status == 503, "the last 503");
  stub_request sent[8];
  CHECK(requests_to(f.server, "/runtime/v1/leases/L-1/heartbeat", sent, 8) == 4, "max_attempts");
  CHECK(wait_count == 3 && waits[0] == 1000, "%d waits, the first %ld", wait_count, waits[0]);
  stop(&f);

  kw_retry_policy brief = KW_RETRY_POLICY_DEFAULT;
  brief.max_elapsed_ms = 10000L;
  f = start(&brief);
  stub_lock(f.server);
  add(429, "20");
  stub_unlock(f.server);
  CHECK(kw_lease_heartbeat(f.lease, NULL, &err) == KW_ERR_API && err.http_status == 429, "429 at once");
  CHECK(wait_count == 0, "no wait past max_elapsed_ms");
  stop(&f);

  kw_retry_policy none = KW_RETRY_POLICY_NONE;
  f = start(&none);
  stub_lock(f.server);
  add(0, NULL);
  stub_unlock(f.server);
  CHECK(kw_lease_consume(f.lease, 1, NULL, &err) == KW_ERR_NETWORK, "no answer, no retry");
  CHECK(requests_to(f.server, "/runtime/v1/leases/L-1/consume", sent, 8) == 1, "sent once");
  kw_retry_policy bad = {0, 1, 1, 1, 1};
  CHECK(kw_session_set_retry_policy(f.session, &bad, NULL) == KW_ERR_INVALID_ARGUMENT, "max_attempts 0 refused");
  kw_retry_policy kept;
  kw_session_get_retry_policy(f.session, &kept);
  CHECK(kept.max_attempts == 1, "the policy kept");
  stop(&f);
}

/* kw_error.retry_after_ms: the server's Retry-After once the retries gave up, 0 without one. */
static void test_the_error_carries_retry_after(void) {
  kw_retry_policy none = KW_RETRY_POLICY_NONE;
  fixture f = start(&none);
  kw_error err;
  stub_lock(f.server);
  add(503, "7");
  add(429, NULL);
  add(429, "Thu, 01 Jan 1970 00:00:01 GMT");
  add(429, "99999999999");
  add(503, "12");
  stub_unlock(f.server);
  CHECK(kw_lease_heartbeat(f.lease, NULL, &err) == KW_ERR_API && err.http_status == 503 && err.retry_after_ms == 7000,
        "503 with Retry-After 7: %ld ms", err.retry_after_ms);
  kw_error kept;
  kw_lease_last_error(f.lease, &kept);
  CHECK(kept.retry_after_ms == 7000, "the lease's last error keeps it: %ld", kept.retry_after_ms);
  CHECK(kw_lease_consume(f.lease, 1, NULL, &err) == KW_ERR_API && err.http_status == 429 && err.retry_after_ms == 0,
        "429 without Retry-After: %ld ms", err.retry_after_ms);
  CHECK(kw_lease_heartbeat(f.lease, NULL, &err) == KW_ERR_API && err.retry_after_ms == 0,
        "a date in the past: %ld ms", err.retry_after_ms);
  CHECK(kw_lease_heartbeat(f.lease, NULL, &err) == KW_ERR_API && err.retry_after_ms == KW_RETRY_AFTER_MAX_MS,
        "a huge Retry-After is held: %ld ms", err.retry_after_ms);
  /* A refusal after a Retry-After answer does not keep the earlier one. */
  stub_lock(f.server);
  add(299, NULL);
  stub_unlock(f.server);
  CHECK(kw_lease_heartbeat(f.lease, NULL, &err) == KW_ERR_API && err.retry_after_ms == 12000, "503 with 12 s");
  CHECK(kw_lease_consume(f.lease, 1, NULL, &err) == KW_ERR_API && err.http_status == 299 && err.retry_after_ms == 0,
        "a refusal has none: %ld ms", err.retry_after_ms);
  CHECK(wait_count == 0, "no retry with KW_RETRY_POLICY_NONE");

  /* The token endpoint's 429. */
  kw_session *other = NULL;
  CHECK(kw_session_new(stub_url(f.server), "kw_app", "s3cret", &other, &err) == KW_OK, "session");
  stub_lock(f.server);
  token_busy = "11";
  stub_unlock(f.server);
  char token[128];
  CHECK(kw_session_token(other, token, sizeof token, &err) == KW_ERR_AUTH && err.http_status == 429 &&
            err.retry_after_ms == 11000,
        "token 429: %s %ld %ld ms", err.code, err.http_status, err.retry_after_ms);
  kw_session_free(other);
  stop(&f);

  /* With retries: the last attempt's Retry-After. */
  f = start(NULL);
  stub_lock(f.server);
  for (int i = 0; i < 4; i++) add(503, i < 3 ? "1" : "2");
  stub_unlock(f.server);
  CHECK(kw_lease_heartbeat(f.lease, NULL, &err) == KW_ERR_API && err.retry_after_ms == 2000,
        "after four attempts: %ld ms", err.retry_after_ms);
  stop(&f);
}

static void test_a_consume_keeps_its_key_across_attempts(void) {
  fixture f = start(NULL);
  stub_lock(f.server);
  add(0, NULL);
  add(503, NULL);
  stub_unlock(f.server);
  kw_consumption used;
  kw_error err;
  CHECK(kw_lease_consume(f.lease, 2, &used, &err) == KW_OK && used.consumed == 2, "consume: %s", err.message);
  CHECK(kw_lease_consume(f.lease, 2, &used, &err) == KW_OK, "consume: %s", err.message);
  stub_request sent[8];
  CHECK(requests_to(f.server, "/runtime/v1/leases/L-1/consume", sent, 8) == 4, "four attempts");
  CHECK(strlen(sent[0].idempotency_key) == 22, "a 22-character key: %s", sent[0].idempotency_key);
  CHECK_STR(sent[1].idempotency_key, sent[0].idempotency_key);
  CHECK_STR(sent[2].idempotency_key, sent[0].idempotency_key);
  CHECK(strcmp(sent[3].idempotency_key, sent[0].idempotency_key) != 0 && sent[3].idempotency_key[0] != '\0',
        "a new key per consume");
  CHECK(strcmp(sent[0].query, sent[1].query) != 0 && strcmp(sent[1].query, sent[2].query) != 0, "fresh nonces");
  CHECK(wait_count == 2, "%d waits: every retry is the SDK's", wait_count);
  kw_lease_heartbeat(f.lease, NULL, &err);
  CHECK(requests_to(f.server, "/runtime/v1/leases/L-1/heartbeat", sent, 8) == 1 && sent[0].idempotency_key[0] == '\0',
        "a heartbeat carries no key");
  stop(&f);
}

static void test_a_consume_takes_the_callers_key(void) {
  fixture f = start(NULL);
  kw_error err;
  CHECK(kw_lease_consume_with_key(f.lease, 1, "job-42/step-3", NULL, &err) == KW_OK, "consume: %s", err.message);
  stub_request sent[4];
  CHECK(requests_to(f.server, "/runtime/v1/leases/L-1/consume", sent, 4) == 1, "one consume");
  CHECK_STR(sent[0].idempotency_key, "job-42/step-3");
  char long_key[300];
  memset(long_key, 'x', 256);
  long_key[256] = '\0';
  const char *bad[] = {"", "with space", long_key, "\xc3\xa9"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    CHECK(kw_lease_consume_with_key(f.lease, 1, bad[i], NULL, &err) == KW_ERR_INVALID_ARGUMENT, "bad key %zu", i);
  CHECK(requests_to(f.server, "/runtime/v1/leases/L-1/consume", sent, 4) == 1, "no bad key sent");
  char key[KW_IDEMPOTENCY_KEY_SIZE];
  CHECK(kw_new_idempotency_key(key, &err) == KW_OK && strlen(key) == 22 && strspn(key,
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == 22, "a base64url key: %s", key);
  stop(&f);
}

int main(void) {
  if (kw_global_init(NULL) != KW_OK) return 2;
  test_a_503_is_sent_again_with_a_fresh_nonce();
  test_retry_after_is_honoured_and_capped();
  test_a_lost_answer_is_sent_again();
  test_a_refusal_is_not_sent_again();
  test_it_gives_up_with_the_last_failure();
  test_the_error_carries_retry_after();
  test_a_consume_keeps_its_key_across_attempts();
  test_a_consume_takes_the_callers_key();
  kw_global_cleanup();
  printf("%d passed, %d failed\n", check_passed, check_failures);
  return check_failures == 0 ? 0 : 1;
}
