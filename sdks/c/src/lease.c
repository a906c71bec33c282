/* Leases: check-out, heartbeat (and its thread), consume, check-in. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

struct kw_lease {
  kw_session *session;
  /* Set at check-out, never changed: read without the lock. */
  char *id;
  char *status;
  char *asset_num;
  char *fingerprint;
  char *offline_token;
  char *crm_product_id;
  char *product_uri;
  char *product_name;
  kw_limits limits;
  char *path_heartbeat;
  char *path_consume;
  char *path_check_in;

  pthread_mutex_t lock; /* guards what follows */
  pthread_cond_t wake;  /* on CLOCK_MONOTONIC */
  int64_t expires_at_ms;
  int interval_seconds;
  kw_lease_state state;
  kw_error ended_by;
  kw_error last_error;
  uint64_t beats;

  /* The heartbeat thread. */
  bool thread_joinable; /* started and not joined yet */
  bool thread_exited;   /* its loop has returned */
  bool stop;
  pthread_t thread;
  kw_heartbeat_fn on_beat;
  void *user;
};

/* Records a call's outcome on the lease and the session, and hands it to the caller. */
static kw_status finish(kw_lease *lease, kw_status st, const kw_error *local, kw_error *err) {
  if (st != KW_OK) {
    pthread_mutex_lock(&lease->lock);
    lease->last_error = *local;
    pthread_mutex_unlock(&lease->lock);
    kw__session_record(lease->session, local);
  }
  if (err != NULL) {
    if (st == KW_OK) kw__clear(err);
    else *err = *local;
  }
  return st;
}

static char *lease_path(const char *id, const char *op) {
  char *escaped = curl_easy_escape(NULL, id, 0);
  if (escaped == NULL) return NULL;
  size_t n = strlen(escaped) + strlen(op) + sizeof "/runtime/v1/leases//";
  char *path = malloc(n);
  if (path != NULL) snprintf(path, n, "/runtime/v1/leases/%s/%s", escaped, op);
  curl_free(escaped);
  return path;
}

static void lease_destroy(kw_lease *lease) {
  if (lease == NULL) return;
  pthread_cond_destroy(&lease->wake);
  pthread_mutex_destroy(&lease->lock);
  kw__session_release(lease->session);
  free(lease->id);
  free(lease->status);
  free(lease->asset_num);
  free(lease->fingerprint);
  free(lease->offline_token);
  free(lease->crm_product_id);
  free(lease->product_uri);
  free(lease->product_name);
  free(lease->path_heartbeat);
  free(lease->path_consume);
  free(lease->path_check_in);
  free(lease);
}

/* Copies what the check-out answered; false when a required field is missing or memory ran out. */
static bool take_answer(kw_lease *lease, const cJSON *data) {
  const char *id = kw__json_string(data, "leaseId");
  int64_t expires = kw__json_int(data, "expiresAt");
  int64_t interval = kw__json_int(data, "heartbeatIntervalSeconds");
  if (id == NULL || *id == '\0' || expires == KW_UNSET || interval == KW_UNSET || interval <= 0 || interval > 86400)
    return false;
  lease->id = kw__strdup(id);
  lease->status = kw__strdup(kw__json_string(data, "status") ? kw__json_string(data, "status") : "granted");
  lease->asset_num = kw__strdup(kw__json_string(data, "assetNum") ? kw__json_string(data, "assetNum") : "");
  lease->expires_at_ms = expires;
  lease->interval_seconds = (int)interval;
  const char *offline = kw__json_string(data, "offlineLease");
  if (offline != NULL && (lease->offline_token = kw__strdup(offline)) == NULL) return false;
  const cJSON *product = cJSON_GetObjectItemCaseSensitive(data, "product");
  const char *p;
  if ((p = kw__json_string(product, "crmProductId")) != NULL && (lease->crm_product_id = kw__strdup(p)) == NULL) return false;
  if ((p = kw__json_string(product, "productUri")) != NULL && (lease->product_uri = kw__strdup(p)) == NULL) return false;
  if ((p = kw__json_string(product, "productName")) != NULL && (lease->product_name = kw__strdup(p)) == NULL) return false;
  const cJSON *limits = cJSON_GetObjectItemCaseSensitive(data, "limits");
  lease->limits.concurrent = kw__json_int(limits, "concurrent");
  lease->limits.time_duration_seconds = kw__json_int(limits, "timeDurationSeconds");
  lease->limits.amount = kw__json_int(limits, "amount");
  lease->limits.start_date_ms = kw__json_int(limits, "startDate");
  lease->limits.end_date_ms = kw__json_int(limits, "endDate");
  lease->path_heartbeat = lease_path(id, "heartbeat");
  lease->path_consume = lease_path(id, "consume");
  lease->path_check_in = lease_path(id, "check-in");
  return lease->id != NULL && lease->status != NULL && lease->asset_num != NULL && lease->path_heartbeat != NULL &&
         lease->path_consume != NULL && lease->path_check_in != NULL;
}

