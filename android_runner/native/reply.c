#include "reply.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  const unsigned char *p;
  size_t i, n;
} scan;

static void ws(scan *s) {
  while (s->i < s->n && (s->p[s->i] == ' ' || s->p[s->i] == '\t' || s->p[s->i] == '\n' || s->p[s->i] == '\r'))
    s->i++;
}

static int at(scan *s, char c) {
  ws(s);
  if (s->i < s->n && s->p[s->i] == (unsigned char)c) {
    s->i++;
    return 1;
  }
  return 0;
}

static long hex4(scan *s) {
  if (s->n - s->i < 4) return -1;
  long v = 0;
  for (int k = 0; k < 4; k++) {
    unsigned char c = s->p[s->i + (size_t)k];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  s->i += 4;
  return v;
}

static void put_code_point(sbuf *out, long cp) { /* surrogates too: 3 bytes, as Python's "surrogatepass" */
  char b[4];
  size_t k;
  if (cp < 0x80) b[0] = (char)cp, k = 1;
  else if (cp < 0x800) b[0] = (char)(0xC0 | (cp >> 6)), b[1] = (char)(0x80 | (cp & 0x3F)), k = 2;
  else if (cp < 0x10000)
    b[0] = (char)(0xE0 | (cp >> 12)), b[1] = (char)(0x80 | ((cp >> 6) & 0x3F)), b[2] = (char)(0x80 | (cp & 0x3F)), k = 3;
  else
    b[0] = (char)(0xF0 | (cp >> 18)), b[1] = (char)(0x80 | ((cp >> 12) & 0x3F)), b[2] = (char)(0x80 | ((cp >> 6) & 0x3F)),
    b[3] = (char)(0x80 | (cp & 0x3F)), k = 4;
  sb_add(out, b, k);
}

/* The JSON string at s (after whitespace): its decoded bytes appended to out (NULL: only checked), as
 * Python's json.loads decodes it (a high surrogate escape followed by a low one is one character). */
static int string(scan *s, sbuf *out) {
  if (!at(s, '"')) return -1;
  for (;;) {
    size_t j = s->i;
    while (j < s->n && s->p[j] != '"' && s->p[j] != '\\' && s->p[j] >= 0x20) j++;
    if (out && j > s->i) sb_add(out, (const char *)s->p + s->i, j - s->i);
    s->i = j;
    if (j >= s->n || s->p[j] < 0x20) return -1; /* unterminated, or a raw control character */
    s->i++;
    if (s->p[j] == '"') return 0;
    if (s->i >= s->n) return -1;
    unsigned char e = s->p[s->i++];
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *simple = e ? strchr(from, e) : NULL;
    if (simple) {
      if (out) sb_add(out, &to[simple - from], 1);
      continue;
    }
    if (e != 'u') return -1;
    long cp = hex4(s);
    if (cp < 0) return -1;
    if (cp >= 0xD800 && cp <= 0xDBFF && s->n - s->i >= 6 && s->p[s->i] == '\\' && s->p[s->i + 1] == 'u') {
      scan t = {s->p, s->i + 2, s->n};
      long lo = hex4(&t);
      if (lo >= 0xDC00 && lo <= 0xDFFF) cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00), s->i = t.i;
    }
    if (out) put_code_point(out, cp);
  }
}

static int digits(scan *s) {
  size_t from = s->i;
  while (s->i < s->n && s->p[s->i] >= '0' && s->p[s->i] <= '9') s->i++;
  return s->i > from;
}

static int value(scan *s, int depth);

static int number(scan *s) {
  if (s->i < s->n && s->p[s->i] == '-') s->i++;
  if (s->i < s->n && s->p[s->i] == '0') s->i++;
  else if (!digits(s)) return -1;
  if (s->i < s->n && s->p[s->i] == '.' && (s->i++, !digits(s))) return -1;
  if (s->i < s->n && (s->p[s->i] == 'e' || s->p[s->i] == 'E')) {
    s->i++;
    if (s->i < s->n && (s->p[s->i] == '+' || s->p[s->i] == '-')) s->i++;
    if (!digits(s)) return -1;
  }
  return 0;
}

static int word(scan *s, const char *w) {
  size_t k = strlen(w);
  if (s->n - s->i < k || memcmp(s->p + s->i, w, k) != 0) return -1;
  s->i += k;
  return 0;
}

