/* --fidelity on a phone (fidelity.h): the record's fields are android_runner/contract.py FidelityScores. */
#define _GNU_SOURCE
#include "fidelity.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* `what`, then the runtime's last error when it has one: the reason a part could not be done. */
static void reason(sbuf *why, const char *what) {
  const char *msg = api.litert_lm_get_last_error_message();
  sb_str(why, what);
  if (msg && *msg) sb_str(why, ": "), sb_str(why, msg);
}

static void missing(sbuf *why, const char *name) {
  sb_str(why, "the runtime library has no ");
  sb_str(why, name);
}

/* ,"answer_ids":[...],"answer_tokens":N  or the reason in *why. */
static void tokenize_answer(sbuf *out, sbuf *why, LiteRtLmEngine *engine, const char *answer, size_t len) {
  if (api_missing(EF_TOKENIZER)) return missing(why, api_missing(EF_TOKENIZER));
  if (!answer) return sb_str(why, "the reply is not plain text (a tool call): not tokenized");
  char *text = xmalloc(len + 1); /* the answer as one C string: its bytes up to a NUL */
  memcpy(text, answer, len);
  text[len] = 0;
  LiteRtLmTokenizeResult *r = len ? api.litert_lm_engine_tokenize(engine, text) : NULL;
  free(text);
  if (len && !r) return reason(why, "the runtime could not tokenize the answer");
  size_t n = r ? api.litert_lm_tokenize_result_get_num_tokens(r) : 0;
  const int *ids = r ? api.litert_lm_tokenize_result_get_tokens(r) : NULL;
  if (n && !ids) n = 0;
  sb_str(out, ",\"answer_ids\":[");
  for (size_t i = 0; i < n && i < FIDELITY_MAX_TOKENS; i++) sb_printf(out, "%s%d", i ? "," : "", ids[i]);
  sb_printf(out, "],\"answer_tokens\":%zu", n);
  if (r) api.litert_lm_tokenize_result_delete(r);
}

/* ,"logp":[...],"target_tokens":N  or the reason in *why: a fresh session, the prefill (none: the target is
 * scored from the session's start; the runtime refuses an empty prefill), the scoring. */
static void score_reference(sbuf *out, sbuf *why, LiteRtLmEngine *engine, const sample *s) {
  if (api_missing(EF_SCORING)) return missing(why, api_missing(EF_SCORING));
  LiteRtLmSessionConfig *config = api.litert_lm_session_config_create();
  LiteRtLmSession *session = config ? api.litert_lm_engine_create_session(engine, config) : NULL;
  if (config) api.litert_lm_session_config_delete(config);
  if (!session) return reason(why, "the scoring session could not be created");
  LiteRtLmInputData **inputs = xmalloc(s->prefills * sizeof *inputs);
  size_t made = 0;
  for (; made < s->prefills; made++) {
    inputs[made] = api.litert_lm_input_data_create(kLiteRtLmInputDataTypeText, s->prefill[made], strlen(s->prefill[made]));
    if (!inputs[made]) break;
  }
  LiteRtLmResponses *r = NULL;
  if (made < s->prefills) reason(why, "the prompt's input could not be created");
  else if (made && api.litert_lm_session_run_prefill(session, (const LiteRtLmInputData *const *)inputs, made) != 0)
    reason(why, "the scoring session's prefill failed");
  else {
    const char *target[1] = {s->score_target};
    r = api.litert_lm_session_run_text_scoring(session, target, 1, true);
    if (!r) reason(why, "run_text_scoring failed");
  }
  for (size_t i = 0; i < made; i++) api.litert_lm_input_data_delete(inputs[i]);
  free(inputs);
  if (r) {
    int n = api.litert_lm_responses_get_num_candidates(r) > 0 && api.litert_lm_responses_has_token_scores_at(r, 0)
                ? api.litert_lm_responses_get_num_token_scores_at(r, 0) : -1;
    const float *scores = n > 0 ? api.litert_lm_responses_get_token_scores_at(r, 0) : NULL;
    if (n < 0 || (n > 0 && !scores)) {
      sb_str(why, "the runtime returned no per-token scores");
    } else {
      sb_str(out, ",\"logp\":[");
      double total = 0.0; /* every score, in order, in double: the Python runner adds them the same way */
      for (int i = 0; i < n; i++) {
        if (i < FIDELITY_MAX_TOKENS) sb_printf(out, "%s%.17g", i ? "," : "", (double)scores[i]); /* exact: the value Python reads */
        total += (double)scores[i];
      }
      sb_str(out, "]");
      if (isfinite(total)) sb_printf(out, ",\"logp_sum\":%.17g", total); /* exact, as each score */
      else sb_str(out, ",\"logp_sum\":null");
      int tokens = api.litert_lm_responses_has_token_length_at(r, 0) ? api.litert_lm_responses_get_token_length_at(r, 0) : n;
      sb_printf(out, ",\"target_tokens\":%d", tokens);
    }
    api.litert_lm_responses_delete(r);
  }
  api.litert_lm_session_delete(session);
}

void fidelity_record(sbuf *line, LiteRtLmEngine *engine, const sample *s, const char *answer, size_t len) {
  double t0 = now_ms();
  sbuf out = {0}, untokenized = {0}, unscored = {0};
  tokenize_answer(&out, &untokenized, engine, answer, len);
  if (s->score_target) score_reference(&out, &unscored, engine, s);
  else sb_str(&unscored, s->score_skip ? s->score_skip : "nothing to score");
  sb_str(line, ",\"fidelity\":{\"unscored\":");
  sb_json_string(line, unscored.buf ? unscored.buf : "");
  sb_str(line, ",\"untokenized\":");
  sb_json_string(line, untokenized.buf ? untokenized.buf : "");
  if (out.buf) sb_add(line, out.buf, out.len);
  sb_number(line, "score_ms", now_ms() - t0);
  sb_str(line, "}");
  free(out.buf);
  free(untokenized.buf);
  free(unscored.buf);
}
