#ifndef EDGEFARM_HOOK_H_
#define EDGEFARM_HOOK_H_
/* The driver's hook around each sample (--hook DRIVER.sh), under its own deadline (--hook-timeout-s),
 * never the sample's: `sh HOOK hook STATE_DIR/samples/N PHASE`. */

typedef struct {
  const char *path; /* NULL: no hook */
  double timeout_s;
  const char *state_dir; /* the job's state folder: samples/N/ is the hook's */
} hook_cfg;

/* Run the hook; its `EDGEFARM NOTE` lines are passed on (one write each), the rest of its stdout
 * dropped; past timeout_s its process group is killed and a NOTE says so. */
void hook_run(const hook_cfg *h, long n, const char *phase);
#endif
