#ifndef EDGEFARM_JOB_H_
#define EDGEFARM_JOB_H_
#include <stddef.h>

#define MAX_SAMPLE_N 1000000L

/* "EFJOB 1\n" then per sample:
 *   S <n>\n  Y <len>\n<system>\n  T <len>\n<tools json>\n  H <len>\n<history: the messages before, json>\n  P <top_k> <top_p> <temperature> <seed>\n
 *   O <max_output_tokens>\n  M <len>\n<message json>\n (one per turn, any number)
 *   A\n (`edgefarm serve`, a streamed request: the last turn's answer piece by piece, stream.c)
 *   K\n (--fidelity: tokenize the answer), then F <len>\n<prefill text>\n (any number) and R <len>\n<text to
 *   score>\n, or X <len>\n<why nothing is scored>\n (android_runner/fidelity.py does the same)
 *   E\n
 * or, for `edgefarm bench`, S <n>\n B <n_prompt> <n_gen> <n_depth> <threads> <backend>\n E\n
 * Y, T, H, A and the fidelity records are optional; byte lengths, so any text goes through untouched. Every number is range-checked;
 * anything else is the whole job refused (one FATAL line, exit 2): the host wrote it, so it is a bug. */
/* A bench sample ("B <n_prompt> <n_gen> <n_depth> <threads> <backend>", no M records): the cell it
 * measures (android_runner/native/bench.h); threads 0 = the runtime's default. */
typedef struct {
  long n_prompt, n_gen, n_depth, threads;
  char backend[8];
} bench_cell;

typedef struct {
  long n;
  int is_bench;
  bench_cell bench;
  const char *system, *tools;
  const char *history; /* H (`edgefarm serve`): the conversation's first messages, a JSON array */
  long top_k, seed, max_output_tokens;
  double top_p, temperature;
  size_t turns, cap;
  const char **messages;
  int stream;                   /* A: the last turn's answer goes piece by piece (`edgefarm serve`) */
  int fidelity;                 /* K: the fidelity pass runs after the answer */
  const char *score_target;     /* R: the reference to score (NULL: none) */
  const char *score_skip;       /* X: the host's reason for scoring nothing */
  size_t prefills, prefill_cap;
  const char **prefill;         /* F: the prompt text chunks the scoring session prefills */
} sample;

/* Parse the job file in buf (modified in place: fields become NUL-terminated strings that point into it).
 * 0 and the samples, or -1 with why[] naming the line. Allocations are checked (xmalloc). */
int parse_job(char *buf, size_t size, sample **out, size_t *count, char *why, size_t why_n);
#endif
