/* A stand-in liblitert-lm.so for the native runner's unit tests: the functions the runner uses, compiled
 * against the same declarations as the runner (android_runner/native/litert_lm_c_api.h), with behaviour picked by words
 * in the message JSON, so each test drives one path:
 *   @deep=N      the reply is a tool call nested N levels deep (issue 24)
 *   @big=N       an answer of N bytes ('a's)
 *   @pad=N,PRE,POST  an answer of the bytes PRE (hex), N 'a's, the bytes POST (hex), raw in the reply
 *   @raw=HEX     the whole reply is these bytes (hex)
 *   @badutf8     an answer with invalid UTF-8 (a lone 0xff, a cut 3-byte sequence, a surrogate)
 *   @ctrl        an answer with control characters (0x01, 0x1b, 0x7f)
 *   @slow=S      the send takes S seconds
 *   @refuse      the send fails, with an error message
 * The streaming send (`edgefarm serve`) answers the same, from a thread of its own: a plain text answer in
 * pieces of @piece=N bytes (4 without), each a text reply of its own, @drip=S seconds apart; any other reply
 * as one piece; then a final chunk, whose error is the cancel's when cancel_process came first.
 *   otherwise    {"role":"assistant","content":[{"type":"text","text":"fake answer"}]}
 * Sessions (--fidelity): a token is a space-separated word, its id the word's FNV-1a hash mod 50000;
 * run_text_scoring gives each word of the target -(1 + hash(word) % 997 / 100) - hash(prefill) % 7 / 10,
 * so the same target from another prompt scores otherwise; a target holding "@noscore" fails.
 * Bench (bench.c): detokenize writes each id as a word "t<id>", so a text re-tokenizes to as many
 * tokens as it had ids; a session counts the tokens it is given and decodes exactly the engine's
 * num_decode_tokens (one short with "shortdecode" in the model path: a count the runner must catch).
 * Engine creation fails when the model path contains "unloadable". A CPU engine starts a thread pool as
 * the runtime's does (android_runner/threads.py): num_threads - 1 workers (4 - 1 when none is set), kept
 * until the engine is deleted. Not a model: no figure is real. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "litert_lm_c_api.h"

#define FAKE_MAX_POOL 64
struct LiteRtLmEngine { int decode_tokens, short_decode, workers, stop[2]; pthread_t pool[FAKE_MAX_POOL]; };
struct LiteRtLmEngineSettings { int bad, decode_tokens, short_decode, threads, cpu; };
struct LiteRtLmSamplerParams { int x; };
struct LiteRtLmSessionConfig { int x; };
struct LiteRtLmConversationConfig { int x; };
struct LiteRtLmConversation { int turns, cancelled, streaming; pthread_t streamer; };
struct LiteRtLmStreamChunk { const char *text; bool final; const char *error; };
struct LiteRtLmJsonResponse { char *text; };
struct LiteRtLmBenchmarkInfo { int turns, prefill_n, decode_n; }; /* counts 0: the fixed 3 and 2 */
struct LiteRtLmSession { unsigned prefill; int prefill_n, decode_n, prefills, decodes, decode_tokens; };
struct LiteRtLmInputData { unsigned hash; int words; };
struct LiteRtLmResponses { int n; float *scores; };
struct LiteRtLmTokenizeResult { size_t n; int *ids; };
struct LiteRtLmDetokenizeResult { char *text; };

static __thread const char *last_error = "";

static void *pool_worker(void *fd) { /* returns when the engine closes the pool's pipe */
  char c;
  while (read((int)(intptr_t)fd, &c, 1) > 0) {
  }
  return NULL;
}
#define EXPORT __attribute__((visibility("default")))

