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
 * A machine with no network at all activates offline (docs/activation.md):
 *
 *   modeler request ASSET_NUM PRODUCT --days N [--app KEY]
 *       writes an activation request for this machine (kept in the state directory until its
 *       answer comes back) and shows its typed code and its file, to take to Keyward.
 *   modeler activate ANSWER... [--jwks FILE]
 *       verifies the answer (its typed code, as one argument or several, or the answer file's
 *       path) against the pending request and the key set (the state directory's jwks.json, or
 *       the vendor's FILE for a machine that was never online), and keeps the activation.
 *   modeler run-offline PRODUCT [--seconds N] [--jwks FILE]
 *       works as run does, consuming locally, while the kept activation verifies.
 *   modeler return
 *       deletes the activation and shows the return code that frees its seat early.
 *
 * Refusals (a mistyped code, an answer for another request or machine, an expired activation)
 * exit 2 after naming the reason.
 *
 * Environment: KEYWARD_URL (default http://127.0.0.1:8080), KEYWARD_APP_KEY, KEYWARD_APP_SECRET,
 * MODELER_STATE_DIR (default $TMPDIR/keyward-modeler, /tmp/keyward-modeler without TMPDIR).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
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

/* A file of the state directory (made when missing): MODELER_STATE_DIR, else $TMPDIR/keyward-modeler. */
static void state_path(const char *name, char *out, size_t size) {
  char dir[400];
  const char *set = getenv("MODELER_STATE_DIR");
  const char *tmp = getenv("TMPDIR");
  if (set != NULL && *set != '\0') snprintf(dir, sizeof dir, "%s", set);
  else snprintf(dir, sizeof dir, "%s/keyward-modeler", tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') dir[--n] = '\0';
  if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
    fprintf(stderr, "modeler: cannot make %s: %s\n", dir, strerror(errno));
    exit(1);
  }
  snprintf(out, size, "%s/%s", dir, name);
}

static void state_paths(char *lease_path, char *keys_path, size_t size) {
  state_path("lease.jws", lease_path, size);
  state_path("jwks.json", keys_path, size);
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
  format_time(claims->exp_s * 1000, until, sizeof until);
  printf("offline lease verified: %s on %s, for this machine until %s (bound by %s)\n",
         claims->product.crm_product_id ? claims->product.crm_product_id : claims->product.product_uri,
         claims->asset_num, until, claims->exp_bound ? claims->exp_bound : "-");
  kw_claims_free(claims);
  return 0;
}

/* ---- offline activation ---- */

#define REQUEST_FILE "activation-request.json"
#define ACTIVATION_FILE "activation.txt"

static bool exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static int request(const char *asset_num, const char *product, int days, const char *app_key) {
  char request_path[512], activation_path[512];
  state_path(REQUEST_FILE, request_path, sizeof request_path);
  state_path(ACTIVATION_FILE, activation_path, sizeof activation_path);
  if (exists(activation_path)) {
    printf("an activation is kept in %s: modeler return first\n", activation_path);
    return 2;
  }
  char fingerprint[33];
  machine_fingerprint(fingerprint);
  kw_activation_params params = {0};
  params.app_key = app_key;
  params.asset_num = asset_num;
  params.crm_product_id = product;
  params.days = days;
  params.fingerprint = fingerprint;
  kw_activation_request req;
  kw_error err;
  char *code = NULL;
  if (kw_activation_request_create(&params, &req, &err) != KW_OK || kw_activation_request_code(&req, &code, &err) != KW_OK)
    die("request", &err);
  /* The request file is also the pending request: its code holds the nonce the answer must carry. */
  if (kw_activation_request_save(&req, request_path, &err) != KW_OK) die("keeping the request", &err);
  printf("activation request for %d days of %s on %s, for this machine\n", days, product, asset_num);
  printf("request code: %s\n", code);
  printf("request file: %s\n", request_path);
  printf("take either to Keyward, then: modeler activate ANSWER\n");
  kw_string_free(code);
  return 0;
}

/*
 * The kept request and the key set (jwks_file, else the state directory's), or a message and exit
 * 2: a machine that asked nothing, or has no keys, cannot verify.
 */
static void activation_inputs(const char *jwks_file, kw_activation_request *req, kw_jwks **keys) {
  char request_path[512], keys_path[512];
  state_path(REQUEST_FILE, request_path, sizeof request_path);
  state_path("jwks.json", keys_path, sizeof keys_path);
  kw_error err;
  if (!exists(request_path)) {
    printf("no activation request in %s: modeler request first\n", request_path);
    exit(2);
  }
  if (kw_activation_request_load(request_path, req, &err) != KW_OK) die("reading the request", &err);
  const char *from = jwks_file != NULL ? jwks_file : keys_path;
  if (!exists(from)) {
    printf("no key set in %s: give the vendor's with --jwks FILE\n", from);
    exit(2);
  }
  if (kw_jwks_load(from, keys, &err) != KW_OK) die("reading the key set", &err);
}

/* A refusal by reason; a mistyped typed code names its group. */
static int refused(const kw_error *err) {
  printf("%s\n", err->message);
  if (err->group > 0) printf("group %d is mistyped: type it again\n", err->group);
  return 2;
}

static int activate(int count, char **words, const char *jwks_file) {
  kw_error err;
  char *answer = NULL;
  if (count == 1 && exists(words[0])) {
    if (kw_lease_token_load(words[0], &answer, &err) != KW_OK) die("reading the answer", &err);
  } else {
    size_t n = 1;
    for (int i = 0; i < count; i++) n += strlen(words[i]) + 1;
    answer = malloc(n);
    if (answer == NULL) exit(1);
    answer[0] = '\0';
    for (int i = 0; i < count; i++) {
      if (i > 0) strcat(answer, " ");
      strcat(answer, words[i]);
    }
  }
  kw_activation_request req;
  kw_jwks *keys = NULL;
  activation_inputs(jwks_file, &req, &keys);
  char fingerprint[33];
  machine_fingerprint(fingerprint);
  kw_activated_lease lease;
  kw_status st = kw_verify_activation(keys, answer, &req, fingerprint, 0, &lease, &err);
  if (st == KW_ERR_LEASE_REFUSED) {
    kw_jwks_free(keys);
    free(answer);
    return refused(&err);
  }
  if (st != KW_OK) die("verify", &err);
  char activation_path[512], keys_path[512];
  state_path(ACTIVATION_FILE, activation_path, sizeof activation_path);
  state_path("jwks.json", keys_path, sizeof keys_path);
  /* The answer as given: verified again, against the kept request, at every start. */
  if (kw_lease_token_save(answer, activation_path, &err) != KW_OK) die("keeping the activation", &err);
  if (jwks_file != NULL && kw_jwks_save(keys, keys_path, &err) != KW_OK) die("keeping the key set", &err);
  kw_jwks_free(keys);
  free(answer);
  char until[64];
  format_time(lease.expires_at_s * 1000, until, sizeof until);
  printf("activated: lease %s for %s on %s\n", lease.lease_id, lease.crm_product_id, lease.asset_num);
  printf("valid until %s (bound by %s)\n", until, lease.exp_bound);
  printf("activation kept in %s\n", activation_path);
  return 0;
}

/* The kept activation, verified now: 0 with the lease, or 2 after the reason. */
static int kept_activation(const char *jwks_file, kw_jwks **keys, kw_activation_request *req, char **answer,
                           kw_activated_lease *lease) {
  char activation_path[512];
  state_path(ACTIVATION_FILE, activation_path, sizeof activation_path);
  if (!exists(activation_path)) {
    printf("no activation in %s: modeler request, then modeler activate\n", activation_path);
    return 2;
  }
  kw_error err;
  if (kw_lease_token_load(activation_path, answer, &err) != KW_OK) die("reading the activation", &err);
  activation_inputs(jwks_file, req, keys);
  char fingerprint[33];
  machine_fingerprint(fingerprint);
  kw_status st = kw_verify_activation(*keys, *answer, req, fingerprint, 0, lease, &err);
  if (st == KW_ERR_LEASE_REFUSED) return refused(&err);
  if (st != KW_OK) die("verify", &err);
  return 0;
}

static int run_offline(const char *product, long seconds, const char *jwks_file) {
  kw_jwks *keys = NULL;
  kw_activation_request req;
  char *answer = NULL;
  kw_activated_lease lease;
  int rc = kept_activation(jwks_file, &keys, &req, &answer, &lease);
  if (rc == 0 && strcmp(lease.crm_product_id, product) != 0) {
    printf("the activation is for %s, not %s\n", lease.crm_product_id, product);
    rc = 2;
  }
  if (rc != 0) {
    kw_jwks_free(keys);
    kw_string_free(answer);
    return rc;
  }
  char until[64];
  format_time(lease.expires_at_s * 1000, until, sizeof until);
  printf("running offline until %s: lease %s for %s on %s\n", until, lease.lease_id, product, lease.asset_num);

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  printf("working%s (Ctrl-C to stop)\n", seconds > 0 ? "" : " until stopped");
  fflush(stdout);
  char fingerprint[33];
  machine_fingerprint(fingerprint);
  long consumed = 0, tick = 1;
  bool ended = false;
  for (; !interrupted && (seconds <= 0 || tick <= seconds); tick++) {
    struct timespec second = {1, 0};
    while (nanosleep(&second, &second) != 0 && errno == EINTR && !interrupted) {
    }
    if (interrupted) break;
    /* Every solve under a lease that still verifies: it ends at its expiry, with no server to say so. */
    kw_error err;
    if (kw_verify_activation(keys, answer, &req, fingerprint, 0, NULL, &err) != KW_OK) {
      printf("%s\n", err.message);
      ended = true;
      break;
    }
    printf("solve %ld: %ld consumed locally\n", tick, ++consumed);
    fflush(stdout);
  }
  if (interrupted) printf("interrupted\n");
  if (!ended) printf("stopped after %ld s; the activation holds until %s\n", consumed, until);
  kw_jwks_free(keys);
  kw_string_free(answer);
  return ended ? 3 : 0;
}

static int give_back(void) {
  char request_path[512], activation_path[512];
  state_path(REQUEST_FILE, request_path, sizeof request_path);
  state_path(ACTIVATION_FILE, activation_path, sizeof activation_path);
  kw_jwks *keys = NULL;
  kw_activation_request req;
  char *answer = NULL;
  kw_activated_lease lease;
  kw_error err;
  if (!exists(activation_path)) {
    printf("no activation to return in %s\n", activation_path);
    return 2;
  }
  /* Only a lease that verifies has an id to return; an expired one freed its seat already. */
  char fingerprint[33];
  machine_fingerprint(fingerprint);
  if (kw_lease_token_load(activation_path, &answer, &err) != KW_OK) die("reading the activation", &err);
  activation_inputs(NULL, &req, &keys);
  kw_status st = kw_verify_activation(keys, answer, &req, fingerprint, 0, &lease, &err);
  kw_jwks_free(keys);
  kw_string_free(answer);
  bool expired = st == KW_ERR_LEASE_REFUSED && strcmp(err.code, KW_REASON_EXPIRED) == 0;
  if (st == KW_ERR_LEASE_REFUSED && !expired) return refused(&err);
  if (st != KW_OK && !expired) die("verify", &err);
  char *code = NULL;
  if (!expired && kw_activation_return_code(&req, lease.lease_id, &code, &err) != KW_OK) die("return code", &err);
  if (unlink(activation_path) != 0 || unlink(request_path) != 0) {
    fprintf(stderr, "modeler: cannot delete the activation: %s\n", strerror(errno));
    exit(1);
  }
  if (expired) {
    printf("the activation had expired: deleted; its seat was freed at its expiry\n");
    return 0;
  }
  printf("activation of lease %s deleted from this machine\n", lease.lease_id);
  printf("return code: %s\n", code);
  printf("enter it in Keyward to free the seat now, where the app allows an early return\n");
  kw_string_free(code);
  return 0;
}

static int usage(void) {
  fprintf(stderr, "usage: modeler run ASSET_NUM PRODUCT [--seconds N] [--offline-days D]\n"
                  "       modeler verify\n"
                  "       modeler request ASSET_NUM PRODUCT --days N [--app KEY]\n"
                  "       modeler activate ANSWER... [--jwks FILE]\n"
                  "       modeler run-offline PRODUCT [--seconds N] [--jwks FILE]\n"
                  "       modeler return\n");
  return 2;
}

/* A whole decimal number in [min, max], or -1. */
static long number(const char *text, long min, long max) {
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  return errno == 0 && end != text && *end == '\0' && v >= min && v <= max ? v : -1;
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
  } else if (strcmp(argv[1], "request") == 0 && argc >= 4) {
    long days = -1;
    const char *app = NULL;
    for (int i = 4; i < argc; i++) {
      if (strcmp(argv[i], "--days") == 0 && i + 1 < argc) days = number(argv[++i], 1, 100000);
      else if (strcmp(argv[i], "--app") == 0 && i + 1 < argc) app = argv[++i];
      else return usage();
    }
    if (days < 0) return usage();
    rc = request(argv[2], argv[3], (int)days, app != NULL ? app : required_env("KEYWARD_APP_KEY"));
  } else if (strcmp(argv[1], "activate") == 0) {
    const char *jwks_file = NULL;
    char **words = calloc((size_t)argc, sizeof *words);
    int count = 0;
    for (int i = 2; i < argc; i++) {
      if (strcmp(argv[i], "--jwks") == 0 && i + 1 < argc) jwks_file = argv[++i];
      else words[count++] = argv[i];
    }
    rc = count == 0 ? usage() : activate(count, words, jwks_file);
    free(words);
  } else if (strcmp(argv[1], "run-offline") == 0 && argc >= 3) {
    long seconds = 0;
    const char *jwks_file = NULL;
    for (int i = 3; i < argc; i++) {
      if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) seconds = number(argv[++i], 0, 1L << 30);
      else if (strcmp(argv[i], "--jwks") == 0 && i + 1 < argc) jwks_file = argv[++i];
      else return usage();
    }
    if (seconds < 0) return usage();
    rc = run_offline(argv[2], seconds, jwks_file);
  } else if (strcmp(argv[1], "return") == 0 && argc == 2) {
    rc = give_back();
  } else {
    rc = usage();
  }
  kw_global_cleanup();
  return rc;
}
