#ifndef EDGEFARM_POWER_H_
#define EDGEFARM_POWER_H_
/* Battery power, raw (--power-dir, e.g. /sys/class/power_supply/battery): current, voltage and status
 * read at the sample's start, each watchdog tick and its end; the RAW trapezoid integral of I*V, the
 * first and last readings, how often the current's value changed (the fuel gauge's updates) and when,
 * and the window's start. Units, sign, the gauge's lag and trust are decided on the host
 * (orchestrator/telemetry/energy.py). The caller serialises every call (the runner's lock). */
#include "text.h"

typedef struct {
  char current[4200], voltage[4200], status[4200]; /* the files read */
  const char *src; /* NULL: no power folder readable, nothing is read */
  struct { /* the sample's window: zeroed at its start */
    int on, have, n, pos, neg, charging, changes;
    double integral, i_sum, v_sum, t_first, t_last, i_last, v_last, i_first, v_first, t_ch0, t_ch1;
  } w;
} power_state;

void power_setup(power_state *p, const char *dir); /* NULL or "": off */
void power_start(power_state *p);                  /* a sample starts: a new window, its first reading */
void power_tick(power_state *p);                   /* one reading (while a window is open) */
void power_end(power_state *p, sbuf *row);         /* the last reading; the window's ,"power":{...} */
#endif
