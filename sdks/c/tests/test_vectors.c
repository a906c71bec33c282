/*
 * Every case of sdks/conformance/leases.json, relay-leases.json and webhooks.json, read at run time:
 *
 *   test_vectors CONFORMANCE_DIR              run them all
 *   test_vectors CONFORMANCE_DIR --bench [N]  time kw_verify_lease on the valid vector of leases.json and
 *                                             relay-leases.json (N calls, 20000): every signature
 *                                             checked, then the key set remembering them
 *
 * A case is judged by its expect alone; an expectation this program does not know fails it, so a
 * case added to the suite cannot pass unhandled.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "internal.h" /* kw__jwks_remember: the benchmark's cold runs */

static int passed = 0, failed = 0;

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    perror(path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)n + 1);
  if (fread(text, 1, (size_t)n, f) != (size_t)n) {
    perror(path);
    exit(2);
  }
  text[n] = '\0';
  fclose(f);
  return text;
}

static cJSON *load(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  char *text = read_all(path);
  cJSON *doc = cJSON_Parse(text);
  free(text);
  if (doc == NULL) {
    fprintf(stderr, "%s is not JSON\n", path);
    exit(2);
  }
  const cJSON *version = cJSON_GetObjectItemCaseSensitive(doc, "version");
  if (!cJSON_IsNumber(version) || version->valueint != 1) {
    fprintf(stderr, "%s: version %s is not the version 1 this SDK reads\n", path, cJSON_Print(version));
    exit(2);
  }
  return doc;
}

static const char *text_of(const cJSON *object, const char *name) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, name);
  return cJSON_IsString(item) ? item->valuestring : NULL;
}

static void verdict(const char *suite, const char *name, bool ok, const char *why) {
  if (ok) {
    passed++;
    printf("ok   %s/%s\n", suite, name);
  } else {
    failed++;
    printf("FAIL %s/%s: %s\n", suite, name, why);
  }
}

/* An expected claim (a string or null) against what the SDK answered. */
static bool same_claim(const cJSON *want, const char *got) {
  if (cJSON_IsNull(want)) return got == NULL;
  return cJSON_IsString(want) && got != NULL && strcmp(want->valuestring, got) == 0;
}

/* The saved key set, loaded as a program loads its JWKS file. */
static kw_jwks *saved_jwks(const cJSON *doc) {
  char *json = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(doc, "jwks"));
  char path[] = "/tmp/keyward-c-jwks-XXXXXX";
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

/* One case of a lease suite (leases.json, relay-leases.json: the same shape). */
static void lease_case(const char *suite, const kw_jwks *jwks, const cJSON *c) {
  const char *name = text_of(c, "name");
  const cJSON *expect = cJSON_GetObjectItemCaseSensitive(c, "expect");
  const cJSON *now = cJSON_GetObjectItemCaseSensitive(c, "now");
  const char *token = text_of(c, "token");
  const char *fingerprint = text_of(c, "fingerprint");
  const cJSON *audience = cJSON_GetObjectItemCaseSensitive(c, "audience");
  const cJSON *valid = cJSON_GetObjectItemCaseSensitive(expect, "valid");
  char why[1024];
  if (name == NULL || token == NULL || fingerprint == NULL || !cJSON_IsNumber(now) || !cJSON_IsBool(valid) ||
      (audience != NULL && !cJSON_IsString(audience))) {
    verdict(suite, name ? name : "?", false, "a case this program cannot read");
    return;
  }
  kw_claims *claims = NULL;
  kw_error err;
  kw_status st = kw_verify_lease(jwks, token, fingerprint, audience ? audience->valuestring : NULL,
                                 (int64_t)now->valuedouble * 1000, &claims, &err);
  bool ok = true;
  why[0] = '\0';
  if (cJSON_IsTrue(valid)) {
    if (st != KW_OK) {
      snprintf(why, sizeof why, "refused (%s: %s), expected valid", err.code, err.message);
      ok = false;
    }
  } else if (st != KW_ERR_LEASE_REFUSED) {
    snprintf(why, sizeof why, "answered %s, expected a refusal", kw_status_name(st));
    ok = false;
  }
  const cJSON *field;
  cJSON_ArrayForEach(field, expect) {
    if (!ok) break;
    const char *key = field->string;
    if (strcmp(key, "valid") == 0) continue;
    const char *got = NULL;
    if (strcmp(key, "reason") == 0) got = st == KW_ERR_LEASE_REFUSED ? err.code : NULL;
    else if (claims == NULL) {
      snprintf(why, sizeof why, "no claims to compare %s with", key);
      ok = false;
      break;
    } else if (strcmp(key, "sub") == 0) got = claims->sub;
    else if (strcmp(key, "assetNum") == 0) got = claims->asset_num;
    else if (strcmp(key, "holderKind") == 0) got = claims->holder_kind;
    else if (strcmp(key, "expBound") == 0) got = claims->exp_bound;
    else {
      snprintf(why, sizeof why, "an expectation this SDK's test does not know: %s", key);
      ok = false;
      break;
    }
    if (!same_claim(field, got)) {
      char *want = cJSON_PrintUnformatted(field);
      snprintf(why, sizeof why, "%s is %s, expected %s", key, got ? got : "null", want);
      free(want);
      ok = false;
    }
  }
  /* A refusal must name its reason: the suite compares it. */
  if (ok && cJSON_IsFalse(valid) && cJSON_GetObjectItemCaseSensitive(expect, "reason") == NULL) {
    snprintf(why, sizeof why, "a refusal case without a reason");
    ok = false;
  }
  kw_claims_free(claims);
  verdict(suite, name, ok, why);
}

