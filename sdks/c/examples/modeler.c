/*
 * modeler: a licensed program, licensed with Keyward's C SDK.
 *
 *   modeler run ASSET_NUM PRODUCT [--seconds N] [--offline-days D]
 *       checks out a seat of PRODUCT (its crmProductId) on the lock ASSET_NUM, heartbeats it on
 *       a background thread, "solves" once a second (consuming 1 of the product each time), and
 *       checks the seat in when it ends: after N seconds, at Ctrl-C, or when the server revokes
 *       the lease. With --offline-days it also keeps the signed lease and the server's keys in
 *       the state directory, for:
 *   modeler verify
 *       without the server: verifies the kept lease against the kept keys, for this machine.
 *
 * Environment: KEYWARD_URL (default http://127.0.0.1:8080), KEYWARD_APP_KEY, KEYWARD_APP_SECRET,
 * MODELER_STATE_DIR (default /tmp/keyward-modeler).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <keyward.h>

static volatile sig_atomic_t interrupted = 0;
static atomic_int revoked = 0;

static void on_signal(int sig) {
  (void)sig;
  interrupted = 1;
}

static void die(const char *what, const kw_error *err) {
  if (err->status == KW_ERR_API)
    fprintf(stderr, "modeler: %s: Keyward refused (%s): %s\n", what, err->code, err->message);
  else
    fprintf(stderr, "modeler: %s: %s (%s)\n", what, err->message, kw_status_name(err->status));
  exit(1);
}

static const char *required_env(const char *name) {
  const char *v = getenv(name);
  if (v == NULL || *v == '\0') {
    fprintf(stderr, "modeler: %s is not set\n", name);
    exit(2);
  }
  return v;
}

/* This machine: a SHA-256 of its machine id (or host name), 32 hex digits. */
static void machine_fingerprint(char out[33]) {
  char id[256] = "";
  FILE *f = fopen("/etc/machine-id", "r");
  if (f == NULL || fgets(id, sizeof id, f) == NULL) gethostname(id, sizeof id);
  if (f != NULL) fclose(f);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(id, strlen(id), digest, &len, EVP_sha256(), NULL);
  for (int i = 0; i < 16; i++) sprintf(out + 2 * i, "%02x", digest[i]);
}

static void state_paths(char *lease_path, char *keys_path, size_t size) {
  const char *dir = getenv("MODELER_STATE_DIR");
  if (dir == NULL || *dir == '\0') dir = "/tmp/keyward-modeler";
  if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
    fprintf(stderr, "modeler: cannot make %s: %s\n", dir, strerror(errno));
    exit(1);
  }
  snprintf(lease_path, size, "%s/lease.jws", dir);
  snprintf(keys_path, size, "%s/jwks.json", dir);
}

