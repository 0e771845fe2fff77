#ifndef EDGEFARM_REPLY_H_
#define EDGEFARM_REPLY_H_
/* The answer text of the runtime's JSON reply, as android_runner/conversation.py reply_text reads it. */
#include <stddef.h>

#include "text.h"

/* A plain text reply (a JSON object whose "content" is a string or a list of parts, the "text" parts'
 * strings joined; no "tool_calls"): 0, its answer's bytes appended to *text with JSON escapes decoded
 * (a lone \uD800-\uDFFF escape as its 3 bytes, which are invalid UTF-8) and raw bytes kept as they
 * are (invalid UTF-8 included: the caller replaces it). Any other shape, or JSON this strict reader
 * does not take (nesting past max_depth, a raw control character in a string, NaN...): -1, *text
 * left as it was; the caller passes such a reply on whole for the host to read. */
int reply_text(const char *reply, size_t len, int max_depth, sbuf *text);
#endif