EXPORT const char *litert_lm_get_last_error_message(void) { return last_error; }
EXPORT void litert_lm_set_min_log_level(LiteRtLmLogSeverity level) { (void)level; }
EXPORT LiteRtLmEngineSettings *litert_lm_engine_settings_create(const char *model, const char *b, const char *v, const char *a) {
  (void)v, (void)a;
  LiteRtLmEngineSettings *s = calloc(1, sizeof *s);
  if (s) s->bad = strstr(model, "unloadable") != NULL, s->short_decode = strstr(model, "shortdecode") != NULL;
  if (s) s->threads = 4, s->cpu = strcmp(b, "cpu") == 0; /* the runtime's CpuConfig default */
  return s;
}
EXPORT void litert_lm_engine_settings_delete(LiteRtLmEngineSettings *s) { free(s); }
EXPORT void litert_lm_engine_settings_enable_benchmark(LiteRtLmEngineSettings *s) { (void)s; }
EXPORT void litert_lm_engine_settings_set_cache_dir(LiteRtLmEngineSettings *s, const char *d) { (void)s, (void)d; }
EXPORT void litert_lm_engine_settings_set_num_threads(LiteRtLmEngineSettings *s, int n) { s->threads = n; }
EXPORT void litert_lm_engine_settings_set_max_num_tokens(LiteRtLmEngineSettings *s, int n) { (void)s, (void)n; }
EXPORT LiteRtLmEngine *litert_lm_engine_create(const LiteRtLmEngineSettings *s) {
  if (s->bad) {
    last_error = "INVALID_ARGUMENT: fake: not a model";
    return NULL;
  }
  LiteRtLmEngine *e = calloc(1, sizeof(LiteRtLmEngine));
  if (!e) return NULL;
  e->decode_tokens = s->decode_tokens, e->short_decode = s->short_decode;
  if (s->cpu && pipe(e->stop) == 0) /* the pool's workers wait for the engine's deletion */
    for (int i = 0; i < s->threads - 1 && i < FAKE_MAX_POOL; i++)
      if (pthread_create(&e->pool[i], NULL, pool_worker, (void *)(intptr_t)e->stop[0]) == 0) e->workers++;
  return e;
}
EXPORT void litert_lm_engine_delete(LiteRtLmEngine *e) {
  if (!e) return;
  if (e->stop[1] > 0) {
    close(e->stop[1]);
    for (int i = 0; i < e->workers; i++) pthread_join(e->pool[i], NULL);
    close(e->stop[0]);
  }
  free(e);
}
EXPORT LiteRtLmSamplerParams *litert_lm_sampler_params_create(LiteRtLmSamplerType t) {
  return t == kLiteRtLmSamplerTypeTopP ? calloc(1, sizeof(LiteRtLmSamplerParams)) : NULL;
}
EXPORT void litert_lm_sampler_params_delete(LiteRtLmSamplerParams *p) { free(p); }
EXPORT void litert_lm_sampler_params_set_top_k(LiteRtLmSamplerParams *p, int32_t v) { (void)p, (void)v; }
EXPORT void litert_lm_sampler_params_set_top_p(LiteRtLmSamplerParams *p, float v) { (void)p, (void)v; }
EXPORT void litert_lm_sampler_params_set_temperature(LiteRtLmSamplerParams *p, float v) { (void)p, (void)v; }
EXPORT void litert_lm_sampler_params_set_seed(LiteRtLmSamplerParams *p, int32_t v) { (void)p, (void)v; }
EXPORT LiteRtLmSessionConfig *litert_lm_session_config_create() { return calloc(1, sizeof(LiteRtLmSessionConfig)); }
EXPORT void litert_lm_session_config_delete(LiteRtLmSessionConfig *c) { free(c); }
EXPORT void litert_lm_session_config_set_max_output_tokens(LiteRtLmSessionConfig *c, int n) { (void)c, (void)n; }
EXPORT void litert_lm_session_config_set_sampler_params(LiteRtLmSessionConfig *c, const LiteRtLmSamplerParams *p) { (void)c, (void)p; }
EXPORT LiteRtLmConversationConfig *litert_lm_conversation_config_create() { return calloc(1, sizeof(LiteRtLmConversationConfig)); }
EXPORT void litert_lm_conversation_config_delete(LiteRtLmConversationConfig *c) { free(c); }
EXPORT void litert_lm_conversation_config_set_session_config(LiteRtLmConversationConfig *c, const LiteRtLmSessionConfig *s) { (void)c, (void)s; }
EXPORT void litert_lm_conversation_config_set_system_message(LiteRtLmConversationConfig *c, const char *m) { (void)c, (void)m; }
EXPORT void litert_lm_conversation_config_set_tools(LiteRtLmConversationConfig *c, const char *t) { (void)c, (void)t; }
EXPORT void litert_lm_conversation_config_set_messages(LiteRtLmConversationConfig *c, const char *m) { (void)c, (void)m; }
EXPORT LiteRtLmConversation *litert_lm_conversation_create(LiteRtLmEngine *e, LiteRtLmConversationConfig *c) {
  (void)e, (void)c;
  return calloc(1, sizeof(LiteRtLmConversation));
}
EXPORT void litert_lm_conversation_delete(LiteRtLmConversation *c) {
  if (c && c->streaming) pthread_join(c->streamer, NULL);
  free(c);
}

