/* Errors, base64, JSON helpers, clocks and files. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* ---- errors ---- */

void kw__copy_text(char *dst, size_t dst_size, const char *src) {
  if (dst_size == 0) return;
  if (src == NULL) src = "";
  size_t n = strlen(src);
  if (n >= dst_size) n = dst_size - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

void kw__clear(kw_error *err) {
  if (err == NULL) return;
  memset(err, 0, sizeof *err);
}

kw_status kw__fail(kw_error *err, kw_status status, const char *code, const char *fmt, ...) {
  if (err == NULL) return status;
  kw__clear(err);
  err->status = status;
  kw__copy_text(err->code, sizeof err->code, code);
  va_list args;
  va_start(args, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, args);
  va_end(args);
  return status;
}

const char *kw_status_name(kw_status status) {
  switch (status) {
  case KW_OK: return "KW_OK";
  case KW_ERR_INVALID_ARGUMENT: return "KW_ERR_INVALID_ARGUMENT";
  case KW_ERR_NO_MEMORY: return "KW_ERR_NO_MEMORY";
  case KW_ERR_NETWORK: return "KW_ERR_NETWORK";
  case KW_ERR_API: return "KW_ERR_API";
  case KW_ERR_AUTH: return "KW_ERR_AUTH";
  case KW_ERR_PROTOCOL: return "KW_ERR_PROTOCOL";
  case KW_ERR_LEASE_REFUSED: return "KW_ERR_LEASE_REFUSED";
  case KW_ERR_WEBHOOK_REFUSED: return "KW_ERR_WEBHOOK_REFUSED";
  case KW_ERR_IO: return "KW_ERR_IO";
  case KW_ERR_JWKS: return "KW_ERR_JWKS";
  case KW_ERR_LEASE_ENDED: return "KW_ERR_LEASE_ENDED";
  case KW_ERR_INIT: return "KW_ERR_INIT";
  case KW_ERR_FORMAT: return "KW_ERR_FORMAT";
  }
  return "KW_ERR_UNKNOWN";
}

void kw_string_free(char *s) { free(s); }

/* ---- base64 ---- */

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The value of c in the alphabet (url: '-' '_', else '+' '/'), or -1. */
static int b64_value(unsigned char c, bool url) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (url) {
    if (c == '-') return 62;
    if (c == '_') return 63;
  } else {
    if (c == '+') return 62;
    if (c == '/') return 63;
  }
  return -1;
}

static unsigned char *b64_decode(const char *in, size_t len, size_t *out_len, bool url) {
  if (len % 4 == 1) return NULL;
  unsigned char *out = malloc(len / 4 * 3 + 3);
  if (out == NULL) return NULL;
  size_t o = 0;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < len; i++) {
    int v = b64_value((unsigned char)in[i], url);
    if (v < 0) {
      free(out);
      return NULL;
    }
    acc = (acc << 6) | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (unsigned char)(acc >> bits);
      acc &= (1u << bits) - 1;
    }
  }
  /* The bits left over must be zero: one text per byte string (RFC 4648 §3.5). */
  if (acc != 0) {
    free(out);
    return NULL;
  }
  *out_len = o;
  return out;
}

unsigned char *kw__b64url_decode(const char *in, size_t len, size_t *out_len) {
  return b64_decode(in, len, out_len, true);
}

unsigned char *kw__b64_decode(const char *in, size_t len, size_t *out_len) {
  /* Padding is optional, but when present it completes a quantum of four. */
  size_t pad = 0;
  while (len > 0 && in[len - 1] == '=' && pad < 2) {
    len--;
    pad++;
  }
  if (pad > 0 && (len + pad) % 4 != 0) return NULL;
  return b64_decode(in, len, out_len, false);
}

void kw__b64_encode(const unsigned char *in, size_t len, char *out) {
  size_t o = 0;
  size_t i = 0;
  for (; i + 2 < len; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
    out[o++] = B64[v >> 18];
    out[o++] = B64[(v >> 12) & 63];
    out[o++] = B64[(v >> 6) & 63];
    out[o++] = B64[v & 63];
  }
  if (i < len) {
    uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < len ? (uint32_t)in[i + 1] << 8 : 0);
    out[o++] = B64[v >> 18];
    out[o++] = B64[(v >> 12) & 63];
    out[o++] = i + 1 < len ? B64[(v >> 6) & 63] : '=';
    out[o++] = '=';
  }
  out[o] = '\0';
}

