/* `edgefarm bench` in the native runner (bench.h; the Python runner's android_runner/bench.py does the
 * same steps through the Python package). State in one struct; every allocation checked (xmalloc). */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "text.h"

/* A fixed English passage the prompts are cut from (the same as android_runner/bench.py's FILLER). */
static const char FILLER[] =
    "The farm measures each device on the same shapes so that a phone, a board and this host can be "
    "compared with one another and with published figures. A prompt of a known length is read, the "
    "cache holds a known depth of context, and a known number of tokens is generated after it. ";
#define ROUND_TRIP_TRIES 16

/* The process's bench engine (a fresh one per repetition) and the texts, kept across engines (the same
 * model: the same tokenizer). */
static struct {
  LiteRtLmEngine *engine;
  int loads, first_extra;
  int *unit, *pool;
  size_t unit_n, pool_n;
  long text_count[4];
  int next_slot;
  char *text[4]; /* the last few texts made, by token count (a cell's depth and prompt) */
} st;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static void say(char *why, size_t why_n, const char *what) {
  const char *msg = api.litert_lm_get_last_error_message();
  snprintf(why, why_n, "%s%s%s", what, msg && *msg ? ": " : "", msg && *msg ? msg : "");
}

/* Token count of a text, or -1. */
static long count_tokens(const char *text) {
  LiteRtLmTokenizeResult *r = api.litert_lm_engine_tokenize(st.engine, text);
  if (!r) return -1;
  long n = (long)api.litert_lm_tokenize_result_get_num_tokens(r);
  api.litert_lm_tokenize_result_delete(r);
  return n;
}

/* The text of the pool's first k tokens (xmalloc'ed), or NULL. */
static char *detokenize_prefix(size_t k) {
  LiteRtLmDetokenizeResult *r = api.litert_lm_engine_detokenize(st.engine, st.pool, k);
  if (!r) return NULL;
  const char *s = api.litert_lm_detokenize_result_get_string(r);
  size_t len = s ? strlen(s) : 0;
  char *out = xmalloc(len + 1);
  memcpy(out, s ? s : "", len + 1);
  api.litert_lm_detokenize_result_delete(r);
  return out;
}

/* A text the tokenizer reads as exactly `count` tokens (owned by st.text), or NULL with why[]. */
static const char *exact_text(long count, char *why, size_t why_n) {
  for (int i = 0; i < 4; i++)
    if (st.text[i] && st.text_count[i] == count) return st.text[i];
  while (st.pool_n < (size_t)count + 64) {
    st.pool = xrealloc(st.pool, (st.pool_n + st.unit_n) * sizeof *st.pool);
    memcpy(st.pool + st.pool_n, st.unit, st.unit_n * sizeof *st.unit);
    st.pool_n += st.unit_n;
  }
  long k = count;
  for (int t = 0; t < ROUND_TRIP_TRIES && k >= 1 && (size_t)k <= st.pool_n; t++) {
    char *text = detokenize_prefix((size_t)k);
    if (!text) break;
    long got = count_tokens(text);
    if (got == count) {
      int slot = st.next_slot;
      st.next_slot = (st.next_slot + 1) % 4;
      free(st.text[slot]);
      st.text[slot] = text, st.text_count[slot] = count;
      return text;
    }
    free(text);
    if (got < 0) break;
    k += count - got;
  }
  snprintf(why, why_n, "no text of exactly %ld tokens found in %d tries (the tokenizer merges tokens across the cut)",
           count, ROUND_TRIP_TRIES);
  return NULL;
}

static char *copy_of(const char *text) {
  if (!text) return NULL;
  size_t n = strlen(text);
  char *out = xmalloc(n + 1);
  memcpy(out, text, n + 1);
  return out;
}

static void forget_engine(void) {
  if (st.engine) api.litert_lm_engine_delete(st.engine);
  st.engine = NULL;
}

/* The engine's thread pool as android_runner/threads.py counts it: the threads new across its creation
 * that are still alive after its work, plus the calling thread. Thread ids from /proc/self/task. */
#define MAX_TIDS 1024
typedef struct {
  int n; /* -1: not listed */
  long tid[MAX_TIDS];
} tids;
static tids pool_before, pool_created;