/* Hex digits at `hex` (up to the first other character) -> bytes at out; how many. */
static size_t unhex(const char *hex, char *out) {
  size_t k = 0;
  for (; hex[0] && hex[1] && strchr("0123456789abcdef", hex[0]) && strchr("0123456789abcdef", hex[1]); hex += 2) {
    char pair[3] = {hex[0], hex[1], 0};
    out[k++] = (char)strtoul(pair, NULL, 16);
  }
  return k;
}

static char *text_reply(const char *answer, size_t n) {
  const char *head = "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"", *tail = "\"}]}";
  char *out = malloc(strlen(head) + n + strlen(tail) + 1);
  if (!out) return NULL;
  strcpy(out, head);
  memcpy(out + strlen(head), answer, n);
  strcpy(out + strlen(head) + n, tail);
  return out;
}

EXPORT LiteRtLmJsonResponse *litert_lm_conversation_send_message(LiteRtLmConversation *c, const char *msg,
                                                                  const char *extra, const LiteRtLmConversationOptionalArgs *args) {
  (void)extra, (void)args;
  c->turns++;
  const char *w;
  char *text = NULL;
  if ((w = strstr(msg, "@slow="))) {
    double s = atof(w + 6);
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
  }
  if (strstr(msg, "@refuse")) {
    last_error = "INVALID_ARGUMENT: fake: Input token ids are too long";
    return NULL;
  }
  if ((w = strstr(msg, "@deep="))) {
    long n = atol(w + 6);
    size_t cap = (size_t)n * 16 + 256;
    text = malloc(cap);
    if (!text) return NULL;
    size_t k = (size_t)sprintf(text, "{\"role\":\"assistant\",\"content\":[],\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":");
    for (long i = 0; i < n; i++) text[k++] = '[';
    for (long i = 0; i < n; i++) text[k++] = ']';
    strcpy(text + k, "}}]}");
  } else if ((w = strstr(msg, "@pad="))) {
    char *end;
    size_t n = (size_t)strtoul(w + 5, &end, 10), pre = 0, post = 0;
    const char *pre_hex = end + 1, *post_hex = pre_hex + strspn(pre_hex, "0123456789abcdef") + 1;
    char *a = malloc(n + strlen(pre_hex) + 1);
    if (!a) return NULL;
    pre = unhex(pre_hex, a);
    memset(a + pre, 'a', n);
    post = unhex(post_hex, a + pre + n);
    text = text_reply(a, pre + n + post);
    free(a);
  } else if ((w = strstr(msg, "@raw="))) {
    text = malloc(strlen(w) + 1);
    if (!text) return NULL;
    text[unhex(w + 5, text)] = 0;
  } else if ((w = strstr(msg, "@big="))) {
    size_t n = (size_t)atol(w + 5);
    char *a = malloc(n + 1);
    if (!a) return NULL;
    memset(a, 'a', n);
    text = text_reply(a, n);
    free(a);
  } else if (strstr(msg, "@badutf8")) {
    static const char bad[] = "ok \xff then \xe2\x82 cut, \xed\xa0\x80 surrogate, \xc3\xa9 fine";
    text = text_reply(bad, sizeof bad - 1);
  } else if (strstr(msg, "@ctrl")) {
    static const char ctl[] = "bell\x01 esc\x1b del\x7f";
    text = text_reply(ctl, sizeof ctl - 1);
  } else {
    text = text_reply("fake answer", 11);
  }
  if (!text) return NULL;
  LiteRtLmJsonResponse *r = malloc(sizeof *r);
  if (!r) {
    free(text);
    return NULL;
  }
  r->text = text;
  return r;
}
EXPORT const char *litert_lm_json_response_get_string(const LiteRtLmJsonResponse *r) { return r ? r->text : NULL; }
EXPORT void litert_lm_json_response_delete(LiteRtLmJsonResponse *r) {
  if (r) free(r->text);
  free(r);
}
EXPORT LiteRtLmBenchmarkInfo *litert_lm_conversation_get_benchmark_info(LiteRtLmConversation *c) {
  LiteRtLmBenchmarkInfo *b = calloc(1, sizeof *b);
  if (b) b->turns = c->turns;
  return b;
}
EXPORT void litert_lm_benchmark_info_delete(LiteRtLmBenchmarkInfo *b) { free(b); }
EXPORT double litert_lm_benchmark_info_get_time_to_first_token(const LiteRtLmBenchmarkInfo *b) { (void)b; return 0.001; }
EXPORT int litert_lm_benchmark_info_get_num_prefill_turns(const LiteRtLmBenchmarkInfo *b) { return b->turns; }
EXPORT int litert_lm_benchmark_info_get_num_decode_turns(const LiteRtLmBenchmarkInfo *b) { return b->turns; }
EXPORT int litert_lm_benchmark_info_get_prefill_token_count_at(const LiteRtLmBenchmarkInfo *b, int i) { return i >= 0 ? (b->prefill_n ? b->prefill_n : 3) : -1; }
EXPORT int litert_lm_benchmark_info_get_decode_token_count_at(const LiteRtLmBenchmarkInfo *b, int i) { return i >= 0 ? (b->decode_n ? b->decode_n : 2) : -1; }
EXPORT double litert_lm_benchmark_info_get_prefill_tokens_per_sec_at(const LiteRtLmBenchmarkInfo *b, int i) { (void)b, (void)i; return 100.0; }
EXPORT double litert_lm_benchmark_info_get_decode_tokens_per_sec_at(const LiteRtLmBenchmarkInfo *b, int i) { (void)b, (void)i; return 50.0; }

/* ---------------------------------------------------------------- sessions, scoring, tokenizer */
static unsigned fnv(const char *p, size_t n) {
  unsigned h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 16777619u;
  return h;
}

/* The words of text: calls each(word, length, arg) in order; how many. */
static size_t words(const char *text, void (*each)(const char *, size_t, void *), void *arg) {
  size_t n = 0;
  for (const char *p = text; *p;) {
    while (*p == ' ') p++;
    const char *w = p;
    while (*p && *p != ' ') p++;
    if (p > w) {
      if (each) each(w, (size_t)(p - w), arg);
      n++;
    }
  }
  return n;
}

EXPORT LiteRtLmSession *litert_lm_engine_create_session(LiteRtLmEngine *e, LiteRtLmSessionConfig *c) {
  (void)c;
  LiteRtLmSession *s = calloc(1, sizeof(LiteRtLmSession));
  if (s) s->decode_tokens = e->decode_tokens - e->short_decode;
  return s;
}
EXPORT void litert_lm_session_delete(LiteRtLmSession *s) { free(s); }
EXPORT LiteRtLmInputData *litert_lm_input_data_create(LiteRtLmInputDataType type, const void *data, size_t size) {
  LiteRtLmInputData *d = type == kLiteRtLmInputDataTypeText ? calloc(1, sizeof *d) : NULL;
  char *text = d ? calloc(size + 1, 1) : NULL;
  if (text) {
    memcpy(text, data, size);
    d->hash = fnv(data, size), d->words = (int)words(text, NULL, NULL);
  }
  free(text);
  return d;
}
EXPORT void litert_lm_input_data_delete(LiteRtLmInputData *d) { free(d); }
EXPORT int litert_lm_session_run_prefill(LiteRtLmSession *s, const LiteRtLmInputData *const *in, size_t n) {
  s->prefill_n = 0;
  for (size_t i = 0; i < n; i++) s->prefill = s->prefill * 31u + in[i]->hash, s->prefill_n += in[i]->words;
  s->prefills++;
  return n ? 0 : -1;
}

struct scoring { LiteRtLmResponses *r; unsigned prefill; };
static void score_word(const char *w, size_t n, void *arg) {
  struct scoring *sc = arg;
  sc->r->scores[sc->r->n++] = -(1.0f + (float)(fnv(w, n) % 997) / 100.0f) - (float)(sc->prefill % 7) / 10.0f;
}
EXPORT LiteRtLmResponses *litert_lm_session_run_text_scoring(LiteRtLmSession *s, const char **target, size_t num,
                                                             bool store_token_lengths) {
  (void)store_token_lengths;
  if (num != 1 || strstr(target[0], "@noscore")) {
    last_error = "INTERNAL: fake: scoring failed";
    return NULL;
  }
  LiteRtLmResponses *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->scores = calloc(words(target[0], NULL, NULL) + 1, sizeof(float));
  struct scoring sc = {r, s->prefill};
  words(target[0], score_word, &sc);
  return r;
}
EXPORT int litert_lm_responses_get_num_candidates(const LiteRtLmResponses *r) { (void)r; return 1; }
EXPORT float litert_lm_responses_get_score_at(const LiteRtLmResponses *r, int i) {
  float sum = 0;
  for (int k = 0; i == 0 && k < r->n; k++) sum += r->scores[k];
  return sum;
}
EXPORT bool litert_lm_responses_has_token_scores_at(const LiteRtLmResponses *r, int i) { (void)r; return i == 0; }
EXPORT int litert_lm_responses_get_num_token_scores_at(const LiteRtLmResponses *r, int i) { return i == 0 ? r->n : 0; }
EXPORT const float *litert_lm_responses_get_token_scores_at(const LiteRtLmResponses *r, int i) { return i == 0 ? r->scores : NULL; }
EXPORT bool litert_lm_responses_has_token_length_at(const LiteRtLmResponses *r, int i) { (void)r; return i == 0; }
EXPORT int litert_lm_responses_get_token_length_at(const LiteRtLmResponses *r, int i) { return i == 0 ? r->n : 0; }
EXPORT void litert_lm_responses_delete(LiteRtLmResponses *r) {
  if (r) free(r->scores);
  free(r);
}

static void id_word(const char *w, size_t n, void *arg) {
  LiteRtLmTokenizeResult *t = arg;
  t->ids[t->n++] = (int)(fnv(w, n) % 50000u);
}
EXPORT LiteRtLmTokenizeResult *litert_lm_engine_tokenize(LiteRtLmEngine *e, const char *text) {
  (void)e;
  LiteRtLmTokenizeResult *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->ids = calloc(words(text, NULL, NULL) + 1, sizeof(int));
  words(text, id_word, t);
  return t;
}
EXPORT const int *litert_lm_tokenize_result_get_tokens(const LiteRtLmTokenizeResult *t) { return t->ids; }
EXPORT size_t litert_lm_tokenize_result_get_num_tokens(const LiteRtLmTokenizeResult *t) { return t->n; }
EXPORT void litert_lm_tokenize_result_delete(LiteRtLmTokenizeResult *t) {
  if (t) free(t->ids);
  free(t);
}

/* ---------------------------------------------------------------- bench (bench.c) */
EXPORT void litert_lm_engine_settings_set_num_prefill_tokens(LiteRtLmEngineSettings *s, int n) { (void)s, (void)n; }
EXPORT void litert_lm_engine_settings_set_num_decode_tokens(LiteRtLmEngineSettings *s, int n) { s->decode_tokens = n; }
EXPORT void litert_lm_session_config_set_apply_prompt_template(LiteRtLmSessionConfig *c, bool v) { (void)c, (void)v; }
EXPORT LiteRtLmResponses *litert_lm_session_run_decode(LiteRtLmSession *s) {
  s->decode_n = s->decode_tokens ? s->decode_tokens : 1;
  s->decodes++;
  return calloc(1, sizeof(LiteRtLmResponses));
}
EXPORT LiteRtLmBenchmarkInfo *litert_lm_session_get_benchmark_info(LiteRtLmSession *s) {
  LiteRtLmBenchmarkInfo *b = calloc(1, sizeof *b);
  if (b) b->turns = s->prefills, b->prefill_n = s->prefill_n, b->decode_n = s->decodes ? s->decode_n : 0;
  return b;
}
EXPORT LiteRtLmDetokenizeResult *litert_lm_engine_detokenize(LiteRtLmEngine *e, const int *ids, size_t n) {
  (void)e;
  LiteRtLmDetokenizeResult *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->text = calloc(n * 12 + 1, 1);
  for (size_t i = 0, at = 0; r->text && i < n; i++) at += (size_t)sprintf(r->text + at, "%st%d", i ? " " : "", ids[i]);
  return r;
}
EXPORT const char *litert_lm_detokenize_result_get_string(const LiteRtLmDetokenizeResult *r) { return r->text; }
EXPORT void litert_lm_detokenize_result_delete(LiteRtLmDetokenizeResult *r) {
  if (r) free(r->text);
  free(r);
}
EXPORT LiteRtLmTokenUnion *litert_lm_engine_get_start_token(LiteRtLmEngine *e) { (void)e; return NULL; }
EXPORT LiteRtLmTokenUnionType litert_lm_token_union_get_type(const LiteRtLmTokenUnion *u) {
  (void)u;
  return kLiteRtLmTokenUnionTypeString;
}
EXPORT int litert_lm_token_union_get_ids(const LiteRtLmTokenUnion *u, const int **ids, size_t *n) {
  (void)u, (void)ids, (void)n;
  return -1;
}
EXPORT void litert_lm_token_union_delete(LiteRtLmTokenUnion *u) { (void)u; }

/* ------------------------------------------------------------------ the streaming send */
typedef struct {
  LiteRtLmConversation *c;
  char *reply;
  size_t piece;
  double drip;
  void (*callback)(void *, const LiteRtLmStreamChunk *);
  void *data;
} fake_stream;

static void *stream_pieces(void *arg) {
  fake_stream *f = arg;
  const char *head = "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"", *tail = "\"}]}";
  size_t hl = strlen(head), tl = strlen(tail), len = strlen(f->reply);
  int plain = len >= hl + tl && strncmp(f->reply, head, hl) == 0 && strcmp(f->reply + len - tl, tail) == 0;
  const char *answer = plain ? f->reply + hl : f->reply, *error = NULL;
  size_t n = plain ? len - hl - tl : len, piece = plain ? f->piece : len;
  for (size_t at = 0; at < n; at += piece) {
    if (__atomic_load_n(&f->c->cancelled, __ATOMIC_SEQ_CST)) {
      error = "CANCELLED: fake: task cancelled";
      break;
    }
    size_t k = n - at < piece ? n - at : piece;
    char *text = plain ? text_reply(answer + at, k) : strndup(answer, n);
    LiteRtLmStreamChunk chunk = {text, false, NULL};
    f->callback(f->data, &chunk);
    free(text);
    if (f->drip > 0) {
      struct timespec ts = {(time_t)f->drip, (long)((f->drip - (double)(time_t)f->drip) * 1e9)};
      nanosleep(&ts, NULL);
    }
  }
  LiteRtLmStreamChunk last = {NULL, true, error};
  f->callback(f->data, &last);
  free(f->reply);
  free(f);
  return NULL;
}

EXPORT int litert_lm_conversation_send_message_stream(LiteRtLmConversation *c, const char *msg, const char *extra,
                                                      const LiteRtLmConversationOptionalArgs *args,
                                                      void (*callback)(void *, const LiteRtLmStreamChunk *), void *data) {
  LiteRtLmJsonResponse *r = litert_lm_conversation_send_message(c, msg, extra, args); /* the same answer */
  if (!r) return 3;
  fake_stream *f = calloc(1, sizeof *f);
  if (!f) return 13;
  const char *w;
  f->c = c, f->reply = r->text, f->callback = callback, f->data = data;
  f->piece = (w = strstr(msg, "@piece=")) ? (size_t)atol(w + 7) : 4;
  f->drip = (w = strstr(msg, "@drip=")) ? atof(w + 6) : 0.0;
  if (!f->piece) f->piece = 1;
  free(r);
  c->streaming = pthread_create(&c->streamer, NULL, stream_pieces, f) == 0;
  return c->streaming ? 0 : 13;
}
EXPORT void litert_lm_conversation_cancel_process(LiteRtLmConversation *c) {
  __atomic_store_n(&c->cancelled, 1, __ATOMIC_SEQ_CST);
}
EXPORT const char *litert_lm_stream_chunk_get_text(const LiteRtLmStreamChunk *chunk) { return chunk->text; }
EXPORT bool litert_lm_stream_chunk_is_final(const LiteRtLmStreamChunk *chunk) { return chunk->final; }
EXPORT const char *litert_lm_stream_chunk_get_error(const LiteRtLmStreamChunk *chunk) { return chunk->error; }