/* Any JSON value, checked and skipped; containers at most `depth` more levels deep. */
static int value(scan *s, int depth) {
  ws(s);
  if (s->i >= s->n) return -1;
  unsigned char c = s->p[s->i];
  if (c == '"') return string(s, NULL);
  if (c == 't') return word(s, "true");
  if (c == 'f') return word(s, "false");
  if (c == 'n') return word(s, "null");
  if (c != '{' && c != '[') return number(s);
  if (depth <= 0) return -1;
  s->i++;
  char close = c == '{' ? '}' : ']';
  if (at(s, close)) return 0;
  do {
    if (c == '{' && (string(s, NULL) != 0 || !at(s, ':'))) return -1;
    if (value(s, depth - 1) != 0) return -1;
  } while (at(s, ','));
  return at(s, close) ? 0 : -1;
}

/* The object at s: for each member whose decoded key is one of keys[0..nkeys), where its value starts
 * (the last one, as Python's json.loads keeps); -1 if not an object. */
static int members(scan *s, int depth, const char *const *keys, size_t nkeys, size_t *where) {
  if (!at(s, '{')) return -1;
  if (at(s, '}')) return 0;
  sbuf key = {0};
  int rc = -1;
  do {
    key.len = 0;
    if (string(s, &key) != 0 || !at(s, ':')) goto out;
    ws(s);
    for (size_t k = 0; k < nkeys; k++)
      if (key.len == strlen(keys[k]) && memcmp(key.buf, keys[k], key.len) == 0) where[k] = s->i + 1;
    if (value(s, depth - 1) != 0) goto out;
  } while (at(s, ','));
  rc = at(s, '}') ? 0 : -1;
out:
  free(key.buf);
  return rc;
}

/* An empty or falsy "tool_calls" ([] {} "" null false) is no tool call (reply_text: `or []`). */
static int empty_value(scan *s) {
  ws(s);
  size_t from = s->i;
  if (value(s, 1) != 0) return 0;
  size_t k = s->i - from;
  const char *v = (const char *)s->p + from;
  for (const char *e = "[]\0{}\0\"\"\0null\0false\0"; *e; e += strlen(e) + 1)
    if (k == strlen(e) && memcmp(v, e, k) == 0) return 1;
  scan t = {s->p, from + 1, s->n}; /* [ ] and { } with whitespace inside */
  return (*v == '[' && at(&t, ']')) || (*v == '{' && at(&t, '}'));
}

/* The parts of a "content" list: each object whose "type" is "text" adds its "text" string. */
static int parts(scan *s, int depth, sbuf *text) {
  static const char *const keys[] = {"type", "text"};
  if (!at(s, '[')) return -1;
  if (at(s, ']')) return 0;
  do {
    size_t where[2] = {0, 0};
    if (members(s, depth - 1, keys, 2, where) != 0) return -1; /* a part that is not an object: the host decides */
    if (!where[0]) continue;
    sbuf type = {0};
    scan t = {s->p, where[0] - 1, s->n};
    int is_text = string(&t, &type) == 0 && type.len == 4 && memcmp(type.buf, "text", 4) == 0;
    free(type.buf);
    if (!is_text || !where[1]) continue;
    t.i = where[1] - 1;
    if (string(&t, text) != 0) return -1; /* a "text" that is not a string: the host decides */
  } while (at(s, ','));
  return at(s, ']') ? 0 : -1;
}

int reply_text(const char *reply, size_t len, int max_depth, sbuf *text) {
  static const char *const keys[] = {"content", "tool_calls"};
  scan s = {(const unsigned char *)reply, 0, len};
  size_t where[2] = {0, 0};
  if (members(&s, max_depth, keys, 2, where) != 0) return -1;
  ws(&s);
  if (s.i != s.n) return -1; /* more after the object: not JSON */
  if (where[1]) {
    scan t = {s.p, where[1] - 1, s.n};
    if (!empty_value(&t)) return -1; /* a tool call: rendered on the host (reply_text) */
  }
  if (!where[0]) return 0; /* no content: the answer is "" */
  size_t mark = text->len;
  scan t = {s.p, where[0] - 1, s.n};
  ws(&t);
  int rc = t.i < t.n && t.p[t.i] == '"' ? string(&t, text) : parts(&t, max_depth - 1, text);
  if (rc != 0 && text->buf) text->buf[text->len = mark] = 0;
  return rc;
}
