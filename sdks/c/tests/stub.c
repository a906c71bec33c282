#define _POSIX_C_SOURCE 200809L
#include "stub.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CONNECTIONS 64
#define MAX_REQUESTS 512

struct stub {
  int listener;
  char url[64];
  stub_handler handler;
  void *user;
  pthread_t acceptor;
  pthread_mutex_t lock;
  stub_request *requests;
  size_t count;
  int fds[MAX_CONNECTIONS];
  pthread_t threads[MAX_CONNECTIONS];
  size_t connections;
  bool stopping;
};

typedef struct conn {
  stub *s;
  int fd;
} conn;

static void copy_field(char *dst, size_t size, const char *src, size_t n) {
  if (n >= size) n = size - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* Reads one request; false when the connection closed or sent nonsense. */
static bool read_request(int fd, char *buf, size_t cap, size_t *have, stub_request *req, size_t *consumed) {
  char *end = NULL;
  for (;;) {
    buf[*have] = '\0';
    end = strstr(buf, "\r\n\r\n");
    if (end != NULL) break;
    if (*have + 1 >= cap) return false;
    ssize_t r = recv(fd, buf + *have, cap - 1 - *have, 0);
    if (r <= 0) return false;
    *have += (size_t)r;
  }
  memset(req, 0, sizeof *req);
  size_t head_len = (size_t)(end - buf) + 4;
  /* Request line. */
  char *line_end = strstr(buf, "\r\n");
  char *sp1 = memchr(buf, ' ', (size_t)(line_end - buf));
  char *sp2 = sp1 == NULL ? NULL : memchr(sp1 + 1, ' ', (size_t)(line_end - sp1 - 1));
  if (sp1 == NULL || sp2 == NULL) return false;
  copy_field(req->method, sizeof req->method, buf, (size_t)(sp1 - buf));
  char *target = sp1 + 1;
  char *q = memchr(target, '?', (size_t)(sp2 - target));
  if (q != NULL) {
    copy_field(req->path, sizeof req->path, target, (size_t)(q - target));
    copy_field(req->query, sizeof req->query, q + 1, (size_t)(sp2 - q - 1));
  } else {
    copy_field(req->path, sizeof req->path, target, (size_t)(sp2 - target));
  }
  size_t content_length = 0;
  char *h = line_end + 2;
  while (h < end) {
    char *e = strstr(h, "\r\n");
    char *colon = memchr(h, ':', (size_t)(e - h));
    if (colon != NULL) {
      size_t name_len = (size_t)(colon - h);
      char *v = colon + 1;
      while (*v == ' ') v++;
      size_t v_len = (size_t)(e - v);
      if (name_len == 14 && strncasecmp(h, "content-length", 14) == 0) content_length = strtoul(v, NULL, 10);
      else if (name_len == 13 && strncasecmp(h, "authorization", 13) == 0)
        copy_field(req->authorization, sizeof req->authorization, v, v_len);
      else if (name_len == 9 && strncasecmp(h, "usertoken", 9) == 0)
        copy_field(req->user_token, sizeof req->user_token, v, v_len);
      else if (name_len == 12 && strncasecmp(h, "content-type", 12) == 0)
        copy_field(req->content_type, sizeof req->content_type, v, v_len);
      else if (name_len == 15 && strncasecmp(h, "idempotency-key", 15) == 0)
        copy_field(req->idempotency_key, sizeof req->idempotency_key, v, v_len);
    }
    h = e + 2;
  }
  if (head_len + content_length >= cap) return false;
  while (*have < head_len + content_length) {
    ssize_t r = recv(fd, buf + *have, cap - 1 - *have, 0);
    if (r <= 0) return false;
    *have += (size_t)r;
  }
  copy_field(req->body, sizeof req->body, buf + head_len, content_length);
  *consumed = head_len + content_length;
  return true;
}

static bool send_all(int fd, const char *data, size_t len) {
  while (len > 0) {
    ssize_t w = send(fd, data, len, MSG_NOSIGNAL);
    if (w <= 0) {
      if (w < 0 && errno == EINTR) continue;
      return false;
    }
    data += w;
    len -= (size_t)w;
  }
  return true;
}

static void *serve(void *arg) {
  conn *c = arg;
  stub *s = c->s;
  int fd = c->fd;
  free(c);
  static const size_t cap = 65536;
  char *buf = malloc(cap);
  size_t have = 0;
  stub_request req;
  size_t consumed = 0;
  while (buf != NULL && read_request(fd, buf, cap, &have, &req, &consumed)) {
    memmove(buf, buf + consumed, have - consumed);
    have -= consumed;
    stub_reply reply;
    memset(&reply, 0, sizeof reply);
    reply.status = 200;
    strcpy(reply.content_type, "application/json");
    pthread_mutex_lock(&s->lock);
    size_t n = s->count;
    if (s->count < MAX_REQUESTS) s->requests[s->count++] = req;
    snprintf(reply.request_id, sizeof reply.request_id, "req-%zu", n);
    s->handler(&req, n, &reply, s->user);
    pthread_mutex_unlock(&s->lock);
    if (reply.drop) {
      shutdown(fd, SHUT_RDWR);
      break;
    }
    char head[640];
    size_t body_len = strlen(reply.body);
    char retry_after[96] = "";
    if (reply.retry_after[0] != '\0') snprintf(retry_after, sizeof retry_after, "Retry-After: %s\r\n", reply.retry_after);
    int head_len = snprintf(head, sizeof head,
                            "HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %zu\r\nx-request-id: %s\r\n%s\r\n",
                            reply.status, reply.content_type, body_len, reply.request_id, retry_after);
    if (!send_all(fd, head, (size_t)head_len) || !send_all(fd, reply.body, body_len)) break;
  }
  free(buf);
  return NULL;
}

static void *accept_loop(void *arg) {
  stub *s = arg;
  for (;;) {
    int fd = accept(s->listener, NULL, NULL);
    if (fd < 0) {
      if (errno == EINTR) continue;
      return NULL;
    }
    pthread_mutex_lock(&s->lock);
    if (s->stopping || s->connections == MAX_CONNECTIONS) {
      pthread_mutex_unlock(&s->lock);
      close(fd);
      if (s->stopping) return NULL;
      continue;
    }
    conn *c = malloc(sizeof *c);
    c->s = s;
    c->fd = fd;
    s->fds[s->connections] = fd;
    pthread_create(&s->threads[s->connections], NULL, serve, c);
    s->connections++;
    pthread_mutex_unlock(&s->lock);
  }
}

stub *stub_start(stub_handler handler, void *user) {
  stub *s = calloc(1, sizeof *s);
  s->requests = calloc(MAX_REQUESTS, sizeof *s->requests);
  s->handler = handler;
  s->user = user;
  pthread_mutex_init(&s->lock, NULL);
  s->listener = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(s->listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (bind(s->listener, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(s->listener, 16) != 0) {
    perror("stub");
    exit(2);
  }
  socklen_t len = sizeof addr;
  getsockname(s->listener, (struct sockaddr *)&addr, &len);
  snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d", ntohs(addr.sin_port));
  pthread_create(&s->acceptor, NULL, accept_loop, s);
  return s;
}

const char *stub_url(const stub *s) { return s->url; }

size_t stub_count(stub *s) {
  pthread_mutex_lock(&s->lock);
  size_t n = s->count;
  pthread_mutex_unlock(&s->lock);
  return n;
}

stub_request stub_get(stub *s, size_t i) {
  pthread_mutex_lock(&s->lock);
  stub_request r = s->requests[i];
  pthread_mutex_unlock(&s->lock);
  return r;
}

size_t stub_count_path(stub *s, const char *path) {
  pthread_mutex_lock(&s->lock);
  size_t n = 0;
  for (size_t i = 0; i < s->count; i++) n += strcmp(s->requests[i].path, path) == 0;
  pthread_mutex_unlock(&s->lock);
  return n;
}

void stub_lock(stub *s) { pthread_mutex_lock(&s->lock); }
void stub_unlock(stub *s) { pthread_mutex_unlock(&s->lock); }

void stub_stop(stub *s) {
  pthread_mutex_lock(&s->lock);
  s->stopping = true;
  pthread_mutex_unlock(&s->lock);
  shutdown(s->listener, SHUT_RDWR);
  close(s->listener);
  pthread_join(s->acceptor, NULL);
  for (size_t i = 0; i < s->connections; i++) shutdown(s->fds[i], SHUT_RDWR);
  for (size_t i = 0; i < s->connections; i++) {
    pthread_join(s->threads[i], NULL);
    close(s->fds[i]);
  }
  pthread_mutex_destroy(&s->lock);
  free(s->requests);
  free(s);
}
