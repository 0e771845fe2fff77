#ifndef EDGEFARM_IO_H_
#define EDGEFARM_IO_H_
/* The runner's lowest layer: the monotonic clock and its protocol lines on stdout, each ONE write(2).
 * It calls nothing of the runner's, so every other source may use it (no callback circle). */
#include <stddef.h>

#define EXIT_NOMEM 70 /* an allocation failed: one JSON line says so (android_runner/status.py) */

double now_s(void);                                   /* CLOCK_MONOTONIC, seconds */
int write_all(int fd, const char *data, size_t n);    /* 0, or -1 (errno) */
void write_file(const char *path, const char *text);  /* best effort: created or truncated */
/* "EDGEFARM <kind> <payload>\n" as ONE write on stdout (a pipe keeps writes up to PIPE_BUF whole;
 * longer ones are never interleaved with another line of ours). */
void emit(const char *kind, const char *payload, size_t len);
void note(const char *text); /* EDGEFARM NOTE text */
/* The FATAL line of a failed allocation (a constant: nothing is allocated to say it), then exit
 * EXIT_NOMEM. Every other fatal error is the runner's `fatal`, which writes through the JSON writer. */
void io_nomem(void) __attribute__((noreturn));
#endif
