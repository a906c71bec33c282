/* A program built against the installed libkeyward, as a customer builds one: keyward.h alone,
 * linked through pkg-config or find_package(keyward CONFIG). Exits 0 when the library it runs
 * with is the one it was compiled against and answers a webhook refusal by name. */
#include <keyward.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  kw_error err;
  if (kw_global_init(&err) != KW_OK) {
    fprintf(stderr, "kw_global_init: %s\n", err.message);
    return 1;
  }
  if (strcmp(kw_version(), KW_VERSION) != 0) {
    fprintf(stderr, "header %s, library %s\n", KW_VERSION, kw_version());
    return 1;
  }
  const char *secrets[] = {"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"};
  const char *body = "{\"id\":\"msg_1\",\"type\":\"ping\",\"timestamp\":\"2027-01-01T00:00:00Z\",\"data\":{}}";
  kw_status status = kw_verify_webhook_ms(secrets, 1, body, strlen(body), "msg_1", "1798761600",
                                          "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", INT64_C(1798761600000), 0, NULL, &err);
  if (status != KW_ERR_WEBHOOK_REFUSED || strcmp(err.code, "signature") != 0) {
    fprintf(stderr, "a forged webhook: %s %s\n", kw_status_name(status), err.code);
    return 1;
  }
  kw_global_cleanup();
  printf("libkeyward %s: linked and working\n", kw_version());
  return 0;
}
