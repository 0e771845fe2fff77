#include "memory.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void mem_read(mem_kb *m) {
  char buf[4096];
  int fd = open("/proc/self/status", O_RDONLY);
  if (fd < 0) return;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return;
  buf[n] = 0;
  static const char *const keys[] = {"VmRSS:", "VmHWM:", "RssAnon:", "RssFile:", "VmSwap:"};
  long *dst[] = {&m->rss, &m->hwm, &m->anon, &m->file, &m->swap};
  for (int i = 0; i < 5; i++) {
    char *p = strstr(buf, keys[i]);
    if (!p) continue;
    char *end;
    long v = strtol(p + strlen(keys[i]), &end, 10);
    if (end != p + strlen(keys[i]) && v >= 0 && v < (1L << 40)) *dst[i] = v; /* some kernels print garbage */
  }
}

void mem_peak(mem_kb *peaks, const mem_kb *now) {
  if (now->rss > peaks->rss) peaks->rss = now->rss;
  if (now->hwm > peaks->hwm) peaks->hwm = now->hwm;
  if (now->anon > peaks->anon) peaks->anon = now->anon;
  if (now->file > peaks->file) peaks->file = now->file;
  if (now->swap > peaks->swap) peaks->swap = now->swap;
}

int mem_reset_hwm(void) {
  int fd = open("/proc/self/clear_refs", O_WRONLY);
  if (fd < 0) return 0;
  int ok = write(fd, "5", 1) == 1;
  close(fd);
  return ok;
}
