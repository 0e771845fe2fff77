/*
 * A stand-in for edgefarm's native phone runner (android_runner/native/edgefarm_runner.c) whose
 * "inference" takes a fixed, known time per sample: it sleeps SAMPLE_MS milliseconds (the phone's
 * compute, which costs the host nothing) and answers every sample with one fixed text. Same arguments,
 * same job file, same state files (`inflight`, `loads.tsv`), same result lines and protocol lines
 * (READY, BEGIN n, RESULT {...}, DONE, FATAL {"error","fix","exit_code"}; each ONE write(2)), so the
 * host and driver.sh cannot tell it from the real one.
 * Used by scripts/bench_farm.py to measure what the HOST adds on a farm of N phones:
 *
 *   cc -O2 -DSAMPLE_MS=100 -o edgefarm_runner scripts/fixed_time_runner.c
 *
 * It takes the runner's arguments (--settings, --job, --results, --state-dir ...) but never reads the
 * settings file's library or model (no runtime), and it does not call the driver's --hook (the
 * battery/thermal snapshots are the phone's work too, and cost host CPU in the device lab only).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef SAMPLE_MS
#define SAMPLE_MS 100
#endif

static char *read_file(const char *path, size_t *len) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  for (;;) {
    if (n == cap) buf = realloc(buf, (cap *= 2) + 1);
    ssize_t r = read(fd, buf + n, cap - n);
    if (r <= 0) break;
    n += (size_t)r;
  }
  close(fd);
  buf[n] = 0;
  *len = n;
  return buf;
}

/* One protocol line, "EDGEFARM <kind> <payload>\n", as ONE write(2), as the real runner does. */
static void emit(const char *kind, const char *payload) {
  char buf[4096];
  int k = snprintf(buf, sizeof buf, "EDGEFARM %s %s\n", kind, payload);
  if (k > 0 && (size_t)k < sizeof buf) {
    ssize_t w = write(1, buf, (size_t)k);
    (void)w;
  }
}

static void write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  ssize_t w = write(fd, text, strlen(text));
  (void)w;
  close(fd);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sample numbers of the job file: "S n" records; length-prefixed fields ("Y|T|M len\n<data>\n") skipped. */
static int parse_numbers(char *text, size_t len, int **out) {
  int cap = 256, count = 0;
  int *ns = malloc(sizeof(int) * cap);
  char *p = text, *end = text + len;
  while (p < end) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) break;
    if (p[0] == 'S' && p[1] == ' ') {
      if (count == cap) ns = realloc(ns, sizeof(int) * (cap *= 2));
      ns[count++] = atoi(p + 2);
      p = nl + 1;
    } else if ((p[0] == 'Y' || p[0] == 'T' || p[0] == 'M') && p[1] == ' ') {
      long n = atol(p + 2);
      p = nl + 1 + n + 1;
    } else {
      p = nl + 1;
    }
  }
  *out = ns;
  return count;
}

int main(int argc, char **argv) {
  const char *job = NULL, *results = NULL, *state_dir = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--job")) job = argv[i + 1];
    else if (!strcmp(argv[i], "--results")) results = argv[i + 1];
    else if (!strcmp(argv[i], "--state-dir")) state_dir = argv[i + 1];
  }
  if (!job || !results || !state_dir) {
    emit("FATAL", "{\"error\":\"usage: edgefarm_runner --job J --results R --state-dir D ...\",\"fix\":\"\",\"exit_code\":2}");
    return 2;
  }
  size_t len = 0, rlen = 0;
  char *text = read_file(job, &len);
  if (!text) {
    emit("FATAL", "{\"error\":\"cannot read the job file\",\"fix\":\"\",\"exit_code\":2}");
    return 2;
  }
  int *ns = NULL;
  int count = parse_numbers(text, len, &ns);
  int max_n = 0;
  for (int i = 0; i < count; i++) max_n = ns[i] > max_n ? ns[i] : max_n;
  unsigned char *done = calloc((size_t)max_n + 2, 1);
  char *prev = read_file(results, &rlen);
  for (char *p = prev; p && *p;) {
    char *nl = strchr(p, '\n');
    if (nl && !strncmp(p, "{\"n\":", 5)) {
      int n = atoi(p + 5);
      if (n > 0 && n <= max_n) done[n] = 1;
    }
    p = nl ? nl + 1 : NULL;
  }
  char loads[4200], inflight[4200], line[2048];
  snprintf(loads, sizeof loads, "%s/loads.tsv", state_dir);
  snprintf(inflight, sizeof inflight, "%s/inflight", state_dir);
  int lfd = open(loads, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (lfd >= 0) {
    snprintf(line, sizeof line, "%d\t0.000\n", (int)getpid());
    ssize_t w = write(lfd, line, strlen(line));
    (void)w;
    close(lfd);
  }
  int rfd = open(results, O_WRONLY | O_CREAT | O_APPEND, 0644);
  int pending = 0;
  for (int i = 0; i < count; i++) pending += !done[ns[i]];
  snprintf(line, sizeof line, "{\"init_ms\":0.000,\"pid\":%d,\"pending\":%d}", (int)getpid(), pending);
  emit("READY", line);
  struct timespec nap = {SAMPLE_MS / 1000, (SAMPLE_MS % 1000) * 1000000L};
  for (int i = 0; i < count; i++) {
    int n = ns[i];
    if (done[n]) continue;
    snprintf(line, sizeof line, "%d\n", n);
    write_file(inflight, line);
    snprintf(line, sizeof line, "%d", n);
    emit("BEGIN", line);
    double t0 = now_s();
    nanosleep(&nap, NULL);
    double ms = (now_s() - t0) * 1000.0;
    int k = snprintf(line, sizeof line,
                     "{\"n\":%d,\"status\":\"ok\",\"response\":\"{\\\"role\\\":\\\"assistant\\\",\\\"content\\\":"
                     "[{\\\"type\\\":\\\"text\\\",\\\"text\\\":\\\"a fixed-time answer\\\"}]}\","
                     "\"init_ms\":0.0,\"ttft_ms\":%.3f,\"infer_ms\":%.3f,\"wall_ms\":%.3f,"
                     "\"turns\":[{\"prefill_tokens\":8,\"prefill_tps\":1000.0,\"decode_tokens\":4,"
                     "\"decode_tps\":100.0,\"wall_ms\":%.3f}],\"peak_rss_kb\":1024,\"peak_hwm_kb\":1024,"
                     "\"peak_anon_kb\":512,\"peak_file_kb\":512,\"peak_swap_kb\":0,\"peak_method\":\"sampled\","
                     "\"mem_sample_ms\":20,\"runner\":\"native\",\"invalid_utf8_bytes\":0,"
                     "\"output_truncated_bytes\":0}\n",
                     n, ms / 2, ms, ms, ms);
    ssize_t w = write(rfd, line, (size_t)k);
    (void)w;
    line[k - 1] = 0; /* the newline: emit adds its own */
    emit("RESULT", line);
    write_file(inflight, "");
  }
  unlink(inflight);
  snprintf(line, sizeof line, "{\"samples\":%d}", pending);
  emit("DONE", line);
  return 0;
}
