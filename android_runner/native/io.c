#define _GNU_SOURCE
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The one payload of an allocation failure, in the FATAL format every fatal error has
 * ({"error":..,"fix":..,"exit_code":..}; android_runner/contract.py reads it). */
#define NOMEM_PAYLOAD \
  "{\"error\":\"out of memory in the runner\",\"fix\":\"free memory on the device; rerun with --resume\"," \
  "\"exit_code\":70}"

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int write_all(int fd, const char *data, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    data += w;
    n -= (size_t)w;
  }
  return 0;
}

void write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  write_all(fd, text, strlen(text));
  close(fd);
}

void emit(const char *kind, const char *payload, size_t len) {
  static char small[512];
  size_t klen = strlen(kind), need = 9 + klen + 1 + len + 1;
  char *line = need <= sizeof small ? NULL : malloc(need);
  pthread_mutex_lock(&out_lock);
  char *buf = line ? line : small;
  if (need > sizeof small && !line) { /* no memory for the copy: two writes rather than none */
    write_all(1, "EDGEFARM ", 9), write_all(1, kind, klen), write_all(1, " ", 1);
    write_all(1, payload, len), write_all(1, "\n", 1);
  } else {
    memcpy(buf, "EDGEFARM ", 9);
    memcpy(buf + 9, kind, klen);
    buf[9 + klen] = ' ';
    memcpy(buf + 10 + klen, payload, len);
    buf[need - 1] = '\n';
    write_all(1, buf, need);
  }
  pthread_mutex_unlock(&out_lock);
  free(line);
}

void note(const char *text) { emit("NOTE", text, strlen(text)); }

void io_nomem(void) {
  emit("FATAL", NOMEM_PAYLOAD, sizeof NOMEM_PAYLOAD - 1);
  _exit(EXIT_NOMEM);
}
