/* What the lab's wrapping runtimes share (noisy_runtime.c, gpu_runtime.c; built by runtime_wrap.py): the
 * real library's function behind a wrapped one, and splitmix64 for their seeded choices. Lab code only. */
#ifndef EDGEFARM_LAB_RUNTIME_WRAP_H
#define EDGEFARM_LAB_RUNTIME_WRAP_H
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

static void *real(const char *name) {
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) abort(); /* the lab built this against the real library: a missing function is a lab bug */
  return f;
}

static uint64_t next(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
#endif
