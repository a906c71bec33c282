/*
 * keyward.h: the C SDK of Keyward's license runtime (API v1).
 *
 * A licensed program checks out a seat ("lease") for a lock or a member, heartbeats it while it
 * runs, consumes metered amounts and checks it in on exit; offline it verifies a signed lease
 * (compact JWS, EdDSA/Ed25519) against a saved JWKS. A vendor's back end verifies Keyward's
 * webhooks (Standard Webhooks, HMAC-SHA256).
 *
 * Conventions
 *   - Every handle is opaque and has its own kw_*_free function; strings a handle returns are
 *     owned by it and live as long as it does. Strings the caller receives to own (char **) are
 *     freed with kw_string_free.
 *   - Every function that can fail returns a kw_status (KW_OK is 0) and fills the caller's
 *     kw_error when one is given (the kw_error * argument may be NULL). A session and a lease
 *     also keep the last error of the calls made through them (kw_session_last_error,
 *     kw_lease_last_error).
 *   - Call kw_global_init once before anything else, from one thread, and kw_global_cleanup
 *     once at the end. The library keeps no other global state.
 *   - Thread safety: a kw_session and a kw_lease may be used from several threads at once (the
 *     heartbeat thread does); a kw_jwks may be shared by threads (its keys never change; the
 *     signatures it has verified are remembered under a lock of its own); kw_verify_webhook_ms is a
 *     pure function.
 *   - Times: epoch milliseconds where the server speaks milliseconds (expiresAt, seatFreeAt,
 *     limits' dates), epoch seconds for JWT claims (iat, nbf, exp), as the protocol has them.
 *   - A number the server may answer as null is KW_UNSET.
 */
#ifndef KEYWARD_H
#define KEYWARD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(KEYWARD_SHARED)
#  ifdef KEYWARD_BUILDING
#    define KW_API __declspec(dllexport)
#  else
#    define KW_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define KW_API __attribute__((visibility("default")))
#else
#  define KW_API
#endif

/* A function kept for programs written against an earlier version; its comment names the
 * replacement. Define KW_NO_DEPRECATION_WARNINGS to silence the warning. */
#if defined(KEYWARD_BUILDING) || defined(KW_NO_DEPRECATION_WARNINGS)
#  define KW_DEPRECATED(why)
#elif defined(__GNUC__) || defined(__clang__)
#  define KW_DEPRECATED(why) __attribute__((deprecated(why)))
#elif defined(_MSC_VER)
#  define KW_DEPRECATED(why) __declspec(deprecated(why))
#else
#  define KW_DEPRECATED(why)
#endif

#define KW_VERSION "0.1.0"
#define KW_VERSION_MAJOR 0
#define KW_VERSION_MINOR 1
#define KW_VERSION_PATCH 0
/** The Keyward API version this SDK speaks (/runtime/v1). */
#define KW_API_VERSION 1

/** A number the server answered as null (no limit, not given). */
#define KW_UNSET INT64_MIN

/** What went wrong, by kind; the details are in kw_error. */
typedef enum kw_status {
  KW_OK = 0,
  /** A NULL or out-of-range argument from the caller; nothing was sent. */
  KW_ERR_INVALID_ARGUMENT = 1,
  KW_ERR_NO_MEMORY = 2,
  /** The server could not be reached or did not answer (connect, TLS, timeout): try again later. */
  KW_ERR_NETWORK = 3,
  /**
   * Keyward refused the call with its envelope: kw_error.code is its code ("90005", "90009",
   * "60000", "429", "500" …), message and cause are its words, http_status its HTTP status (299).
   */
  KW_ERR_API = 4,
  /** The token endpoint refused the app's credentials: code is the OAuth error ("invalid_client"). */
  KW_ERR_AUTH = 5,
  /** An answer that is no Keyward answer (not JSON, an unexpected status): code is the HTTP status. */
  KW_ERR_PROTOCOL = 6,
  /** kw_verify_lease refused the lease: code is the reason ("signature", "expired" …). */
  KW_ERR_LEASE_REFUSED = 7,
  /** kw_verify_webhook_ms refused the message: code says why ("signature", "timestamp" …). */
  KW_ERR_WEBHOOK_REFUSED = 8,
  /** A file could not be read or written: message names it and the system's reason. */
  KW_ERR_IO = 9,
  /** A key set that is no JWKS (code "jwks-unavailable"). */
  KW_ERR_JWKS = 10,
  /** The lease is over (checked in, or ended by the server): no call is sent for it. */
  KW_ERR_LEASE_ENDED = 11,
  /** kw_global_init failed (libcurl could not start). */
  KW_ERR_INIT = 12,
  /**
   * An offline activation's request or typed code that does not read (code "malformed"): message
   * says why, kw_error.group names the typed code's mistyped group when that is why.
   */
  KW_ERR_FORMAT = 13
} kw_status;

