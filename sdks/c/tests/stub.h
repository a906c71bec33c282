/* A small HTTP/1.1 server on 127.0.0.1 for the session tests: it records every request and answers
   with the test's handler. One thread per connection (keep-alive), handlers serialised. */
#ifndef KEYWARD_TEST_STUB_H
#define KEYWARD_TEST_STUB_H

#include <stddef.h>

typedef struct stub_request {
  char method[8];
  char path[512];  /* without the query */
  char query[512]; /* after '?', or empty */
  char authorization[1024];
  char user_token[512];
  char content_type[128];
  char idempotency_key[256];
  char body[8192];
} stub_request;

typedef struct stub_reply {
  int status;                  /* 200 unless set */
  char content_type[64];       /* application/json unless set */
  char body[8192];
  char request_id[64];         /* x-request-id; "req-<n>" unless set */
  char retry_after[64];        /* Retry-After, when set */
  int drop;                    /* no answer: the connection is closed once the request is read */
} stub_reply;

/* Called for every request, in order, under the stub's lock: fill reply. n counts from 0. */
typedef void (*stub_handler)(const stub_request *req, size_t n, stub_reply *reply, void *user);

typedef struct stub stub;

stub *stub_start(stub_handler handler, void *user);
/* "http://127.0.0.1:<port>" */
const char *stub_url(const stub *s);
/* How many requests arrived; a copy of request i. */
size_t stub_count(stub *s);
stub_request stub_get(stub *s, size_t i);
/* How many requests arrived whose path is path (exact). */
size_t stub_count_path(stub *s, const char *path);
/* The handlers' lock: a test changing what its handler reads holds it, so the change is ordered. */
void stub_lock(stub *s);
void stub_unlock(stub *s);
void stub_stop(stub *s);

#endif
