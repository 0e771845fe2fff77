#include "power.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"

static int read_number(const char *path, double *out) {
  char buf[64];
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  char *end;
  double v = strtod(buf, &end);
  if (end == buf || !(v == v)) return 0;
  *out = v;
  return 1;
}

void power_setup(power_state *p, const char *dir) {
  memset(p, 0, sizeof *p);
  if (!dir || !*dir) return;
  double v;
  snprintf(p->voltage, sizeof p->voltage, "%s/voltage_now", dir);
  snprintf(p->status, sizeof p->status, "%s/status", dir);
  snprintf(p->current, sizeof p->current, "%s/current_now", dir);
  if (!read_number(p->voltage, &v)) return;
  if (read_number(p->current, &v)) p->src = "sysfs:current_now";
  else {
    snprintf(p->current, sizeof p->current, "%s/current_avg", dir);
    if (read_number(p->current, &v)) p->src = "sysfs:current_avg";
  }
}

void power_tick(power_state *p) {
  if (!p->src || !p->w.on) return;
  double i, v, t = now_s();
  if (!read_number(p->current, &i) || !read_number(p->voltage, &v)) return;
  char st[32] = {0};
  int fd = open(p->status, O_RDONLY);
  if (fd >= 0) {
    ssize_t k = read(fd, st, sizeof st - 1);
    close(fd);
    if (k > 0 && (!strncmp(st, "Charging", 8) || !strncmp(st, "Full", 4) || !strncmp(st, "Not charging", 12)))
      p->w.charging = 1; /* on external power: the battery's current is not the load */
  }
  if (p->w.have) {
    p->w.integral += (t - p->w.t_last) * (p->w.i_last * p->w.v_last + i * v) / 2.0;
    if (i != p->w.i_last) { /* the gauge published a new value: its update period, on the host */
      if (!p->w.changes++) p->w.t_ch0 = t - p->w.t_first;
      p->w.t_ch1 = t - p->w.t_first;
    }
  } else {
    p->w.t_first = t;
    p->w.i_first = i;
    p->w.v_first = v;
  }
  p->w.have = 1;
  p->w.t_last = t;
  p->w.i_last = i;
  p->w.v_last = v;
  p->w.n++;
  p->w.i_sum += i;
  p->w.v_sum += v;
  if (i > 0) p->w.pos++;
  else if (i < 0) p->w.neg++;
}

void power_start(power_state *p) {
  memset(&p->w, 0, sizeof p->w);
  p->w.on = 1;
  power_tick(p);
}

void power_end(power_state *p, sbuf *row) {
  power_tick(p);
  p->w.on = 0;
  if (p->src && p->w.n > 0) {
    sb_printf(row, ",\"power\":{\"kind\":\"iv\",\"integral\":%.9g,\"n\":%d,\"dt_s\":%.6f,\"i_mean\":%.6g,"
              "\"v_mean\":%.6g,\"pos\":%d,\"neg\":%d,\"charging\":%d,\"src\":\"%s\",\"i0\":%.6g,\"v0\":%.6g,"
              "\"i1\":%.6g,\"v1\":%.6g,\"changes\":%d,\"t_ch0\":%.4f,\"t_ch1\":%.4f,\"t0\":%.4f}", p->w.integral, p->w.n,
              p->w.t_last - p->w.t_first, p->w.i_sum / p->w.n, p->w.v_sum / p->w.n, p->w.pos, p->w.neg, p->w.charging, p->src,
              p->w.i_first, p->w.v_first, p->w.i_last, p->w.v_last, p->w.changes, p->w.t_ch0, p->w.t_ch1, p->w.t_first);
  }
}