/** The details of a failure. Fixed-size and caller-owned: nothing in it needs freeing. */
typedef struct kw_error {
  kw_status status;
  /**
   * Keyward's code for KW_ERR_API ("90005"), the OAuth error for KW_ERR_AUTH, the HTTP status
   * for KW_ERR_PROTOCOL, the refusal reason for KW_ERR_LEASE_REFUSED and
   * KW_ERR_WEBHOOK_REFUSED, "network" for KW_ERR_NETWORK; empty otherwise.
   */
  char code[48];
  /** A sentence for people: the server's message, or the SDK's. */
  char message[512];
  /** The server's cause, where it gave one (or the request id of an internal fault). */
  char cause[256];
  /** The HTTP status of the answer; 0 when there was none. */
  long http_status;
  /** The server's x-request-id of the answer, for its logs; empty when none. */
  char request_id[136];
  /**
   * A typed code (offline activation) that does not read: the group to look at again, counted
   * from 1 as a person reads ("group 5 is mistyped"); 0 otherwise.
   */
  int group;
  /**
   * The server's Retry-After, in milliseconds, when a failed answer carried one (HTTP 429 rate
   * limited, 503 overloaded: the wait it asked for before trying again, after the session's own
   * retries gave up); 0 when it gave none. An HTTP date is counted from now; at most
   * KW_RETRY_AFTER_MAX_MS. The last field, added after the others: sizeof(kw_error) grew, so
   * code built against a header without it must be rebuilt (CHANGELOG.md).
   */
  long retry_after_ms;
} kw_error;

/** The longest Retry-After kw_error.retry_after_ms holds (24 days: it fits a 32-bit long). */
#define KW_RETRY_AFTER_MAX_MS 2073600000L

/* Lease refusal reasons (kw_error.code of KW_ERR_LEASE_REFUSED), as the conformance suite names them. */
#define KW_REASON_SIGNATURE "signature"
#define KW_REASON_EXPIRED "expired"
#define KW_REASON_NOT_YET_VALID "not-yet-valid"
#define KW_REASON_FINGERPRINT "fingerprint"
#define KW_REASON_UNKNOWN_KEY "unknown-key"
#define KW_REASON_MALFORMED "malformed"
#define KW_REASON_AUDIENCE "audience"
#define KW_REASON_LICENSE_ENDED "license-ended"
#define KW_REASON_JWKS_UNAVAILABLE "jwks-unavailable"
/** A relay's lease whose pool grant has ended (its exp is past). */
#define KW_REASON_GRANT_EXPIRED "grant-expired"
/** A relay's lease that says more than its pool grant gives (exp, license and product, seats, machine). */
#define KW_REASON_BEYOND_GRANT "beyond-grant"
/** An activation answer that answers another request than the machine's own (kw_verify_activation). */
#define KW_REASON_REQUEST "request"

/* ---------------------------------------------------------------------------------------------
 * Library
 */

/** Starts libcurl and OpenSSL. Once per process, before any other call, from one thread. */
KW_API kw_status kw_global_init(kw_error *err);
/** Undoes kw_global_init, after every handle is freed. */
KW_API void kw_global_cleanup(void);
/** "0.1.0". */
KW_API const char *kw_version(void);
/** A constant name for a status ("KW_ERR_API"). */
KW_API const char *kw_status_name(kw_status status);
/** Frees a string the library handed to the caller (char ** out-parameters). NULL is fine. */
KW_API void kw_string_free(char *s);

/* ---------------------------------------------------------------------------------------------
 * Session: the application's token (client credentials), nonces, and the runtime calls.
 */