kw_status kw_checkout(kw_session *session, const kw_checkout_params *params, kw_lease **out, kw_error *err) {
  kw_error local;
  kw__clear(&local);
  if (out != NULL) *out = NULL;
  if (session == NULL || params == NULL || out == NULL)
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "session, params and out are required");
  if (params->fingerprint == NULL || *params->fingerprint == '\0')
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "params->fingerprint is required");
  if (params->crm_product_id == NULL && params->product_uri == NULL)
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "params->crm_product_id or params->product_uri is required");
  if (params->offline_days < 0)
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "params->offline_days must not be negative");

  cJSON *body = cJSON_CreateObject();
  bool built = body != NULL && cJSON_AddStringToObject(body, "fingerprint", params->fingerprint) != NULL;
  if (built && params->crm_product_id != NULL)
    built = cJSON_AddStringToObject(body, "crmProductId", params->crm_product_id) != NULL;
  if (built && params->product_uri != NULL)
    built = cJSON_AddStringToObject(body, "productUri", params->product_uri) != NULL;
  if (built && params->asset_num != NULL) built = cJSON_AddStringToObject(body, "assetNum", params->asset_num) != NULL;
  if (built && params->offline_days > 0)
    built = cJSON_AddNumberToObject(body, "offlineDays", params->offline_days) != NULL;
  if (!built) {
    cJSON_Delete(body);
    return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  }
  cJSON *data = NULL;
  kw_status st = kw__session_post(session, "/runtime/v1/leases", body, params->user_token, NULL, &data, &local);
  cJSON_Delete(body);
  if (st != KW_OK) {
    kw__session_record(session, &local);
    if (err != NULL) *err = local;
    return st;
  }
  kw_lease *lease = calloc(1, sizeof *lease);
  if (lease == NULL) {
    cJSON_Delete(data);
    return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  }
  pthread_mutex_init(&lease->lock, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&lease->wake, &attr);
  pthread_condattr_destroy(&attr);
  kw__session_retain(session);
  lease->session = session;
  lease->fingerprint = kw__strdup(params->fingerprint);
  bool ok = lease->fingerprint != NULL && take_answer(lease, data);
  cJSON_Delete(data);
  if (!ok) {
    lease_destroy(lease);
    st = kw__fail(&local, KW_ERR_PROTOCOL, "200", "the check-out answer lacks leaseId, expiresAt or heartbeatIntervalSeconds");
    kw__session_record(session, &local);
    if (err != NULL) *err = local;
    return st;
  }
  *out = lease;
  kw__clear(err);
  return KW_OK;
}

const char *kw_lease_id(const kw_lease *lease) { return lease == NULL ? NULL : lease->id; }
const char *kw_lease_status(const kw_lease *lease) { return lease == NULL ? NULL : lease->status; }
const char *kw_lease_asset_num(const kw_lease *lease) { return lease == NULL ? NULL : lease->asset_num; }
const char *kw_lease_fingerprint(const kw_lease *lease) { return lease == NULL ? NULL : lease->fingerprint; }
const char *kw_lease_offline_token(const kw_lease *lease) { return lease == NULL ? NULL : lease->offline_token; }

void kw_lease_product(const kw_lease *lease, kw_product *out) {
  if (out == NULL) return;
  out->crm_product_id = lease == NULL ? NULL : lease->crm_product_id;
  out->product_uri = lease == NULL ? NULL : lease->product_uri;
  out->product_name = lease == NULL ? NULL : lease->product_name;
}

void kw_lease_limits(const kw_lease *lease, kw_limits *out) {
  if (out == NULL) return;
  if (lease == NULL) *out = (kw_limits){KW_UNSET, KW_UNSET, KW_UNSET, KW_UNSET, KW_UNSET};
  else *out = lease->limits;
}

int64_t kw_lease_expires_at_ms(const kw_lease *lease) {
  if (lease == NULL) return KW_UNSET;
  kw_lease *l = (kw_lease *)lease;
  pthread_mutex_lock(&l->lock);
  int64_t v = l->expires_at_ms;
  pthread_mutex_unlock(&l->lock);
  return v;
}