/* Every case of a lease suite, with its own key set loaded from a file; how many cases it has. */
static size_t lease_suite(const char *suite, const cJSON *doc) {
  kw_jwks *jwks = saved_jwks(doc);
  int passed_before = passed;
  size_t cases = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "cases")) {
    lease_case(suite, jwks, c);
    cases++;
  }
  kw_jwks_free(jwks);
  printf("%s: %d of %zu cases passed\n", suite, passed - passed_before, cases);
  return cases;
}

static void webhook_case(const cJSON *c, int tolerance) {
  const char *name = text_of(c, "name");
  const cJSON *expect = cJSON_GetObjectItemCaseSensitive(c, "expect");
  const cJSON *secrets = cJSON_GetObjectItemCaseSensitive(c, "secrets");
  const cJSON *headers = cJSON_GetObjectItemCaseSensitive(c, "headers");
  const cJSON *now = cJSON_GetObjectItemCaseSensitive(c, "now");
  const char *body = text_of(c, "body");
  const cJSON *valid = cJSON_GetObjectItemCaseSensitive(expect, "valid");
  if (name == NULL || !cJSON_IsArray(secrets) || !cJSON_IsObject(headers) || body == NULL || !cJSON_IsNumber(now) ||
      !cJSON_IsBool(valid)) {
    verdict("webhooks", name ? name : "?", false, "a case this program cannot read");
    return;
  }
  const char *list[16];
  size_t count = 0;
  const cJSON *secret;
  cJSON_ArrayForEach(secret, secrets) {
    if (cJSON_IsString(secret) && count < 16) list[count++] = secret->valuestring;
  }
  kw_webhook_event *event = NULL;
  kw_error err;
  kw_status st = kw_verify_webhook_ms(list, count, body, strlen(body), text_of(headers, "webhook-id"),
                                      text_of(headers, "webhook-timestamp"), text_of(headers, "webhook-signature"),
                                      (int64_t)now->valuedouble * 1000, (int64_t)tolerance * 1000, &event, &err);
  char why[1024] = "";
  bool ok = true;
  if (cJSON_IsTrue(valid) && st != KW_OK) {
    snprintf(why, sizeof why, "refused (%s: %s), expected valid", err.code, err.message);
    ok = false;
  } else if (cJSON_IsFalse(valid) && st != KW_ERR_WEBHOOK_REFUSED) {
    snprintf(why, sizeof why, "answered %s, expected a refusal", kw_status_name(st));
    ok = false;
  }
  const cJSON *field;
  cJSON_ArrayForEach(field, expect) {
    if (!ok) break;
    const char *key = field->string;
    if (strcmp(key, "valid") == 0) continue;
    const char *got = NULL;
    if (event == NULL) {
      snprintf(why, sizeof why, "no event to compare %s with", key);
      ok = false;
      break;
    } else if (strcmp(key, "id") == 0) got = event->id;
    else if (strcmp(key, "type") == 0) got = event->type;
    else {
      snprintf(why, sizeof why, "an expectation this SDK's test does not know: %s", key);
      ok = false;
      break;
    }
    if (!same_claim(field, got)) {
      snprintf(why, sizeof why, "%s is %s, expected %s", key, got ? got : "null",
               cJSON_IsString(field) ? field->valuestring : "?");
      ok = false;
    }
  }
  kw_webhook_event_free(event);
  verdict("webhooks", name, ok, why);
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double clock_us(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void summary(const char *what, double *samples, long n) {
  double total = 0;
  for (long i = 0; i < n; i++) total += samples[i];
  qsort(samples, (size_t)n, sizeof *samples, compare_double);
  double median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  printf("kw_verify_lease, %s: %ld calls, mean %.1f us, median %.1f us, p99 %.1f us\n", what, n, total / (double)n,
         median, samples[(size_t)((double)n * 0.99)]);
}

/* Times kw_verify_lease (claims made and freed, as a program uses it) on a suite's valid case. */
static int bench(const char *suite, const cJSON *leases, const char *case_name, long n) {
  kw_jwks *jwks = saved_jwks(leases);
  const cJSON *c, *chosen = NULL;
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(leases, "cases")) {
    const char *name = text_of(c, "name");
    if (name != NULL && strcmp(name, case_name) == 0) chosen = c;
  }
  if (chosen == NULL) {
    fprintf(stderr, "%s: no case named %s\n", suite, case_name);
    kw_jwks_free(jwks);
    return 2;
  }
  const char *token = text_of(chosen, "token");
  const char *fingerprint = text_of(chosen, "fingerprint");
  const char *audience = text_of(chosen, "audience");
  int64_t now_ms = (int64_t)cJSON_GetObjectItemCaseSensitive(chosen, "now")->valuedouble * 1000;
  double *wall = malloc(sizeof *wall * (size_t)n);
  double *cpu = malloc(sizeof *cpu * (size_t)n);
  for (int remembered = 0; remembered < 2; remembered++) {
    kw__jwks_remember(jwks, remembered);
    for (long i = 0; i < 200; i++) { /* warm up */
      kw_claims *claims = NULL;
      kw_verify_lease(jwks, token, fingerprint, audience, now_ms, &claims, NULL);
      kw_claims_free(claims);
    }
    for (long i = 0; i < n; i++) {
      kw_claims *claims = NULL;
      double w0 = clock_us(CLOCK_MONOTONIC), c0 = clock_us(CLOCK_THREAD_CPUTIME_ID);
      kw_status st = kw_verify_lease(jwks, token, fingerprint, audience, now_ms, &claims, NULL);
      kw_claims_free(claims);
      cpu[i] = clock_us(CLOCK_THREAD_CPUTIME_ID) - c0;
      wall[i] = clock_us(CLOCK_MONOTONIC) - w0;
      if (st != KW_OK) {
        fprintf(stderr, "%s: %s did not verify\n", suite, case_name);
        free(wall);
        free(cpu);
        kw_jwks_free(jwks);
        return 1;
      }
    }
    const char *how = remembered ? "signatures remembered" : "signatures verified  ";
    char what[160];
    snprintf(what, sizeof what, "%s, %s, wall clock", case_name, how);
    summary(what, wall, n);
    snprintf(what, sizeof what, "%s, %s, CPU time  ", case_name, how);
    summary(what, cpu, n);
  }
  free(wall);
  free(cpu);
  kw_jwks_free(jwks);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CONFORMANCE_DIR [--bench [N]]\n", argv[0]);
    return 2;
  }
  if (kw_global_init(NULL) != KW_OK) return 2;
  cJSON *leases = load(argv[1], "leases.json");
  cJSON *relay_leases = load(argv[1], "relay-leases.json");
  cJSON *webhooks = load(argv[1], "webhooks.json");
  int rc;
  if (argc >= 3 && strcmp(argv[2], "--bench") == 0) {
    long n = argc >= 4 ? strtol(argv[3], NULL, 10) : 20000;
    rc = bench("leases", leases, "valid", n > 0 ? n : 20000);
    if (rc == 0) rc = bench("relay-leases", relay_leases, "relay-valid", n > 0 ? n : 20000);
  } else {
    size_t lease_cases = lease_suite("leases", leases);
    size_t relay_cases = lease_suite("relay-leases", relay_leases);
    const cJSON *c;
    size_t webhook_cases = 0;
    const cJSON *tol = cJSON_GetObjectItemCaseSensitive(webhooks, "toleranceSeconds");
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(webhooks, "cases")) {
      webhook_case(c, cJSON_IsNumber(tol) ? tol->valueint : 0);
      webhook_cases++;
    }
    if (lease_cases == 0 || relay_cases == 0 || webhook_cases == 0) {
      printf("FAIL: a suite without cases\n");
      failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    rc = failed == 0 ? 0 : 1;
  }
  cJSON_Delete(leases);
  cJSON_Delete(relay_leases);
  cJSON_Delete(webhooks);
  kw_global_cleanup();
  return rc;
}