typedef struct kw_session kw_session;

/**
 * A session for the app's key and secret at base_url ("https://keyward.example.com"). Nothing
 * is sent yet: the token is obtained at the first call, reused while it lives, renewed a minute
 * (or a tenth of its lifetime) before it expires, and obtained anew and the call retried once
 * (with a new nonce) when the server answers 60000 to a token it had issued earlier.
 */
KW_API kw_status kw_session_new(const char *base_url, const char *app_key, const char *app_secret,
                                kw_session **out, kw_error *err);
/** The scopes to ask for, space-separated; all of the app's when never set. Before the first call. */
KW_API kw_status kw_session_set_scope(kw_session *session, const char *scope, kw_error *err);
/** The longest one HTTP request may take, in milliseconds (default 30000). */
KW_API kw_status kw_session_set_timeout_ms(kw_session *session, long timeout_ms, kw_error *err);
/** A CA bundle file for https (default: the system's). */
KW_API kw_status kw_session_set_ca_file(kw_session *session, const char *path, kw_error *err);

/**
 * When a runtime call (kw_checkout, kw_lease_heartbeat, kw_lease_consume, kw_lease_check_in) is
 * sent again: when no answer came (KW_ERR_NETWORK: the connection was refused, reset or closed, or
 * the timeout passed before an answer) and when the server answered HTTP 429 (rate limited) or 503
 * (overloaded). A refusal is never sent again: an envelope with a business code (HTTP 299), any
 * other 4xx, a 500. Each attempt carries a fresh g_nonce; a consume keeps one Idempotency-Key
 * across its attempts, so the server counts it once however many of them reached it.
 *
 * Retry n waits a random time between 0 and initial_backoff_ms * 2^(n-1), at most max_backoff_ms
 * ("full jitter": a fleet that failed together does not come back together), or the server's
 * Retry-After when longer, cut to max_retry_after_ms. No retry is made whose wait would end more
 * than max_elapsed_ms after the call began: the last failure is answered. Each attempt is bounded
 * by kw_session_set_timeout_ms besides. The waits block the calling thread.
 */
typedef struct kw_retry_policy {
  /** Attempts in all, the first included (default 4); 1 sends each call once. */
  int max_attempts;
  /** The first retry's backoff ceiling, doubled for each retry after (default 500). */
  long initial_backoff_ms;
  /** The backoff's ceiling never grows past this (default 8000). */
  long max_backoff_ms;
  /** A longer Retry-After is cut to this (default 30000). */
  long max_retry_after_ms;
  /** No retry whose wait would end later than this after the call began (default 60000). */
  long max_elapsed_ms;
} kw_retry_policy;

/** A session's policy until kw_session_set_retry_policy: four attempts within a minute. */
#define KW_RETRY_POLICY_DEFAULT {4, 500L, 8000L, 30000L, 60000L}
/** Sends every call once. */
#define KW_RETRY_POLICY_NONE {1, 0L, 0L, 0L, 0L}

/**
 * Sets how the session's runtime calls are retried (a copy is kept). KW_ERR_INVALID_ARGUMENT for
 * max_attempts below 1 or a negative duration.
 */
KW_API kw_status kw_session_set_retry_policy(kw_session *session, const kw_retry_policy *policy, kw_error *err);
/** Copies the session's retry policy into out. */
KW_API void kw_session_get_retry_policy(const kw_session *session, kw_retry_policy *out);
/**
 * Drops the caller's reference. The session itself lives until its last lease is freed too, so
 * leases may outlive the caller's use of it.
 */
KW_API void kw_session_free(kw_session *session);
/** Copies the last error of a call made through this session (any thread). */
KW_API void kw_session_last_error(const kw_session *session, kw_error *out);
/**
 * Copies a live app token into buf (NUL-terminated), obtaining or renewing it when needed:
 * for calls this SDK does not wrap. KW_ERR_INVALID_ARGUMENT when buf is too small.
 */
KW_API kw_status kw_session_token(kw_session *session, char *buf, size_t buf_size, kw_error *err);

/* ---------------------------------------------------------------------------------------------
 * Leases: check-out, heartbeat, consume, check-in.
 */

typedef struct kw_lease kw_lease;