/* ---- JSON ---- */

const char *kw__json_string(const cJSON *object, const char *name) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, name);
  return cJSON_IsString(item) ? item->valuestring : NULL;
}

int64_t kw__json_int(const cJSON *object, const char *name) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, name);
  if (!cJSON_IsNumber(item)) return KW_UNSET;
  double v = item->valuedouble;
  /* ±2^63 bound the int64 range; anything past 2^53 has no exact value anyway. */
  if (!isfinite(v) || v != floor(v) || v < -9.2e18 || v > 9.2e18) return KW_UNSET;
  return (int64_t)v;
}

char *kw__strdup(const char *s) {
  if (s == NULL) return NULL;
  size_t n = strlen(s) + 1;
  char *copy = malloc(n);
  if (copy != NULL) memcpy(copy, s, n);
  return copy;
}

/* ---- time ---- */

int64_t kw__realtime_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t kw__monotonic_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- files ---- */

kw_status kw__write_file_atomic(const char *path, const char *data, size_t len, unsigned mode, kw_error *err) {
  if (path == NULL || data == NULL) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "path and data are required");
  size_t n = strlen(path);
  char *tmp = malloc(n + 16);
  if (tmp == NULL) return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  memcpy(tmp, path, n);
  memcpy(tmp + n, ".tmp.XXXXXX", 12);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    int e = errno;
    free(tmp);
    return kw__fail(err, KW_ERR_IO, NULL, "cannot write %s: %s", path, strerror(e));
  }
  const char *p = data;
  size_t left = len;
  int e = 0;
  while (left > 0) {
    ssize_t w = write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      e = errno;
      break;
    }
    p += w;
    left -= (size_t)w;
  }
  if (e == 0 && fchmod(fd, (mode_t)mode) != 0) e = errno;
  if (e == 0 && fsync(fd) != 0) e = errno;
  if (close(fd) != 0 && e == 0) e = errno;
  if (e == 0 && rename(tmp, path) != 0) e = errno;
  if (e != 0) {
    unlink(tmp);
    free(tmp);
    return kw__fail(err, KW_ERR_IO, NULL, "cannot write %s: %s", path, strerror(e));
  }
  free(tmp);
  return KW_OK;
}

kw_status kw__read_file(const char *path, size_t max, char **out, size_t *out_len, kw_error *err) {
  if (path == NULL || out == NULL) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "path is required");
  FILE *f = fopen(path, "rb");
  if (f == NULL) return kw__fail(err, KW_ERR_IO, NULL, "cannot read %s: %s", path, strerror(errno));
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  if (buf == NULL) {
    fclose(f);
    return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
  }
  for (;;) {
    if (len + 1 >= cap) {
      if (cap > max) {
        free(buf);
        fclose(f);
        return kw__fail(err, KW_ERR_IO, NULL, "%s is larger than %zu bytes", path, max);
      }
      char *bigger = realloc(buf, cap * 2);
      if (bigger == NULL) {
        free(buf);
        fclose(f);
        return kw__fail(err, KW_ERR_NO_MEMORY, NULL, "out of memory");
      }
      buf = bigger;
      cap *= 2;
    }
    size_t r = fread(buf + len, 1, cap - 1 - len, f);
    len += r;
    if (r == 0) break;
  }
  int failed = ferror(f);
  fclose(f);
  if (failed) {
    free(buf);
    return kw__fail(err, KW_ERR_IO, NULL, "cannot read %s", path);
  }
  buf[len] = '\0';
  *out = buf;
  if (out_len != NULL) *out_len = len;
  return KW_OK;
}

/* ---- signed lease files ---- */

kw_status kw_lease_token_save(const char *token, const char *path, kw_error *err) {
  if (token == NULL || path == NULL)
    return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "token and path are required");
  return kw__write_file_atomic(path, token, strlen(token), 0600, err);
}

kw_status kw_lease_token_load(const char *path, char **token_out, kw_error *err) {
  if (token_out == NULL) return kw__fail(err, KW_ERR_INVALID_ARGUMENT, NULL, "token_out is required");
  size_t len = 0;
  char *text = NULL;
  kw_status st = kw__read_file(path, 1 << 20, &text, &len, err);
  if (st != KW_OK) return st;
  while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' ' || text[len - 1] == '\t'))
    text[--len] = '\0';
  *token_out = text;
  return KW_OK;
}