int kw_lease_heartbeat_interval(const kw_lease *lease) {
  if (lease == NULL) return 0;
  kw_lease *l = (kw_lease *)lease;
  pthread_mutex_lock(&l->lock);
  int v = l->interval_seconds;
  pthread_mutex_unlock(&l->lock);
  return v;
}

kw_lease_state kw_lease_get_state(const kw_lease *lease, kw_error *why) {
  if (lease == NULL) return KW_LEASE_ENDED;
  kw_lease *l = (kw_lease *)lease;
  pthread_mutex_lock(&l->lock);
  kw_lease_state state = l->state;
  if (why != NULL) {
    if (state == KW_LEASE_ENDED) *why = l->ended_by;
    else kw__clear(why);
  }
  pthread_mutex_unlock(&l->lock);
  return state;
}

void kw_lease_last_error(const kw_lease *lease, kw_error *out) {
  if (out == NULL) return;
  if (lease == NULL) {
    kw__clear(out);
    return;
  }
  kw_lease *l = (kw_lease *)lease;
  pthread_mutex_lock(&l->lock);
  *out = l->last_error;
  pthread_mutex_unlock(&l->lock);
}

uint64_t kw_lease_heartbeat_count(const kw_lease *lease) {
  if (lease == NULL) return 0;
  kw_lease *l = (kw_lease *)lease;
  pthread_mutex_lock(&l->lock);
  uint64_t v = l->beats;
  pthread_mutex_unlock(&l->lock);
  return v;
}

/* No call for a lease that is over; the lock is held. */
static kw_status refuse_if_over(kw_lease *lease, kw_error *local) {
  if (lease->state == KW_LEASE_CHECKED_IN)
    return kw__fail(local, KW_ERR_LEASE_ENDED, "", "lease %s is checked in", lease->id);
  if (lease->state == KW_LEASE_ENDED) {
    *local = lease->ended_by;
    local->status = KW_ERR_LEASE_ENDED;
    return KW_ERR_LEASE_ENDED;
  }
  return KW_OK;
}

static bool ends_lease(const kw_error *e) {
  return e->status == KW_ERR_API &&
         (strcmp(e->code, "90008") == 0 || strcmp(e->code, "90009") == 0 || strcmp(e->code, "90010") == 0);
}

/* The server says the lease is over: no more heartbeats. */
static void mark_ended(kw_lease *lease, const kw_error *why) {
  pthread_mutex_lock(&lease->lock);
  if (lease->state == KW_LEASE_ACTIVE) {
    lease->state = KW_LEASE_ENDED;
    lease->ended_by = *why;
  }
  lease->stop = true;
  pthread_cond_broadcast(&lease->wake);
  pthread_mutex_unlock(&lease->lock);
}

static cJSON *fingerprint_body(const kw_lease *lease) {
  cJSON *body = cJSON_CreateObject();
  if (body != NULL && cJSON_AddStringToObject(body, "fingerprint", lease->fingerprint) == NULL) {
    cJSON_Delete(body);
    return NULL;
  }
  return body;
}

static kw_status heartbeat(kw_lease *lease, kw_heartbeat_result *out, kw_error *local) {
  kw__clear(local);
  pthread_mutex_lock(&lease->lock);
  kw_status st = refuse_if_over(lease, local);
  pthread_mutex_unlock(&lease->lock);
  if (st != KW_OK) return st;
  cJSON *body = fingerprint_body(lease);
  if (body == NULL) return kw__fail(local, KW_ERR_NO_MEMORY, NULL, "out of memory");
  cJSON *data = NULL;
  st = kw__session_post(lease->session, lease->path_heartbeat, body, NULL, NULL, &data, local);
  cJSON_Delete(body);
  if (st != KW_OK) {
    if (ends_lease(local)) mark_ended(lease, local);
    return st;
  }
  int64_t expires = kw__json_int(data, "expiresAt");
  int64_t interval = kw__json_int(data, "heartbeatIntervalSeconds");
  int64_t used = kw__json_int(data, "usedSeconds");
  cJSON_Delete(data);
  pthread_mutex_lock(&lease->lock);
  if (expires != KW_UNSET) lease->expires_at_ms = expires;
  if (interval != KW_UNSET && interval > 0 && interval <= 86400) lease->interval_seconds = (int)interval;
  if (out != NULL) {
    out->expires_at_ms = lease->expires_at_ms;
    out->heartbeat_interval_seconds = lease->interval_seconds;
    out->used_seconds = used;
  }
  pthread_mutex_unlock(&lease->lock);
  return KW_OK;
}