/** What to check out. Zero-initialise it ({0}) and set what applies. */
typedef struct kw_checkout_params {
  /** Required: this machine, 8–256 printable ASCII characters without spaces (a hash of its ids). */
  const char *fingerprint;
  /** The lock's asset number (lock holder), or which of a member's assets to run. */
  const char *asset_num;
  /** The product by the CRM's id, and/or by its URI: at least one. */
  const char *crm_product_id;
  const char *product_uri;
  /** Days to run offline (a signed lease comes back); 0 for none. At most the app's setting. */
  int offline_days;
  /** A member's own token (password grant of the same app), sent as the userToken header. */
  const char *user_token;
} kw_checkout_params;

/** A product as the lease names it; NULL members where the server has none. */
typedef struct kw_product {
  const char *crm_product_id;
  const char *product_uri;
  const char *product_name;
} kw_product;

/** A license's limits; KW_UNSET where there is none. Dates in epoch milliseconds. */
typedef struct kw_limits {
  int64_t concurrent;
  int64_t time_duration_seconds;
  int64_t amount;
  int64_t start_date_ms;
  int64_t end_date_ms;
} kw_limits;

typedef struct kw_heartbeat_result {
  int64_t expires_at_ms;
  int heartbeat_interval_seconds;
  int64_t used_seconds;
} kw_heartbeat_result;

typedef struct kw_consumption {
  /** The product's total consumption after this call. */
  int64_t consumed;
  int64_t limit;     /* KW_UNSET: no limit */
  int64_t remaining; /* KW_UNSET: no limit */
} kw_consumption;

typedef struct kw_checkin_result {
  int64_t used_seconds;
  /** When the seat is free for another machine: now for an online lease, its exp for an offline one. */
  int64_t seat_free_at_ms;
} kw_checkin_result;

/** Where a lease stands. */
typedef enum kw_lease_state {
  KW_LEASE_ACTIVE = 0,
  /** The server ended it: 90008 (no such lease), 90009 (revoked), 90010 (expired). */
  KW_LEASE_ENDED = 1,
  KW_LEASE_CHECKED_IN = 2
} kw_lease_state;

/**
 * Checks out a seat: POST /runtime/v1/leases. A refusal is KW_ERR_API with Keyward's code
 * (90001–90007, 90011). The lease keeps a reference to the session.
 */
KW_API kw_status kw_checkout(kw_session *session, const kw_checkout_params *params, kw_lease **out,
                             kw_error *err);

KW_API const char *kw_lease_id(const kw_lease *lease);
/** "granted" (a new seat) or "resumed" (the live lease this holder and machine already had). */
KW_API const char *kw_lease_status(const kw_lease *lease);
KW_API const char *kw_lease_asset_num(const kw_lease *lease);
KW_API const char *kw_lease_fingerprint(const kw_lease *lease);
/** The signed offline lease (compact JWS), or NULL when none was asked for. */
KW_API const char *kw_lease_offline_token(const kw_lease *lease);
KW_API void kw_lease_product(const kw_lease *lease, kw_product *out);
KW_API void kw_lease_limits(const kw_lease *lease, kw_limits *out);
/** When the lease expires without a heartbeat (epoch ms); moved by every heartbeat. */
KW_API int64_t kw_lease_expires_at_ms(const kw_lease *lease);
/** How often to heartbeat, as the server last asked. */
KW_API int kw_lease_heartbeat_interval(const kw_lease *lease);
/** Where the lease stands; when ended, *why (optional) receives the server's refusal. */
KW_API kw_lease_state kw_lease_get_state(const kw_lease *lease, kw_error *why);
/** Copies the last error of a call made on this lease, the heartbeat thread's included. */
KW_API void kw_lease_last_error(const kw_lease *lease, kw_error *out);

/**
 * One heartbeat now: POST …/heartbeat. 90008, 90009 and 90010 end the lease
 * (kw_lease_get_state says KW_LEASE_ENDED) and stop its heartbeat thread.
 */
KW_API kw_status kw_lease_heartbeat(kw_lease *lease, kw_heartbeat_result *out, kw_error *err);
/**
 * Consumes amount (1 – 10^9) of the product: POST …/consume. Past the limit: 90007, nothing
 * consumed. Counted once: the call carries a new random Idempotency-Key, the same on each of its
 * retries (kw_retry_policy), so an attempt whose answer was lost is answered, not counted, when
 * sent again.
 */
