/*
 * The live scenario of the SDK conformance suite (sdks/conformance/README.md) with the C SDK, step
 * for step as scripts/sdk-live-reference.ts:
 *
 *   cd /work/main && npx tsx scripts/sdk-live.ts --scenario 'c=bash sdks/c/tests/live_scenario.sh'
 *
 * One JSON object per line on stdout; anything else goes to stderr.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "keyward.h"

static const char *env(const char *name) {
  const char *value = getenv(name);
  if (value == NULL || *value == '\0') {
    fprintf(stderr, "%s is not set\n", name);
    exit(2);
  }
  return value;
}

static void fail(const char *what, const kw_error *err) {
  fprintf(stderr, "%s: %s %s [%s] %s (HTTP %ld)\n", what, kw_status_name(err->status), err->code, err->message,
          err->cause, err->http_status);
  exit(1);
}

static void report(const char *line) {
  printf("%s\n", line);
  fflush(stdout);
}

static kw_lease *check_out(kw_session *session, const char *fingerprint, int offline_days, kw_error *err) {
  kw_checkout_params p = {0};
  p.fingerprint = fingerprint;
  p.asset_num = getenv("KEYWARD_ASSET_NUM");
  p.crm_product_id = getenv("KEYWARD_PRODUCT");
  p.offline_days = offline_days;
  kw_lease *lease = NULL;
  kw_checkout(session, &p, &lease, err);
  return lease;
}

/* The code of a call that must be refused by Keyward. */
static const char *code_of(kw_status st, const kw_error *err, const char *what) {
  if (st == KW_OK) {
    fprintf(stderr, "%s: the call was not refused\n", what);
    exit(1);
  }
  if (st != KW_ERR_API) fail(what, err);
  return err->code;
}

int main(void) {
  kw_error err;
  if (kw_global_init(&err) != KW_OK) fail("init", &err);
  env("KEYWARD_ASSET_NUM");
  env("KEYWARD_PRODUCT");
  kw_session *session = NULL;
  if (kw_session_new(env("KEYWARD_URL"), env("KEYWARD_APP_KEY"), env("KEYWARD_APP_SECRET"), &session, &err) != KW_OK)
    fail("session", &err);
  char line[1024];

  /* 1. A seat for the first machine. */
  const char *first = "fp-live-first-machine";
  kw_lease *lease = check_out(session, first, 0, &err);
  if (lease == NULL) fail("check-out", &err);
  snprintf(line, sizeof line, "{\"step\":\"checked-out\",\"leaseId\":\"%s\",\"heartbeatIntervalSeconds\":%d}",
           kw_lease_id(lease), kw_lease_heartbeat_interval(lease));
  report(line);

  /* 2. Three heartbeats, one after another. */
  for (int i = 0; i < 3; i++) {
    if (kw_lease_heartbeat(lease, NULL, &err) != KW_OK) fail("heartbeat", &err);
  }
  report("{\"step\":\"heartbeats\",\"count\":3}");

  /* 3. The SDK's heartbeat thread, stopped after one interval and a second and a half. */
  if (kw_lease_start_heartbeats(lease, NULL, NULL, &err) != KW_OK) fail("start heartbeats", &err);
  long wait_ms = (long)kw_lease_heartbeat_interval(lease) * 1000 + 1500;
  struct timespec pause = {wait_ms / 1000, (wait_ms % 1000) * 1000000L};
  nanosleep(&pause, NULL);
  kw_lease_stop_heartbeats(lease);
  snprintf(line, sizeof line, "{\"step\":\"background\",\"beats\":%llu}",
           (unsigned long long)kw_lease_heartbeat_count(lease));
  report(line);

  /* 4. Consume 2. */
  kw_consumption used;
  if (kw_lease_consume(lease, 2, &used, &err) != KW_OK) fail("consume", &err);
  if (used.remaining == KW_UNSET) snprintf(line, sizeof line, "{\"step\":\"consumed\",\"consumed\":%lld,\"remaining\":null}", (long long)used.consumed);
  else snprintf(line, sizeof line, "{\"step\":\"consumed\",\"consumed\":%lld,\"remaining\":%lld}", (long long)used.consumed, (long long)used.remaining);
  report(line);

  /* 5. A second machine while the first holds the one seat. */
  kw_lease *second = check_out(session, "fp-live-second-machine", 0, &err);
  if (second != NULL) kw_lease_close(second, NULL);
  snprintf(line, sizeof line, "{\"step\":\"refused\",\"code\":\"%s\"}",
           code_of(second == NULL ? err.status : KW_OK, &err, "second check-out"));
  report(line);

  /* 6. Check-in: the end of the lease's scope. */
  if (kw_lease_close(lease, &err) != KW_OK) fail("check-in", &err);
  report("{\"step\":\"checked-in\"}");

  /* 7. An offline lease, the JWKS saved and read back, verified without the server. */
  const char *offline_fp = "fp-live-offline-machine";
  kw_lease *offline = check_out(session, offline_fp, 1, &err);
  if (offline == NULL) fail("offline check-out", &err);
  if (kw_lease_offline_token(offline) == NULL) {
    fprintf(stderr, "no offline lease in the answer\n");
    return 1;
  }
  kw_jwks *fetched = NULL, *saved = NULL;
  if (kw_jwks_fetch(session, &fetched, &err) != KW_OK) fail("jwks", &err);
  if (kw_jwks_save(fetched, env("KEYWARD_JWKS_FILE"), &err) != KW_OK) fail("save jwks", &err);
  kw_jwks_free(fetched);
  if (kw_jwks_load(env("KEYWARD_JWKS_FILE"), &saved, &err) != KW_OK) fail("load jwks", &err);
  kw_claims *claims = NULL;
  if (kw_verify_lease(saved, kw_lease_offline_token(offline), offline_fp, NULL, 0, &claims, &err) != KW_OK)
    fail("verify", &err);
  snprintf(line, sizeof line, "{\"step\":\"offline-verified\",\"assetNum\":\"%s\",\"expBound\":\"%s\"}",
           claims->asset_num, claims->exp_bound ? claims->exp_bound : "null");
  report(line);
  kw_claims_free(claims);
  kw_jwks_free(saved);

  /* 8–9. The driver disables the lock; the next heartbeat is refused. */
  snprintf(line, sizeof line, "{\"step\":\"await-revoke\",\"leaseId\":\"%s\"}", kw_lease_id(offline));
  report(line);
  char reply[256];
  if (fgets(reply, sizeof reply, stdin) == NULL) {
    fprintf(stderr, "stdin closed before the revocation\n");
    return 1;
  }
  kw_status st = kw_lease_heartbeat(offline, NULL, &err);
  snprintf(line, sizeof line, "{\"step\":\"revoked\",\"code\":\"%s\"}", code_of(st, &err, "heartbeat after revoke"));
  report(line);
  if (kw_lease_get_state(offline, NULL) != KW_LEASE_ENDED) {
    fprintf(stderr, "the lease is not marked ended\n");
    return 1;
  }
  kw_lease_free(offline);
  kw_session_free(session);
  kw_global_cleanup();
  report("{\"step\":\"done\"}");
  return 0;
}
