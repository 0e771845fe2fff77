#include "pin.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sha256.h"

int pin_identify(const char *lib, lib_identity *out) {
  snprintf(out->version, sizeof out->version, "unknown");
  if (sha256_file(lib, out->sha256) != 0) return -1;
  char stamp[4200], text[4096];
  snprintf(stamp, sizeof stamp, "%s", lib);
  char *slash = strrchr(stamp, '/');
  snprintf(slash ? slash + 1 : stamp, sizeof stamp - (size_t)(slash ? slash + 1 - stamp : 0), "VERSION");
  int fd = open(stamp, O_RDONLY);
  if (fd < 0) return 0;
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return 0;
  text[n] = 0;
  char name[64] = {0}, v[64] = {0};
  if (sscanf(text, "%63s %63s", name, v) == 2 && strcmp(name, "litert-lm-api") == 0)
    snprintf(out->version, sizeof out->version, "%s", v);
  return 0;
}