KW_API kw_status kw_lease_consume(kw_lease *lease, int64_t amount, kw_consumption *out, kw_error *err);

/** Room for a key kw_new_idempotency_key makes: 22 characters and the NUL. */
#define KW_IDEMPOTENCY_KEY_SIZE 23

/** A new Idempotency-Key into out: 128 bits from OpenSSL's CSPRNG, base64url (22 characters). */
KW_API kw_status kw_new_idempotency_key(char out[KW_IDEMPOTENCY_KEY_SIZE], kw_error *err);

/**
 * kw_lease_consume with the caller's Idempotency-Key: keep a consume's key to send it again after
 * KW_ERR_NETWORK (from another process, say) and have the server count it once. The server keeps a
 * key 24 hours; the same key with another lease or amount is refused (90000). NULL makes a new one.
 * KW_ERR_INVALID_ARGUMENT unless the key is 1–255 printable ASCII characters without spaces.
 */
KW_API kw_status kw_lease_consume_with_key(kw_lease *lease, int64_t amount, const char *idempotency_key,
                                           kw_consumption *out, kw_error *err);
/** Checks the lease in (stopping its heartbeats first): POST …/check-in. */
KW_API kw_status kw_lease_check_in(kw_lease *lease, kw_checkin_result *out, kw_error *err);

/**
 * Called on the heartbeat thread after each background heartbeat: status KW_OK, or the
 * failure in err. When status is KW_ERR_API and the lease's state is KW_LEASE_ENDED, the loop
 * has stopped: tell the program (set a flag; do not block). Network failures do not stop the
 * loop: it tries again at the next interval (a lease lives five intervals).
 */
typedef void (*kw_heartbeat_fn)(kw_lease *lease, kw_status status, const kw_error *err, void *user);

/**
 * Starts the background heartbeat thread: one heartbeat every heartbeatIntervalSeconds the server
 * asked for (the interval each answer asks for from then on). on_beat may be NULL.
 */
KW_API kw_status kw_lease_start_heartbeats(kw_lease *lease, kw_heartbeat_fn on_beat, void *user,
                                           kw_error *err);
/**
 * Stops the heartbeat thread and waits for it (at most one heartbeat in flight). Safe to call
 * when none runs. From inside on_beat it only asks the loop to stop.
 */
KW_API void kw_lease_stop_heartbeats(kw_lease *lease);
/** How many background heartbeats the server accepted since the lease was made. */
KW_API uint64_t kw_lease_heartbeat_count(const kw_lease *lease);

/**
 * The end of a lease's scope: stops its heartbeats, checks it in unless it is over already, and
 * frees it. Answers the check-in's status (the lease is freed whatever it is). NULL is fine.
 */
KW_API kw_status kw_lease_close(kw_lease *lease, kw_error *err);
/** For __attribute__((cleanup)): KW_LEASE_SCOPED kw_lease *lease = NULL; … checked in at scope exit. */
KW_API void kw_lease_closep(kw_lease **lease);
#if defined(__GNUC__) || defined(__clang__)
#  define KW_LEASE_SCOPED __attribute__((cleanup(kw_lease_closep)))
#endif
/** Frees a lease without checking it in (its heartbeats stop): a program keeping it offline. */
KW_API void kw_lease_free(kw_lease *lease);

/* ---------------------------------------------------------------------------------------------
 * Offline leases: the key set (JWKS) and verification.
 */

typedef struct kw_jwks kw_jwks;

/** A key set from its JSON text ({"keys":[…]}); keys other than Ed25519 are kept out. */
KW_API kw_status kw_jwks_parse(const char *json, size_t len, kw_jwks **out, kw_error *err);
/** Reads a saved key set (kw_jwks_save). */
KW_API kw_status kw_jwks_load(const char *path, kw_jwks **out, kw_error *err);
/** Saves the key set's JSON text as fetched, atomically (a new file renamed over the old one). */
KW_API kw_status kw_jwks_save(const kw_jwks *jwks, const char *path, kw_error *err);
/** Fetches the server's published keys: GET /.well-known/jwks.json (no credentials). */
KW_API kw_status kw_jwks_fetch(kw_session *session, kw_jwks **out, kw_error *err);
/** The key set's JSON text. */
KW_API const char *kw_jwks_json(const kw_jwks *jwks);
/** How many Ed25519 keys it holds. */
KW_API size_t kw_jwks_count(const kw_jwks *jwks);
KW_API void kw_jwks_free(kw_jwks *jwks);

