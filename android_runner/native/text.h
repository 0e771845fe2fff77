#ifndef EDGEFARM_TEXT_H_
#define EDGEFARM_TEXT_H_
/* Growable buffers whose every allocation is checked, strict number parsing, and JSON string output that
 * replaces invalid UTF-8 with U+FFFD (counted) and escapes every control character. */
#include <stddef.h>

typedef struct {
  char *buf;
  size_t len, cap;
  int fixed; /* sb_fixed: a caller's buffer that never grows (what does not fit whole is left out) */
} sbuf;

void *xmalloc(size_t n);            /* never NULL: an allocation failure ends the runner (io_nomem) */
void *xrealloc(void *p, size_t n);
sbuf sb_fixed(char *buf, size_t cap); /* no allocation: for the FATAL line, which may report a failed one */
void sb_add(sbuf *s, const char *data, size_t n);
void sb_str(sbuf *s, const char *text);
void sb_printf(sbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_number(sbuf *s, const char *key, double v); /* ,"key":v  (null for NaN/inf) */
/* A JSON string literal of text[0..len), android_runner/answer_text.py's clean_answer in the same order:
 * invalid UTF-8 -> U+FFFD (each maximal invalid subpart, as Python's errors="replace" does), the bytes
 * replaced over the WHOLE text added to *invalid; then the text as replaced cut to max_bytes of UTF-8
 * (0: no cap) on a character boundary (a character that does not fit whole is dropped with the rest),
 * its bytes past the cut (each U+FFFD 3) added to *dropped. */
void sb_json_text(sbuf *s, const char *text, size_t len, size_t max_bytes, long *invalid, long *dropped);
void sb_json_string(sbuf *s, const char *text); /* whole NUL-terminated text, invalid bytes not counted */

/* Strict parsing: the whole string is the number and it lies in [lo, hi]; 0 on success, -1 otherwise. */
int parse_long(const char *text, long lo, long hi, long *out);
int parse_double(const char *text, double lo, double hi, double *out);
#endif
