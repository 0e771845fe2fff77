#ifndef EDGEFARM_PIN_H_
#define EDGEFARM_PIN_H_
/* What a runtime library is: its sha256 and the version the VERSION file beside it names (written by
 * build.py: "litert-lm-api 0.18.1 (...)"). The runner compares them with the ones it was built for. */

typedef struct {
  char sha256[65];
  char version[64]; /* "unknown" without a readable VERSION file */
} lib_identity;

/* Hashes the WHOLE library on every call: no cache keyed by size, mtime or inode, which a library
 * rewritten with those restored would pass unhashed (the check exists to refuse exactly that).
 * 0, or -1 with errno when the library cannot be read. */
int pin_identify(const char *lib, lib_identity *out);
#endif