/** A verified lease's claims: every string owned by the claims, NULL where the lease has none. */
typedef struct kw_claims {
  const char *iss;
  /** The lease id (also jti). */
  const char *sub;
  const char *jti;
  /** The appKey that checked it out. */
  const char *aud;
  /** The JWT's iat, nbf and exp, in epoch seconds. */
  int64_t iat_s, nbf_s, exp_s;
  /** "lock" or "member". */
  const char *holder_kind;
  /** For a lock holder: its asset number. */
  const char *holder_asset_num;
  /** For a member holder. */
  const char *member_global_id;
  const char *enterprise_global_id;
  const char *fingerprint;
  const char *asset_num;
  kw_product product;
  kw_limits limits;
  /** "offline-days", "license-end" or "time-duration"; NULL for leases of servers before it. */
  const char *exp_bound;
  /** The whole payload as JSON, for claims this struct does not name. */
  const char *payload_json;
  /**
   * A relay's lease (signed by a relay, its pool grant in the header): the relay's id, its grant's
   * sub. NULL for a lease Keyward signed. Added after the others: kw_claims is only ever made by
   * the library, so a program built against an earlier header runs unchanged.
   */
  const char *relay_id;
} kw_claims;

/**
 * Verifies an offline lease without the server: an EdDSA signature by a key of jwks (by kid),
 * header typ keyward-lease+jwt, issuer keyward, nbf ≤ now < exp, the audience when given, the
 * lease's shape, this machine's fingerprint, and the license not ended (limits.endDate). The
 * first check that fails answers KW_ERR_LEASE_REFUSED with the reason in err->code (see
 * KW_REASON_*). now_ms is the clock to judge by (epoch ms), 0 for the system's. out may be NULL;
 * else it receives claims to free with kw_claims_free. audience may be NULL (not checked).
 *
 * A relay's lease (a relay inside a closed network signed it) verifies with the same jwks: its
 * header carries the pool grant a key of jwks signed for the relay (grant), checked first (its
 * form, key and signature, claims, nbf, then exp: KW_REASON_GRANT_EXPIRED), and the lease must be
 * signed by the relay key the grant certifies (KW_REASON_UNKNOWN_KEY for another kid) and say no
 * more than the grant gives (KW_REASON_BEYOND_GRANT). claims->relay_id names the relay.
 *
 * The key set remembers the last 16 signatures it verified (by a SHA-256 of key, signed text and
 * signature): checking the same lease again skips the Ed25519 verification, never a claim.
 */
KW_API kw_status kw_verify_lease(const kw_jwks *jwks, const char *token, const char *fingerprint,
                                 const char *audience, int64_t now_ms, kw_claims **out, kw_error *err);
KW_API void kw_claims_free(kw_claims *claims);

/** Saves a signed lease (text) to path, atomically, readable by its owner only. */
KW_API kw_status kw_lease_token_save(const char *token, const char *path, kw_error *err);
/** Reads a saved signed lease; free *token_out with kw_string_free. Trailing whitespace is dropped. */
KW_API kw_status kw_lease_token_load(const char *path, char **token_out, kw_error *err);

/* ---------------------------------------------------------------------------------------------
 * Offline activation (docs/activation.md): a machine that never reaches Keyward writes a request
 * (a typed code or a file), someone who can reach Keyward turns it into an answer (a typed code or
 * a file holding a signed lease), and the machine verifies the answer with the keys it shipped
 * with. Everything here is local: no call is sent. Structs are plain and caller-owned.
 */

/** The longest activation a request may ask for, in days. */
#define KW_ACTIVATION_MAX_DAYS 365
#define KW_ACTIVATION_NONCE_BYTES 8
#define KW_ACTIVATION_FINGERPRINT_HASH_BYTES 10
/** The buffer kw_activation_fingerprint fills: "fph1:" and 16 characters, NUL-terminated. */
#define KW_ACTIVATION_FINGERPRINT_SIZE 22

