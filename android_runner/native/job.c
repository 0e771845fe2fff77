/* The native runner's job file (android_runner/conversation.py job_file_text writes it). */
#include "job.h"

#include <stdio.h>
#include <string.h>

#include "settings_gen.h" /* generated from android_runner/settings.py at build time */
#include "text.h"

static char *next_line(char **cur, char *end) {
  char *line = *cur;
  if (line >= end) return NULL;
  char *nl = memchr(line, '\n', (size_t)(end - line));
  if (!nl) return NULL;
  *nl = 0;
  *cur = nl + 1;
  return line;
}

static int job_error(char *why, size_t why_n, long line_no, const char *what, const char *line) {
  snprintf(why, why_n, "job file line %ld: %s: %.60s", line_no, what, line ? line : "");
  return -1;
}

int parse_job(char *buf, size_t size, sample **out, size_t *count, char *why, size_t why_n) {
  char *cur = buf, *end = buf + size;
  long line_no = 1;
  char *line = next_line(&cur, end);
  if (!line || strcmp(line, "EFJOB 1") != 0) return job_error(why, why_n, 1, "not an edgefarm job file (no 'EFJOB 1' header)", line);
  size_t cap = 64, k = 0;
  sample *list = xmalloc(cap * sizeof *list);
  sample *s = NULL;
  while ((line = next_line(&cur, end)) != NULL) {
    line_no++;
    char tag = line[0];
    if (tag == 0) return job_error(why, why_n, line_no, "empty line", line);
    if (tag != 'E' && tag != 'K' && tag != 'A' && line[1] != ' ') return job_error(why, why_n, line_no, "malformed record", line);
    if (tag == 'S') {
      if (s) return job_error(why, why_n, line_no, "sample not closed with E", line);
      long n;
      if (parse_long(line + 2, 1, MAX_SAMPLE_N, &n) != 0) return job_error(why, why_n, line_no, "sample number not in 1..1000000", line);
      for (size_t i = 0; i < k; i++)
        if (list[i].n == n) return job_error(why, why_n, line_no, "sample number repeated", line);
      if (k == cap) {
        cap *= 2;
        list = xrealloc(list, cap * sizeof *list);
      }
      s = &list[k++];
      memset(s, 0, sizeof *s);
      s->n = n;
      s->top_k = 1;
      s->top_p = 0.95;
      s->temperature = 1.0;
    } else if (!s) {
      return job_error(why, why_n, line_no, "record outside a sample", line);
    } else if (tag == 'K' && line[1] == 0) {
      s->fidelity = 1;
    } else if (tag == 'A' && line[1] == 0) {
      s->stream = 1;
    } else if (tag == 'Y' || tag == 'T' || tag == 'H' || tag == 'M' || tag == 'F' || tag == 'R' || tag == 'X') {
      long len;
      if (parse_long(line + 2, 0, (long)(end - cur) - 1, &len) != 0 || cur[len] != '\n')
        return job_error(why, why_n, line_no, "field length not a number that fits the file", line);
      char *data = cur;
      data[len] = 0; /* overwrites the newline after the field */
      cur += len + 1;
      line_no++;
      for (char *p = data; p < data + len; p++) line_no += *p == '\n';
      if (memchr(data, 0, (size_t)len)) return job_error(why, why_n, line_no, "NUL byte in a field", line);
      if (tag == 'Y') s->system = data;
      else if (tag == 'T') s->tools = data;
      else if (tag == 'H') s->history = data;
      else if (tag == 'R') s->score_target = data;
      else if (tag == 'X') s->score_skip = data;
      else if (tag == 'F') {
        if (s->prefills == s->prefill_cap) {
          s->prefill_cap = s->prefill_cap ? s->prefill_cap * 2 : 4;
          s->prefill = xrealloc(s->prefill, s->prefill_cap * sizeof *s->prefill);
        }
        s->prefill[s->prefills++] = data;
      } else {
        if (s->turns == s->cap) {
          s->cap = s->cap ? s->cap * 2 : 4;
          s->messages = xrealloc(s->messages, s->cap * sizeof *s->messages);
        }
        s->messages[s->turns++] = data;
      }
    } else if (tag == 'P') {
      char *f[5] = {0};
      int nf = 0;
      for (char *tok = strtok(line + 2, " "); tok && nf < 5; tok = strtok(NULL, " ")) f[nf++] = tok;
      if (nf != 4 || parse_long(f[0], 1, 1000000, &s->top_k) || parse_double(f[1], 0.0, 1.0, &s->top_p) ||
          parse_double(f[2], 0.0, 100.0, &s->temperature) || parse_long(f[3], -2147483647L - 1, 2147483647L, &s->seed))
        return job_error(why, why_n, line_no, "sampler line not 'P top_k(1..1e6) top_p(0..1) temperature(0..100) seed(int32)'", line);
    } else if (tag == 'O') {
      if (parse_long(line + 2, 0, 10000000, &s->max_output_tokens) != 0)
        return job_error(why, why_n, line_no, "max output tokens not in 0..10000000", line);
    } else if (tag == 'B') {
      char *f[6] = {0};
      int nf = 0;
      for (char *tok = strtok(line + 2, " "); tok && nf < 6; tok = strtok(NULL, " ")) f[nf++] = tok;
      bench_cell *c = &s->bench;
      if (nf != 5 || parse_long(f[0], 1, 131072, &c->n_prompt) || parse_long(f[1], 0, 16384, &c->n_gen) ||
          parse_long(f[2], 0, 131072, &c->n_depth) ||
          parse_long(f[3], SETTING_THREADS_LEAST, SETTING_THREADS_MOST, &c->threads) || !is_backend(f[4]))
        return job_error(why, why_n, line_no,
                         "bench line not 'B n_prompt(1..131072) n_gen(0..16384) n_depth(0..131072) threads("
                         SETTING_THREADS_RANGE ") " BACKENDS_BAR "'", line);
      snprintf(c->backend, sizeof c->backend, "%s", f[4]);
      s->is_bench = 1;
    } else if (tag == 'E' && line[1] == 0) {
      if (s->turns == 0 && !s->is_bench) return job_error(why, why_n, line_no, "sample without a message", line);
      if (s->turns && s->is_bench) return job_error(why, why_n, line_no, "bench sample with a message", line);
      if (s->stream && s->is_bench) return job_error(why, why_n, line_no, "bench sample streamed (A)", line);
      if ((s->score_target || s->prefills || s->score_skip) && !s->fidelity)
        return job_error(why, why_n, line_no, "fidelity record (F, R, X) without K", line);
      s = NULL;
    } else {
      return job_error(why, why_n, line_no, "unknown record", line);
    }
  }
  if (s) return job_error(why, why_n, line_no, "last sample not closed with E", "");
  if (cur != end) return job_error(why, why_n, line_no + 1, "last line has no newline", cur);
  *out = list;
  *count = k;
  return 0;
}

