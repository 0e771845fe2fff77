#ifndef EDGEFARM_MEMORY_H_
#define EDGEFARM_MEMORY_H_
/* The runner's own memory, from /proc/self: the figures of a sample's row. No state here: the peaks
 * live in the runner's state (edgefarm_runner.c), under its lock. */

typedef struct {
  long rss, hwm, anon, file, swap; /* kB */
} mem_kb;

void mem_read(mem_kb *m);                          /* /proc/self/status now (fields it lacks left as they are) */
void mem_peak(mem_kb *peaks, const mem_kb *now);   /* each field the larger of the two */
/* Reset VmHWM for the sample about to start (/proc/self/clear_refs "5"): 1 when the kernel took it,
 * then VmHWM at the end is this sample's peak ("hwm_reset"); 0: the peaks are sampled ("sampled"). */
int mem_reset_hwm(void);
#endif