/** What to ask for. Zero-initialise it ({0}) and set what applies. */
typedef struct kw_activation_params {
  /** Required, each 1–255 bytes of UTF-8: the app's key, the lock's asset number, the product. */
  const char *app_key;
  const char *asset_num;
  const char *crm_product_id;
  /** Required: 1–365 (at most the app's offline maximum, which the server checks). */
  int days;
  /** Required: this machine's fingerprint; only the first 10 bytes of its SHA-256 leave the machine. */
  const char *fingerprint;
  /** When the request is made, epoch seconds; 0 for the system's clock. */
  int64_t now_s;
  /** 8 bytes of nonce; NULL for random ones (OpenSSL's CSPRNG). Tests give theirs. */
  const unsigned char *nonce;
} kw_activation_params;

/**
 * An activation request, as its code carries it (version 1). The machine keeps it, nonce included,
 * until the answer comes back (kw_activation_request_save): the answer is verified against it.
 */
typedef struct kw_activation_request {
  char app_key[256];
  char asset_num[256];
  char crm_product_id[256];
  int days;
  /** When the machine made it, epoch seconds. */
  int64_t created_at_s;
  unsigned char nonce[KW_ACTIVATION_NONCE_BYTES];
  /** The first 10 bytes of SHA-256 of the machine's fingerprint (UTF-8). */
  unsigned char fingerprint_hash[KW_ACTIVATION_FINGERPRINT_HASH_BYTES];
} kw_activation_request;

/** What a verified activation answer says. */
typedef struct kw_activated_lease {
  /** The lease id, a UUID. */
  char lease_id[37];
  /** When it was issued and when it expires, epoch seconds. */
  int64_t issued_at_s;
  int64_t expires_at_s;
  /** What bounded the expiry: "offline-days", "license-end" or "time-duration". */
  char exp_bound[16];
  char asset_num[256];
  char crm_product_id[256];
  char app_key[256];
} kw_activated_lease;

/** A new request for this machine. KW_ERR_INVALID_ARGUMENT names the field that is wrong. */
KW_API kw_status kw_activation_request_create(const kw_activation_params *params, kw_activation_request *out,
                                              kw_error *err);
/** The request's typed code (XXXXXX-XXXXXX-…); free *code_out with kw_string_free. */
KW_API kw_status kw_activation_request_code(const kw_activation_request *request, char **code_out, kw_error *err);
/**
 * The request file's JSON text, {"keyward":"activation-request","version":1,"code":…} and, for
 * people, appKey, assetNum, crmProductId, days and createdAt (ISO 8601); free it with kw_string_free.
 */
KW_API kw_status kw_activation_request_file(const kw_activation_request *request, char **json_out, kw_error *err);
/**
 * A request from its typed code or its file's text (the file's code is what counts). A code that
 * does not read is KW_ERR_FORMAT, with err->group naming a mistyped group.
 */
KW_API kw_status kw_activation_request_read(const char *text, kw_activation_request *out, kw_error *err);
/** Keeps a pending request: its file (kw_activation_request_file), atomically, readable by its owner only. */
KW_API kw_status kw_activation_request_save(const kw_activation_request *request, const char *path, kw_error *err);
/** Reads a kept request back (a request file, or a file holding its typed code). */
KW_API kw_status kw_activation_request_load(const char *path, kw_activation_request *out, kw_error *err);

/**
 * Verifies an activation's answer on the machine that asked: its typed code, the answer file's
 * text, or the signed lease (JWS) alone, against the pending request, the shipped key set, this
 * machine's fingerprint and now_ms (epoch ms; 0 for the system's clock). Refusals are
 * KW_ERR_LEASE_REFUSED with the reason in err->code, the first that fails:
 *   typed code: malformed (err->group names a mistyped group), unknown-key, signature,
 *               not-yet-valid, expired, request, fingerprint;
 *   JWS or file: kw_verify_lease's reasons (fingerprint "fph1:…" of this machine, audience the
 *               request's appKey), then request (activation.nonce, assetNum, crmProductId).
 * out may be NULL.
 */
