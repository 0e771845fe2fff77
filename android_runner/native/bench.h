#ifndef EDGEFARM_BENCH_H_
#define EDGEFARM_BENCH_H_
/* `edgefarm bench` in the native runner: the same cell as android_runner/bench.py (docs/bench.md).
 * One repetition on a fresh session with no prompt template: a prefill of exactly n_depth tokens (not
 * timed), the timed prefill of exactly n_prompt tokens, the timed decode of exactly n_gen tokens (the
 * engine's num_decode_tokens). Texts are cut from a fixed passage with the model's own tokenizer so
 * that they re-tokenize to the count asked; the runtime's per-turn counts are checked afterwards. */
#include <stddef.h>

#include "job.h"

typedef struct {
  int depth_tokens, prefill_tokens, decode_tokens; /* the runtime's own counts (-1: step not run) */
  double depth_tps, prefill_tps, decode_tps;       /* the runtime's own speeds */
  double depth_wall_ms, timed_wall_ms;             /* this runner's clock around the steps */
} bench_figures;

/* A fresh engine for one repetition of the cell (the last one is deleted), as LiteRT-LM's own Benchmark
 * makes one per run (docs/bench.md): its load in *init_ms, the process's *load_no-th load. NULL and
 * why[] when it cannot be made. */
void *bench_engine_for(const char *model, const bench_cell *cell, const char *cache_dir, long max_num_tokens,
                       double *init_ms, int *load_no, char *why, size_t why_n);

/* The CPU threads the current engine runs with, counted from its thread pool after its work
 * (android_runner/threads.py); -1 when not counted (not a CPU engine, no /proc): the host's rule. */
long bench_threads_ran(void);

/* One repetition on the engine's first session. 0, or -1 with why[] (a step that failed, or a count
 * the runtime did not match). */
int bench_run(void *engine, const bench_cell *cell, bench_figures *out, char *why, size_t why_n);

void bench_close(void);
#endif
