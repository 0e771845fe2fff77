#ifndef EDGEFARM_FIDELITY_H_
#define EDGEFARM_FIDELITY_H_
/* --fidelity on a phone: after a sample's answer, on the engine already loaded, tokenize the answer and
 * score the reference teacher-forced from the sample's prompt in a fresh session (the runtime's
 * run_text_scoring), as android_runner/fidelity.py does on boards (docs/fidelity.md). */
#include <stddef.h>

#include "job.h"
#include "litert_lm_c_api.h"
#include "text.h"

#define FIDELITY_MAX_TOKENS 256 /* android_runner/contract.py FIDELITY_MAX_TOKENS: ids / scores kept per row */

/* Append ,"fidelity":{...} for sample s whose answer text is answer[0..len) (NULL: the reply is not
 * plain text). Never fails the sample: what could not be done is the record's reason. */
void fidelity_record(sbuf *line, LiteRtLmEngine *engine, const sample *s, const char *answer, size_t len);
#endif
