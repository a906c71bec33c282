/* The tests' assertions: a failed check prints where and why, and the test goes on. */
#ifndef KEYWARD_TEST_CHECK_H
#define KEYWARD_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures = 0;
static int check_passed = 0;

#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    if (cond) {                                                                                                        \
      check_passed++;                                                                                                  \
    } else {                                                                                                           \
      check_failures++;                                                                                                \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                                  \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fputc('\n', stderr);                                                                                             \
    }                                                                                                                  \
  } while (0)

#define CHECK_STR(actual, expected)                                                                                    \
  do {                                                                                                                 \
    const char *check_a_ = (actual);                                                                                   \
    const char *check_e_ = (expected);                                                                                 \
    CHECK((check_a_ == NULL && check_e_ == NULL) ||                                                                    \
              (check_a_ != NULL && check_e_ != NULL && strcmp(check_a_, check_e_) == 0),                               \
          "%s is \"%s\", expected \"%s\"", #actual, check_a_ ? check_a_ : "(null)", check_e_ ? check_e_ : "(null)");   \
  } while (0)

#endif
