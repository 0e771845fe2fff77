#include "text.h"

#include "io.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef EF_TEST_HOOKS /* unit tests only (tests/unit/native): the Nth allocation fails (EF_FAIL_ALLOC_AT=N) */
static int alloc_fails(void) {
  static long left = -2;
  if (left == -2) {
    const char *at = getenv("EF_FAIL_ALLOC_AT");
    left = at ? atol(at) : -1;
  }
  return left > 0 && --left == 0;
}
#else
static int alloc_fails(void) { return 0; }
#endif

void *xmalloc(size_t n) {
  void *p = alloc_fails() ? NULL : malloc(n ? n : 1);
  if (!p) io_nomem();
  return p;
}

void *xrealloc(void *p, size_t n) {
  void *q = alloc_fails() ? NULL : realloc(p, n ? n : 1);
  if (!q) io_nomem();
  return q;
}

/* 1 when `more` bytes (and the NUL) fit, growing the buffer if it may; 0 for a fixed one that is full. */
static int sb_grow(sbuf *s, size_t more) {
  if (more > ((size_t)-1) / 4 - s->len) {
    if (s->fixed) return 0;
    io_nomem();
  }
  if (s->len + more + 1 <= s->cap) return 1;
  if (s->fixed) return 0;
  size_t cap = s->cap ? s->cap : 256;
  while (cap < s->len + more + 1) cap *= 2;
  s->buf = xrealloc(s->buf, cap);
  s->cap = cap;
  return 1;
}

sbuf sb_fixed(char *buf, size_t cap) {
  sbuf s = {buf, 0, cap, 1};
  if (cap) buf[0] = 0;
  return s;
}

void sb_add(sbuf *s, const char *data, size_t n) {
  if (!sb_grow(s, n)) return;
  if (n) memcpy(s->buf + s->len, data, n);
  s->len += n;
  s->buf[s->len] = 0;
}

void sb_str(sbuf *s, const char *text) { sb_add(s, text, strlen(text)); }

void sb_printf(sbuf *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || !sb_grow(s, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(s->buf + s->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  s->len += (size_t)n;
}

void sb_number(sbuf *s, const char *key, double v) {
  if (!isfinite(v) || v > 1e300 || v < -1e300) sb_printf(s, ",\"%s\":null", key);
  else sb_printf(s, ",\"%s\":%.4f", key, v);
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 with *bad = bytes of its maximal invalid subpart. */
static size_t utf8_seq(const unsigned char *p, size_t left, size_t *bad) {
  unsigned char b = p[0];
  size_t need;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) need = 1;
  else if (b == 0xE0) need = 2, lo = 0xA0;
  else if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF) need = 2;
  else if (b == 0xED) need = 2, hi = 0x9F;
  else if (b == 0xF0) need = 3, lo = 0x90;
  else if (b >= 0xF1 && b <= 0xF3) need = 3;
  else if (b == 0xF4) need = 3, hi = 0x8F;
  else {
    *bad = 1;
    return 0;
  }
  for (size_t k = 1; k <= need; k++) {
    unsigned char c = k < left ? p[k] : 0;
    unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (k >= left || c < l || c > h) {
      *bad = k;
      return 0;
    }
  }
  return need + 1;
}

void sb_json_text(sbuf *s, const char *text, size_t len, size_t max_bytes, long *invalid, long *dropped) {
  const unsigned char *p = (const unsigned char *)text;
  size_t i = 0, kept = 0; /* kept: UTF-8 bytes of the answer written so far */
  int cut = 0;
  sb_add(s, "\"", 1);
  while (i < len) {
    size_t bad = 0, n = utf8_seq(p + i, len - i, &bad);
    size_t out = n ? n : 3; /* U+FFFD is 3 bytes of UTF-8 */
    if (!n && invalid) *invalid += (long)bad; /* over the whole text, the part past the cut too */
    if (!cut && max_bytes && kept + out > max_bytes) cut = 1; /* a character that does not fit whole goes */
    if (cut) {
      if (dropped) *dropped += (long)out; /* bytes of the text as replaced, as answer_text.py counts */
      i += n ? n : bad;
      continue;
    }
    kept += out;
    if (!n) {
      sb_add(s, "\\ufffd", 6);
      i += bad;
      continue;
    }
    unsigned char c = p[i];
    if (c == '"') sb_add(s, "\\\"", 2);
    else if (c == '\\') sb_add(s, "\\\\", 2);
    else if (c == '\n') sb_add(s, "\\n", 2);
    else if (c == '\r') sb_add(s, "\\r", 2);
    else if (c == '\t') sb_add(s, "\\t", 2);
    else if (c < 0x20 || c == 0x7f) sb_printf(s, "\\u%04x", c);
    else sb_add(s, (const char *)p + i, n);
    i += n;
  }
  sb_add(s, "\"", 1);
}

void sb_json_string(sbuf *s, const char *text) {
  text = text ? text : "";
  sb_json_text(s, text, strlen(text), 0, NULL, NULL);
}

int parse_long(const char *text, long lo, long hi, long *out) {
  if (!text || !*text || (*text != '-' && (*text < '0' || *text > '9'))) return -1;
  char *end;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

int parse_double(const char *text, double lo, double hi, double *out) {
  if (!text || !*text || (*text != '-' && *text != '.' && (*text < '0' || *text > '9'))) return -1;
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (errno || *end || !isfinite(v) || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}
