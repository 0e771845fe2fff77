/* A STAND-IN for a phone's GPU path, for the device lab (issue 44, docs/matrix.md): a liblitert-lm.so that
 * wraps the REAL library, as noisy_runtime.c does (the real one beside it as liblitert-lm-real.so, this
 * library's DT_NEEDED with rpath $ORIGIN, so every function not defined here is the real one). The lab's
 * phones run this host's x86 library, which has no GPU: asked for `gpu`, the real runtime fails to create
 * an engine (gpu_unavailable), which is what a phone without a GPU shows. A phone given THIS library
 * answers on the gpu backend instead, the way a GPU whose kernels round differently would:
 * - litert_lm_engine_settings_create: backend "gpu" creates the real CPU engine (so the model really runs,
 *   one real load per runner start) and marks the process as the GPU path; any other backend passes through;
 * - litert_lm_json_response_get_string: on the GPU path, FLIPS of the first OF replies (an exact, seeded
 *   choice: a partial Fisher-Yates shuffle of 0..OF-1 by splitmix64 from SEED) get their first text part
 *   replaced by "drifted", a wrong answer; every other reply is the CPU engine's, unchanged.
 * Build with -DFLIPS=<n> -DOF=<m> -DSEED=<s>; FLIPS=0 is an unperturbed GPU path (same answers as the CPU).
 * Lab code only: it claims nothing about any real GPU. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "litert_lm_c_api.h"
#include "runtime_wrap.h"

#if !defined(FLIPS) || !defined(OF) || !defined(SEED)
#error "build with -DFLIPS=<n> -DOF=<m> -DSEED=<s>"
#endif

static int gpu;           /* this process created its engine for the gpu backend */
static long replies;      /* replies read on the GPU path so far */
static char flip[OF > 0 ? OF : 1];
static char *reply;

static void choose(void) {
  int order[OF > 0 ? OF : 1];
  uint64_t s = (uint64_t)SEED;
  for (int i = 0; i < OF; i++) order[i] = i;
  for (int i = 0; i < FLIPS && i < OF; i++) {
    int j = i + (int)(next(&s) % (uint64_t)(OF - i));
    int t = order[i];
    order[i] = order[j], order[j] = t;
    flip[order[i]] = 1;
  }
}

LiteRtLmEngineSettings *litert_lm_engine_settings_create(const char *model_path, const char *backend_str,
                                                         const char *vision_backend_str,
                                                         const char *audio_backend_str) {
  LiteRtLmEngineSettings *(*create)(const char *, const char *, const char *, const char *) =
      real("litert_lm_engine_settings_create");
  gpu = backend_str && strcmp(backend_str, "gpu") == 0;
  if (gpu) choose();
  return create(model_path, gpu ? "cpu" : backend_str, vision_backend_str, audio_backend_str);
}

const char *litert_lm_json_response_get_string(const LiteRtLmJsonResponse *response) {
  const char *(*get)(const LiteRtLmJsonResponse *) = real("litert_lm_json_response_get_string");
  const char *text = get(response);
  if (!gpu || !text) return text;
  long k = replies++;
  if (k >= OF || !flip[k]) return text;
  const char *open = strstr(text, "\"text\":\""); /* the first text part's string */
  if (!open) return text;
  open += 8;
  const char *close = open;
  while (*close && *close != '"') close += close[0] == '\\' && close[1] ? 2 : 1;
  if (!*close) return text;
  free(reply);
  reply = malloc(strlen(text) + 8);
  if (!reply) return text;
  size_t head = (size_t)(open - text);
  memcpy(reply, text, head);
  memcpy(reply + head, "drifted", 7);
  strcpy(reply + head + 7, close);
  return reply;
}