kw_status kw_lease_heartbeat(kw_lease *lease, kw_heartbeat_result *out, kw_error *err) {
  if (lease == NULL) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "lease is required");
  kw_error local;
  kw_status st = heartbeat(lease, out, &local);
  return finish(lease, st, &local, err);
}

kw_status kw_lease_consume(kw_lease *lease, int64_t amount, kw_consumption *out, kw_error *err) {
  return kw_lease_consume_with_key(lease, amount, NULL, out, err);
}

static bool valid_key(const char *key) {
  size_t n = strlen(key);
  if (n < 1 || n > 255) return false;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)key[i] < 0x21 || (unsigned char)key[i] > 0x7e) return false;
  return true;
}

kw_status kw_lease_consume_with_key(kw_lease *lease, int64_t amount, const char *idempotency_key,
                                    kw_consumption *out, kw_error *err) {
  if (lease == NULL) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "lease is required");
  if (idempotency_key != NULL && !valid_key(idempotency_key))
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL,
                    "an idempotency key is 1-255 printable ASCII characters without spaces");
  /* One key for the call, whatever number of attempts it takes: the server counts it once. */
  char generated[KW_IDEMPOTENCY_KEY_SIZE];
  if (idempotency_key == NULL) {
    kw_status made = kw_new_idempotency_key(generated, err);
    if (made != KW_OK) return made;
    idempotency_key = generated;
  }
  if (amount < 1 || amount > 1000000000)
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "amount must be 1 to 1000000000, not %lld", (long long)amount);
  kw_error local;
  kw__clear(&local);
  pthread_mutex_lock(&lease->lock);
  kw_status st = refuse_if_over(lease, &local);
  pthread_mutex_unlock(&lease->lock);
  if (st != KW_OK) return finish(lease, st, &local, err);
  cJSON *body = fingerprint_body(lease);
  if (body == NULL || cJSON_AddNumberToObject(body, "amount", (double)amount) == NULL) {
    cJSON_Delete(body);
    return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  }
  cJSON *data = NULL;
  st = kw__session_post(lease->session, lease->path_consume, body, NULL, idempotency_key, &data, &local);
  cJSON_Delete(body);
  if (st == KW_OK) {
    if (out != NULL) {
      out->consumed = kw__json_int(data, "consumed");
      out->limit = kw__json_int(data, "limit");
      out->remaining = kw__json_int(data, "remaining");
    }
    cJSON_Delete(data);
  } else if (ends_lease(&local)) {
    mark_ended(lease, &local);
  }
  return finish(lease, st, &local, err);
}

/* ---- the heartbeat thread ---- */

static void *heartbeat_loop(void *arg) {
  kw_lease *lease = arg;
  pthread_mutex_lock(&lease->lock);
  while (!lease->stop && lease->state == KW_LEASE_ACTIVE) {
    struct timespec due;
    clock_gettime(CLOCK_MONOTONIC, &due);
    due.tv_sec += lease->interval_seconds;
    while (!lease->stop) {
      int rc = pthread_cond_timedwait(&lease->wake, &lease->lock, &due);
      if (rc == ETIMEDOUT) break;
    }
    if (lease->stop || lease->state != KW_LEASE_ACTIVE) break;
    kw_heartbeat_fn on_beat = lease->on_beat;
    void *user = lease->user;
    pthread_mutex_unlock(&lease->lock);

    kw_error local;
    kw_status st = heartbeat(lease, NULL, &local);
    pthread_mutex_lock(&lease->lock);
    if (st == KW_OK) lease->beats++;
    else lease->last_error = local;
    pthread_mutex_unlock(&lease->lock);
    if (st != KW_OK) kw__session_record(lease->session, &local);
    if (on_beat != NULL) on_beat(lease, st, st == KW_OK ? NULL : &local, user);

    pthread_mutex_lock(&lease->lock);
  }
  lease->thread_exited = true;
  pthread_mutex_unlock(&lease->lock);
  return NULL;
}

