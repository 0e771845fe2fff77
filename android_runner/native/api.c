/* The runner's one table of the LiteRT-LM C API (api.h). */
#include "api.h"

#include <dlfcn.h>
#include <stddef.h>

ef_api api;
static const char *missing[EF_PARTS]; /* by part: EF_RUN, EF_BENCH, EF_SCORING, EF_TOKENIZER, EF_STREAM */

static void note(const char *name, int parts, int found) {
  for (int i = 0; i < EF_PARTS; i++)
    if (!found && (parts & (1 << i)) && !missing[i]) missing[i] = name;
}

void api_bind(void *handle) {
  for (int i = 0; i < EF_PARTS; i++) missing[i] = NULL;
#define EF_API_BIND(name, parts)                                  \
  *(void **)(&api.name) = handle ? dlsym(handle, #name) : NULL;   \
  note(#name, parts, api.name != NULL);
  EF_API_FUNCTIONS(EF_API_BIND)
#undef EF_API_BIND
}

const char *api_missing(int part) {
  for (int i = 0; i < EF_PARTS; i++)
    if (part == (1 << i)) return missing[i];
  return "an unknown part of the runtime's API";
}