static void format_time(int64_t epoch_ms, char *out, size_t size) {
  time_t t = (time_t)(epoch_ms / 1000);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, size, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

/* The heartbeat thread's report: only a flag here, the main loop acts on it. */
static void on_beat(kw_lease *lease, kw_status status, const kw_error *err, void *user) {
  (void)user;
  if (status == KW_OK) return;
  if (kw_lease_get_state(lease, NULL) == KW_LEASE_ENDED) {
    if (!atomic_exchange(&revoked, 1))
      fprintf(stderr, "modeler: the license server ended the lease (%s): %s\n", err->code, err->message);
  } else {
    fprintf(stderr, "modeler: heartbeat failed, trying again at the next one: %s\n", err->message);
  }
}

static int run(const char *asset_num, const char *product, long seconds, int offline_days) {
  const char *url = getenv("KEYWARD_URL");
  if (url == NULL || *url == '\0') url = "http://127.0.0.1:8080";
  kw_error err;
  kw_session *session = NULL;
  if (kw_session_new(url, required_env("KEYWARD_APP_KEY"), required_env("KEYWARD_APP_SECRET"), &session, &err) != KW_OK)
    die("session", &err);
  kw_session_set_scope(session, "auth_runtime", NULL);

  char fingerprint[33];
  machine_fingerprint(fingerprint);
  kw_checkout_params params = {0};
  params.fingerprint = fingerprint;
  params.asset_num = asset_num;
  params.crm_product_id = product;
  params.offline_days = offline_days;

  /* The lease is checked in when this scope ends, however it ends. */
  KW_LEASE_SCOPED kw_lease *lease = NULL;
  if (kw_checkout(session, &params, &lease, &err) != KW_OK) {
    kw_session_free(session);
    die("check-out", &err);
  }
  char when[64];
  format_time(kw_lease_expires_at_ms(lease), when, sizeof when);
  kw_limits limits;
  kw_lease_limits(lease, &limits);
  char seats[32] = "unlimited";
  if (limits.concurrent != KW_UNSET) snprintf(seats, sizeof seats, "%lld", (long long)limits.concurrent);
  printf("lease %s (%s) for %s on %s: %s seats, heartbeat every %d s, alive until %s\n", kw_lease_id(lease),
         kw_lease_status(lease), product, kw_lease_asset_num(lease), seats, kw_lease_heartbeat_interval(lease), when);

  if (offline_days > 0 && kw_lease_offline_token(lease) != NULL) {
    char lease_path[512], keys_path[512];
    state_paths(lease_path, keys_path, sizeof lease_path);
    kw_jwks *keys = NULL;
    if (kw_lease_token_save(kw_lease_offline_token(lease), lease_path, &err) != KW_OK ||
        kw_jwks_fetch(session, &keys, &err) != KW_OK || kw_jwks_save(keys, keys_path, &err) != KW_OK)
      die("keeping the offline lease", &err);
    kw_jwks_free(keys);
    printf("offline lease kept in %s, the server's keys in %s\n", lease_path, keys_path);
  }
  kw_session_free(session); /* the lease holds what it needs */

  if (kw_lease_start_heartbeats(lease, on_beat, NULL, &err) != KW_OK) die("heartbeats", &err);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  printf("working%s (Ctrl-C to stop)\n", seconds > 0 ? "" : " until stopped");
  fflush(stdout);
  for (long tick = 1; !interrupted && !atomic_load(&revoked) && (seconds <= 0 || tick <= seconds); tick++) {
    struct timespec second = {1, 0};
    while (nanosleep(&second, &second) != 0 && errno == EINTR && !interrupted) {
    }
    if (interrupted) break;
    kw_consumption used;
    if (kw_lease_consume(lease, 1, &used, &err) != KW_OK) {
      if (kw_lease_get_state(lease, NULL) == KW_LEASE_ENDED) { /* revoked, expired: stop working */
        if (!atomic_exchange(&revoked, 1))
          fprintf(stderr, "modeler: the license server ended the lease (%s): %s\n", err.code, err.message);
        break;
      }
      if (err.status == KW_ERR_API && strcmp(err.code, "90007") == 0) {
        printf("solve %ld refused: %s\n", tick, err.message);
        break;
      }
      fprintf(stderr, "modeler: consume: %s\n", err.message); /* the network, say: go on */
      continue;
    }
    if (used.remaining == KW_UNSET) printf("solve %ld: %lld consumed (no limit)\n", tick, (long long)used.consumed);
    else printf("solve %ld: %lld consumed, %lld left\n", tick, (long long)used.consumed, (long long)used.remaining);
    fflush(stdout);
  }
  if (interrupted) printf("interrupted\n");
  printf("%llu background heartbeats\n", (unsigned long long)kw_lease_heartbeat_count(lease));

  kw_checkin_result done;
  if (kw_lease_get_state(lease, NULL) == KW_LEASE_ACTIVE) {
    if (kw_lease_check_in(lease, &done, &err) != KW_OK) die("check-in", &err);
    format_time(done.seat_free_at_ms, when, sizeof when);
    printf("checked in after %lld s of use; the seat is free for another machine at %s\n",
           (long long)done.used_seconds, when);
  }
  return atomic_load(&revoked) ? 3 : 0;
}

static int verify(void) {
  char lease_path[512], keys_path[512];
  state_paths(lease_path, keys_path, sizeof lease_path);
  kw_error err;
  char *token = NULL;
  kw_jwks *keys = NULL;
  if (kw_lease_token_load(lease_path, &token, &err) != KW_OK) die("reading the lease (run with --offline-days first)", &err);
  if (kw_jwks_load(keys_path, &keys, &err) != KW_OK) die("reading the keys", &err);
  char fingerprint[33];
  machine_fingerprint(fingerprint);
  kw_claims *claims = NULL;
  kw_status st = kw_verify_lease(keys, token, fingerprint, NULL, 0, &claims, &err);
  kw_string_free(token);
  kw_jwks_free(keys);
  if (st == KW_ERR_LEASE_REFUSED) {
    printf("offline lease refused: %s (%s)\n", err.code, err.message);
    return 1;
  }
  if (st != KW_OK) die("verify", &err);
  char until[64];
  format_time(claims->exp * 1000, until, sizeof until);
  printf("offline lease verified: %s on %s, for this machine until %s (bound by %s)\n",
         claims->product.crm_product_id ? claims->product.crm_product_id : claims->product.product_uri,
         claims->asset_num, until, claims->exp_bound ? claims->exp_bound : "-");
  kw_claims_free(claims);
  return 0;
}

static int usage(void) {
  fprintf(stderr, "usage: modeler run ASSET_NUM PRODUCT [--seconds N] [--offline-days D]\n"
                  "       modeler verify\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 2) return usage();
  kw_error err;
  if (kw_global_init(&err) != KW_OK) die("init", &err);
  int rc;
  if (strcmp(argv[1], "run") == 0 && argc >= 4) {
    long seconds = 0;
    int offline_days = 0;
    for (int i = 4; i < argc; i++) {
      if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) seconds = strtol(argv[++i], NULL, 10);
      else if (strcmp(argv[i], "--offline-days") == 0 && i + 1 < argc) offline_days = atoi(argv[++i]);
      else return usage();
    }
    rc = run(argv[2], argv[3], seconds, offline_days);
  } else if (strcmp(argv[1], "verify") == 0) {
    rc = verify();
  } else {
    rc = usage();
  }
  kw_global_cleanup();
  return rc;
}