KW_API kw_status kw_verify_activation(const kw_jwks *jwks, const char *answer, const kw_activation_request *request,
                                      const char *fingerprint, int64_t now_ms, kw_activated_lease *out,
                                      kw_error *err);

/** The code a machine shows after deleting its activated lease; free *code_out with kw_string_free. */
KW_API kw_status kw_activation_return_code(const kw_activation_request *request, const char *lease_id,
                                           char **code_out, kw_error *err);

/**
 * The fingerprint an activated lease's JWS names: "fph1:" and the fingerprint hash in base32, into
 * buf (at least KW_ACTIVATION_FINGERPRINT_SIZE bytes). kw_verify_lease takes it for such a lease.
 */
KW_API kw_status kw_activation_fingerprint(const char *fingerprint, char *buf, size_t buf_size, kw_error *err);

/**
 * Typed codes themselves: bytes in Crockford base32, groups of five characters each followed by a
 * Luhn-mod-32 check character, joined by "-". Encoding: free *code_out with kw_string_free.
 */
KW_API kw_status kw_typed_code_encode(const unsigned char *bytes, size_t len, char **code_out, kw_error *err);
/**
 * Decoding forgives case, O for 0, I and L for 1, spaces and missing dashes. The bytes go to buf;
 * *len_out receives their number (also when buf is too small: KW_ERR_INVALID_ARGUMENT). A code
 * that does not read is KW_ERR_FORMAT, err->group naming the first group that does not check.
 */
KW_API kw_status kw_typed_code_decode(const char *text, unsigned char *buf, size_t buf_size, size_t *len_out,
                                      kw_error *err);

/* ---------------------------------------------------------------------------------------------
 * Webhooks (the vendor's back end): Standard Webhooks, HMAC-SHA256.
 */

/** A verified webhook: the body's id and type; timestamp as the body says. */
typedef struct kw_webhook_event {
  const char *id;
  const char *type;
  const char *timestamp;
  /** The body, as received (NUL-terminated copy). */
  const char *json;
} kw_webhook_event;

/**
 * Verifies a webhook: one of the space-separated "v1,<base64>" entries of webhook_signature must
 * be the HMAC-SHA256 of "id.timestamp.body" under one of secrets ("whsec_<base64>"; two while a
 * rotation overlaps), compared in constant time; webhook_timestamp (epoch seconds, as the header
 * carries it) within tolerance_ms of now either way (0: 300000, five minutes); and the body's "id"
 * equal to webhook_id. A missing header is NULL. now_ms is the clock (epoch ms, as for
 * kw_verify_lease), 0 for the system's. The body is the raw bytes, exactly as received. out may be
 * NULL; else free it with kw_webhook_event_free. Refusals are KW_ERR_WEBHOOK_REFUSED, code
 * "missing-header", "timestamp", "signature", "event-id" or "malformed".
 */
KW_API kw_status kw_verify_webhook_ms(const char *const *secrets, size_t secret_count, const char *body,
                                      size_t body_len, const char *webhook_id, const char *webhook_timestamp,
                                      const char *webhook_signature, int64_t now_ms, int64_t tolerance_ms,
                                      kw_webhook_event **out, kw_error *err);
/**
 * Deprecated (CHANGELOG.md): kw_verify_webhook_ms, whose clock is epoch milliseconds as every other
 * clock of this API. This one takes now_s in epoch seconds (0 for the system's clock) and
 * tolerance_seconds (0: 300), and answers exactly as kw_verify_webhook_ms(..., now_s * 1000,
 * tolerance_seconds * 1000, ...). It stays until 1.0.
 */
KW_DEPRECATED("use kw_verify_webhook_ms: its clock is epoch milliseconds")
KW_API kw_status kw_verify_webhook(const char *const *secrets, size_t secret_count, const char *body,
                                   size_t body_len, const char *webhook_id, const char *webhook_timestamp,
                                   const char *webhook_signature, int64_t now_s, int tolerance_seconds,
                                   kw_webhook_event **out, kw_error *err);
KW_API void kw_webhook_event_free(kw_webhook_event *event);

#ifdef __cplusplus
}
#endif

#endif /* KEYWARD_H */