static void list_tids(tids *t) {
  t->n = -1;
  DIR *d = opendir("/proc/self/task");
  if (!d) return;
  t->n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && t->n < MAX_TIDS)
    if (e->d_name[0] != '.') t->tid[t->n++] = strtol(e->d_name, NULL, 10);
  closedir(d);
}

static int has_tid(const tids *t, long tid) {
  for (int i = 0; i < t->n; i++)
    if (t->tid[i] == tid) return 1;
  return 0;
}

long bench_threads_ran(void) {
  static tids alive;
  list_tids(&alive);
  if (pool_before.n < 0 || pool_created.n < 0 || alive.n < 0) return -1;
  long n = 1;
  for (int i = 0; i < pool_created.n; i++)
    if (!has_tid(&pool_before, pool_created.tid[i]) && has_tid(&alive, pool_created.tid[i])) n++;
  return n;
}

void *bench_engine_for(const char *model, const bench_cell *cell, const char *cache_dir, long max_num_tokens,
                       double *init_ms, int *load_no, char *why, size_t why_n) {
  forget_engine();
  double t0 = now_ms();
  LiteRtLmEngineSettings *settings = api.litert_lm_engine_settings_create(model, cell->backend, NULL, NULL);
  if (!settings) {
    say(why, why_n, "engine settings could not be created");
    return NULL;
  }
  api.litert_lm_engine_settings_enable_benchmark(settings);
  api.litert_lm_engine_settings_set_cache_dir(settings, cache_dir);
  if (cell->threads > 0 && strcmp(cell->backend, "cpu") == 0) api.litert_lm_engine_settings_set_num_threads(settings, (int)cell->threads);
  if (max_num_tokens > 0) api.litert_lm_engine_settings_set_max_num_tokens(settings, (int)max_num_tokens);
  if (cell->n_gen > 0) api.litert_lm_engine_settings_set_num_decode_tokens(settings, (int)cell->n_gen);
  int cpu = strcmp(cell->backend, "cpu") == 0;
  pool_before.n = pool_created.n = -1;
  if (cpu) list_tids(&pool_before);
  st.engine = api.litert_lm_engine_create(settings);
  if (cpu) list_tids(&pool_created);
  if (!st.engine) say(why, why_n, "the engine could not be created from the model");
  api.litert_lm_engine_settings_delete(settings);
  if (!st.engine) return NULL;
  *init_ms = now_ms() - t0;
  *load_no = ++st.loads;
  /* the start token the runtime puts before a session's first prefill (read, not measured by a prefill,
   * which would warm the engine before its timed turns) */
  st.first_extra = 0;
  LiteRtLmTokenUnion *start = api.litert_lm_engine_get_start_token(st.engine);
  if (start) {
    const int *ids = NULL;
    size_t k = 0;
    if (api.litert_lm_token_union_get_type(start) == kLiteRtLmTokenUnionTypeIds) {
      if (api.litert_lm_token_union_get_ids(start, &ids, &k) == 0) st.first_extra = (int)k;
    } else {
      st.first_extra = 1;
    }
    api.litert_lm_token_union_delete(start);
  }
  if (st.unit) return st.engine; /* the texts' tokens: made with the process's first engine */
  LiteRtLmTokenizeResult *r = api.litert_lm_engine_tokenize(st.engine, FILLER);
  size_t n = r ? api.litert_lm_tokenize_result_get_num_tokens(r) : 0;
  if (n == 0) {
    if (r) api.litert_lm_tokenize_result_delete(r);
    snprintf(why, why_n, "the model's tokenizer gives no tokens for English text");
    forget_engine();
    return NULL;
  }
  st.unit = xmalloc(n * sizeof *st.unit);
  memcpy(st.unit, api.litert_lm_tokenize_result_get_tokens(r), n * sizeof *st.unit);
  st.unit_n = n;
  api.litert_lm_tokenize_result_delete(r);
  return st.engine;
}

/* Prefill one text; the runtime's last prefill turn's count and speed into *n, *tps. 0 or -1. */
static int prefill(LiteRtLmSession *s, const char *text, int *n, double *tps) {
  LiteRtLmInputData *in = api.litert_lm_input_data_create(kLiteRtLmInputDataTypeText, text, strlen(text));
  if (!in) return -1;
  const LiteRtLmInputData *inputs[1] = {in};
  int rc = api.litert_lm_session_run_prefill(s, inputs, 1);
  api.litert_lm_input_data_delete(in);
  if (rc != 0) return -1;
  LiteRtLmBenchmarkInfo *info = api.litert_lm_session_get_benchmark_info(s);
  if (!info) return -1;
  int turns = api.litert_lm_benchmark_info_get_num_prefill_turns(info);
  *n = turns > 0 ? api.litert_lm_benchmark_info_get_prefill_token_count_at(info, turns - 1) : 0;
  *tps = turns > 0 ? api.litert_lm_benchmark_info_get_prefill_tokens_per_sec_at(info, turns - 1) : 0.0;
  api.litert_lm_benchmark_info_delete(info);
  return 0;
}

