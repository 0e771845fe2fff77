/* A phone runtime whose arithmetic drifts, for the device lab (--fidelity; docs/fidelity.md): a
 * liblitert-lm.so that wraps the REAL library. The real one sits beside it as liblitert-lm-real.so, this
 * library's DT_NEEDED (rpath $ORIGIN), so every function not defined here resolves to the real one:
 * the model really runs. Two functions are wrapped (compile with -DNOISE_SD=<nats>):
 * - litert_lm_responses_get_token_scores_at: every per-token score the runtime returns plus Gaussian
 *   noise of sd NOISE_SD, seeded by the scores themselves (the same text scores the same every run);
 * - litert_lm_json_response_get_string (the decode): when NOISE_SD > 0.05, in a share min(1, 2 sd) of
 *   the replies (chosen by a hash of the reply) the answer turns at its second word, each later word
 *   becoming "drifted": a greedy decode whose near-ties flipped. The rule of tests/lab/local/
 *   faulty_runner.py's NOISE, so a drifting board and a drifting phone look alike.
 * Lab code only: the runtime's real behaviour stays the real library's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "litert_lm_c_api.h"
#include "runtime_wrap.h"

#ifndef NOISE_SD
#error "build with -DNOISE_SD=<nats>"
#endif

static uint64_t fnv(const void *data, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ ((const unsigned char *)data)[i]) * 1099511628211ull;
  return h;
}

static double gauss(uint64_t *s) { /* Box-Muller */
  double u = ((double)(next(s) >> 11) + 0.5) / 9007199254740992.0, v = (double)(next(s) >> 11) / 9007199254740992.0;
  return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

static float *noisy;
static size_t noisy_cap;

const float *litert_lm_responses_get_token_scores_at(const LiteRtLmResponses *r, int index) {
  const float *(*scores_at)(const LiteRtLmResponses *, int) = real("litert_lm_responses_get_token_scores_at");
  int (*count_at)(const LiteRtLmResponses *, int) = real("litert_lm_responses_get_num_token_scores_at");
  const float *scores = scores_at(r, index);
  int n = count_at(r, index);
  if (!scores || n <= 0) return scores;
  if ((size_t)n > noisy_cap) {
    float *grown = realloc(noisy, (size_t)n * sizeof *noisy);
    if (!grown) return scores;
    noisy = grown, noisy_cap = (size_t)n;
  }
  uint64_t seed = fnv(scores, (size_t)n * sizeof *scores);
  for (int i = 0; i < n; i++) noisy[i] = (float)((double)scores[i] + NOISE_SD * gauss(&seed));
  return noisy;
}

static char *reply;

const char *litert_lm_json_response_get_string(const LiteRtLmJsonResponse *response) {
  const char *(*get)(const LiteRtLmJsonResponse *) = real("litert_lm_json_response_get_string");
  const char *text = get(response);
  if (!text || NOISE_SD <= 0.05) return text;
  uint64_t seed = fnv(text, strlen(text));
  if ((double)(next(&seed) >> 11) / 9007199254740992.0 >= (2 * NOISE_SD < 1 ? 2 * NOISE_SD : 1)) return text;
  const char *open = strstr(text, "\"text\":\""); /* the first text part's string */
  if (!open) return text;
  open += 8;
  const char *close = open;
  while (*close && *close != '"') close += close[0] == '\\' && close[1] ? 2 : 1;
  const char *space = memchr(open, ' ', (size_t)(close - open));
  if (!*close || !space) return text;
  size_t later = 0;
  for (const char *p = space; p < close; p++) later += *p == ' ';
  free(reply);
  reply = malloc(strlen(text) + later * 8 + 1);
  if (!reply) return text;
  size_t k = (size_t)(space - text);
  memcpy(reply, text, k);
  for (size_t i = 0; i < later; i++) memcpy(reply + k, " drifted", 8), k += 8;
  strcpy(reply + k, close);
  return reply;
}