kw_status kw_lease_start_heartbeats(kw_lease *lease, kw_heartbeat_fn on_beat, void *user, kw_error *err) {
  if (lease == NULL) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "lease is required");
  kw_error local;
  kw__clear(&local);
  pthread_mutex_lock(&lease->lock);
  kw_status st = refuse_if_over(lease, &local);
  if (st == KW_OK && lease->thread_joinable && !lease->thread_exited)
    st = kw__fail(&local, KW_ERR_INVALID_ARGUMENT, NULL, "the heartbeats of lease %s run already", lease->id);
  if (st != KW_OK) {
    pthread_mutex_unlock(&lease->lock);
    return finish(lease, st, &local, err);
  }
  pthread_t old = lease->thread;
  bool join_old = lease->thread_joinable;
  lease->thread_joinable = false;
  pthread_mutex_unlock(&lease->lock);
  if (join_old) pthread_join(old, NULL); /* a loop that stopped by itself */

  pthread_mutex_lock(&lease->lock);
  lease->stop = false;
  lease->thread_exited = false;
  lease->on_beat = on_beat;
  lease->user = user;
  int rc = pthread_create(&lease->thread, NULL, heartbeat_loop, lease);
  lease->thread_joinable = rc == 0;
  pthread_mutex_unlock(&lease->lock);
  if (rc != 0) {
    st = kw__fail(&local, KW_ERR_NO_MEMORY, NULL, "cannot start the heartbeat thread: %s", strerror(rc));
    return finish(lease, st, &local, err);
  }
  kw__clear(err);
  return KW_OK;
}

void kw_lease_stop_heartbeats(kw_lease *lease) {
  if (lease == NULL) return;
  pthread_mutex_lock(&lease->lock);
  lease->stop = true;
  pthread_cond_broadcast(&lease->wake);
  if (!lease->thread_joinable || pthread_equal(lease->thread, pthread_self())) {
    /* None runs, or on_beat asks its own loop to stop: it returns after the callback. */
    pthread_mutex_unlock(&lease->lock);
    return;
  }
  pthread_t thread = lease->thread;
  lease->thread_joinable = false;
  pthread_mutex_unlock(&lease->lock);
  pthread_join(thread, NULL);
}

kw_status kw_lease_check_in(kw_lease *lease, kw_checkin_result *out, kw_error *err) {
  if (lease == NULL) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "lease is required");
  kw_lease_stop_heartbeats(lease);
  kw_error local;
  kw__clear(&local);
  pthread_mutex_lock(&lease->lock);
  kw_status st = lease->state == KW_LEASE_CHECKED_IN
                     ? kw__fail(&local, KW_ERR_LEASE_ENDED, "", "lease %s is checked in already", lease->id)
                     : KW_OK;
  pthread_mutex_unlock(&lease->lock);
  if (st != KW_OK) return finish(lease, st, &local, err);
  cJSON *body = fingerprint_body(lease);
  if (body == NULL) return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  cJSON *data = NULL;
  st = kw__session_post(lease->session, lease->path_check_in, body, NULL, NULL, &data, &local);
  cJSON_Delete(body);
  if (st == KW_OK) {
    if (out != NULL) {
      out->used_seconds = kw__json_int(data, "usedSeconds");
      out->seat_free_at_ms = kw__json_int(data, "seatFreeAt");
    }
    cJSON_Delete(data);
    pthread_mutex_lock(&lease->lock);
    lease->state = KW_LEASE_CHECKED_IN;
    pthread_mutex_unlock(&lease->lock);
  } else if (ends_lease(&local)) {
    mark_ended(lease, &local);
  }
  return finish(lease, st, &local, err);
}

void kw_lease_free(kw_lease *lease) {
  if (lease == NULL) return;
  kw_lease_stop_heartbeats(lease);
  /* A loop that stopped by itself is joined here. */
  pthread_mutex_lock(&lease->lock);
  bool join = lease->thread_joinable;
  lease->thread_joinable = false;
  pthread_mutex_unlock(&lease->lock);
  if (join) pthread_join(lease->thread, NULL);
  lease_destroy(lease);
}

kw_status kw_lease_close(kw_lease *lease, kw_error *err) {
  if (lease == NULL) {
    kw__clear(err);
    return KW_OK;
  }
  kw_lease_stop_heartbeats(lease);
  kw_status st = KW_OK;
  if (kw_lease_get_state(lease, NULL) == KW_LEASE_ACTIVE) st = kw_lease_check_in(lease, NULL, err);
  else kw__clear(err);
  kw_lease_free(lease);
  return st;
}

void kw_lease_closep(kw_lease **lease) {
  if (lease == NULL || *lease == NULL) return;
  kw_lease_close(*lease, NULL);
  *lease = NULL;
}