static void check(const char *step, long asked, int got, char *why, size_t why_n) {
  if (asked == got) return;
  size_t used = strlen(why);
  snprintf(why + used, why_n - used, "%s%s: the runtime processed %d tokens, %ld were asked", used ? "; " : "",
           step, got, asked);
}

int bench_run(void *engine, const bench_cell *cell, bench_figures *out, char *why, size_t why_n) {
  memset(out, 0, sizeof *out);
  out->depth_tokens = out->prefill_tokens = out->decode_tokens = -1;
  why[0] = 0;
  if (engine != st.engine) {
    snprintf(why, why_n, "bench_run: not the current engine");
    return -1;
  }
  char *depth_text = NULL, *prompt = NULL; /* copies: exact_text's slots may be reused */
  if (cell->n_depth > 0 && !(depth_text = copy_of(exact_text(cell->n_depth - st.first_extra, why, why_n)))) return -1;
  if (!(prompt = copy_of(exact_text(cell->n_prompt - (cell->n_depth ? 0 : st.first_extra), why, why_n)))) {
    free(depth_text);
    return -1;
  }
  LiteRtLmSessionConfig *config = api.litert_lm_session_config_create();
  LiteRtLmSession *s = NULL;
  if (config) {
    api.litert_lm_session_config_set_apply_prompt_template(config, false);
    s = api.litert_lm_engine_create_session(st.engine, config);
    api.litert_lm_session_config_delete(config);
  }
  if (!s) {
    say(why, why_n, "the session could not be created");
    free(prompt), free(depth_text);
    return -1;
  }
  int rc = 0;
  if (cell->n_depth > 0) {
    double t0 = now_ms();
    if (prefill(s, depth_text, &out->depth_tokens, &out->depth_tps) != 0) {
      say(why, why_n, "the depth fill's prefill failed");
      rc = -1;
    }
    out->depth_wall_ms = now_ms() - t0;
  }
  double t0 = now_ms();
  if (rc == 0 && prefill(s, prompt, &out->prefill_tokens, &out->prefill_tps) != 0) {
    say(why, why_n, "the prompt's prefill failed");
    rc = -1;
  }
  if (rc == 0 && cell->n_gen > 0) {
    LiteRtLmResponses *resp = api.litert_lm_session_run_decode(s);
    if (!resp) {
      say(why, why_n, "the decode failed");
      rc = -1;
    } else {
      api.litert_lm_responses_delete(resp);
      LiteRtLmBenchmarkInfo *info = api.litert_lm_session_get_benchmark_info(s);
      if (info) {
        int turns = api.litert_lm_benchmark_info_get_num_decode_turns(info);
        out->decode_tokens = turns > 0 ? api.litert_lm_benchmark_info_get_decode_token_count_at(info, turns - 1) : 0;
        out->decode_tps = turns > 0 ? api.litert_lm_benchmark_info_get_decode_tokens_per_sec_at(info, turns - 1) : 0.0;
        api.litert_lm_benchmark_info_delete(info);
      }
    }
  }
  out->timed_wall_ms = now_ms() - t0;
  api.litert_lm_session_delete(s);
  free(prompt), free(depth_text);
  if (rc != 0) return -1;
  if (cell->n_depth > 0) check("depth fill", cell->n_depth, out->depth_tokens, why, why_n);
  check("prefill", cell->n_prompt, out->prefill_tokens, why, why_n);
  if (cell->n_gen > 0) check("decode", cell->n_gen, out->decode_tokens, why, why_n);
  return why[0] ? -1 : 0;
}

void bench_close(void) {
  forget_engine();
  free(st.unit), free(st.pool);
  st.unit = st.pool = NULL;
  st.unit_n = st.pool_n = 0;
  for (int i = 0; i < 4; i++) free(st.text[i]), st.text[i] = NULL;
}
