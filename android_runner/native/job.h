#ifndef EDGEFARM_JOB_H_
#define EDGEFARM_JOB_H_
#include <stddef.h>

#define MAX_SAMPLE_N 1000000L

/* "EFJOB 1\n" then per sample:
 *   S <n>\n  Y <len>\n<system>\n  T <len>\n<tools json>\n  P <top_k> <top_p> <temperature> <seed>\n
 *   O <max_output_tokens>\n  M <len>\n<message json>\n (one per turn, any number)  E\n
 * Y and T are optional; byte lengths, so any text goes through untouched. Every number is range-checked;
 * anything else is the whole job refused (one FATAL line, exit 2): the host wrote it, so it is a bug. */
typedef struct {
  long n;
  const char *system, *tools;
  long top_k, seed, max_output_tokens;
  double top_p, temperature;
  size_t turns, cap;
  const char **messages;
} sample;

/* Parse the job file in buf (modified in place: fields become NUL-terminated strings that point into it).
 * 0 and the samples, or -1 with why[] naming the line. Allocations are checked (xmalloc). */
int parse_job(char *buf, size_t size, sample **out, size_t *count, char *why, size_t why_n);
#endif
