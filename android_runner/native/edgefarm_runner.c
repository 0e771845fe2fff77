/*
 * edgefarm's native phone runner: ONE LiteRT-LM engine for a whole job, a fresh conversation per
 * sample, on LiteRT-LM's own C API (liblitert-lm.so, dlopen'ed). Every function pointer below has the
 * type litert_lm_c_api.h declares (the project's own declarations, checked against the pinned library's
 * exported symbols at every build and against upstream's c/engine.h wherever one is at hand: build.py).
 *
 *   edgefarm_runner --settings SETTINGS --job JOB.conv --results RESULTS.jsonl
 *                   [--hook DRIVER.sh] [--hook-timeout-s S] [--state-dir DIR] [--log-level N]
 *                   [--power-dir DIR]
 *   edgefarm_runner --settings SETTINGS --serve DIR --results RESULTS.jsonl --state-dir DIR ...
 *
 * `--serve DIR` (`edgefarm serve`): no job file; after the engine is loaded, requests come one by one as
 * job files DIR/<name>.job of one sample each (the oldest name first; complete once they parse), each
 * deleted when taken and run as a sample of a job, with its media folder media/<n>/ removed afterwards;
 * DIR/stop ends the loop (exit 0). The Python runner's side of the same folder is android_runner/inbox.py.
 * No hook runs per request (a request's latency is the answer's, not a shell's). A request the client
 * streams (the job's A record) is answered with the runtime's streaming call, each piece an
 * `EDGEFARM PIECE {"id":"<n>","text":...}` line as it comes; DIR/<n>.cancel (the host pushes it when the
 * client went away) stops that answer at once (stream.c). A request read whole keeps the run's own call.
 *
 * SETTINGS is the run's settings file (android_runner/settings.py renders it, the one channel of the
 * host's settings to every runner: "EFSETTINGS 1", then key=value lines, every key once): the library,
 * model, cache folder, backends, threads, token limit and sample timeout are read there (read_settings),
 * and READY says what the runtime was given ("settings"). The options above are the phone's own places.
 *
 * The host renders every sample into the job file (android_runner/conversation.py) as the exact
 * JSON the C API takes, so this program needs no JSON parser for its input. The runtime's reply (at
 * most REPLY_MAX_BYTES, else the sample's error row) is read by reply.c: a plain text reply's answer
 * is android_runner/answer_text.py's clean_answer of its text (invalid UTF-8 -> U+FFFD, counted;
 * then cut to OUTPUT_MAX_BYTES of UTF-8 on a character boundary, counted) passed on as
 * {"role":"assistant","content":[{"type":"text","text":ANSWER}]}; any other reply (a tool call...)
 * is passed on whole, invalid UTF-8 replaced, cut at OUTPUT_MAX_BYTES (the host then refuses it).
 * Per sample it appends ONE JSON line to RESULTS (one write(2), O_APPEND) keyed by the sample's
 * number `n`, and prints protocol lines on stdout, each ONE write(2):
 *   EDGEFARM READY {...}  EDGEFARM BEGIN n  EDGEFARM RESULT {...}  EDGEFARM NOTE text  EDGEFARM DONE {...}
 *   EDGEFARM FATAL {"error":..,"fix":..,"exit_code":..}   (every fatal error, in this one format)
 * A sample is finished (answer kept, figures taken, its line written) before anything else runs:
 * the `after` hook runs outside the sample's deadline, under its own (--hook-timeout-s).
 * At start the runtime library's sha256 and version (the VERSION file beside it) must be the ones
 * this runner was built for (the pinned wheel's RECORD); --allow-runtime runs another one and says
 * which on every row ("runtime_override").
 * Memory: per sample, /proc/self/clear_refs ("5") resets VmHWM where the kernel allows, and VmHWM at
 * the end is the sample's peak ("peak_method":"hwm_reset"); else the max of VmRSS read every
 * MEM_SAMPLE_MS ("sampled").
 * Power (--power-dir, e.g. /sys/class/power_supply/battery): current, voltage and status read at the
 * sample's start, each watchdog tick and its end; the RAW trapezoid integral of I*V, the first and
 * last readings, how often the current's value changed (the fuel gauge's updates) and when, and the
 * window's start ("power": units, sign, the gauge's lag and trust are decided on the host,
 * orchestrator/telemetry/energy.py).
 * Exit: 0 done, 2 usage or bad job file, 3 runtime library unusable or not the pinned one,
 * 65 model unloadable, 70 out of memory, 124 sample timeout (the driver restarts the runner).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api.h" /* the C API's one table; its declarations (litert_lm_c_api.h) checked by build.py */
#include "bench.h"
#include "fidelity.h"
#include "hook.h"
#include "io.h"
#include "job.h"
#include "memory.h"
#include "pin.h"
#include "power.h"
#include "reply.h"
#include "settings_gen.h" /* generated from android_runner/settings.py at build time (build.py) */
#include "stream.h"
#include "text.h"

#ifndef EF_PINNED_SHA256
#error "build with -DEF_PINNED_SHA256=\"<hex>\" (android_runner/native/build.py does)"
#endif
#ifndef EF_PINNED_VERSION
#error "build with -DEF_PINNED_VERSION=\"<version>\" (android_runner/native/build.py does)"
#endif

#define EXIT_USAGE 2
#define EXIT_RUNTIME 3
#define EXIT_MODEL_UNLOADABLE 65 /* android_runner/status.py MODEL_UNLOADABLE_EXIT */
#define EXIT_TIMEOUT 124         /* android_runner/status.py TIMEOUT_EXIT */
#define OUTPUT_MAX_BYTES (1L << 20) /* android_runner/contract.py OUTPUT_MAX_BYTES: one answer TEXT's cap */
#define REPLY_MAX_BYTES (64L << 20) /* the runtime's raw JSON reply this runner reads at all (else an error row) */
#define REPLY_MAX_DEPTH 32          /* android_runner/contract.py RESULT_LINE_MAX_DEPTH */
#define TEXT_REPLY_HEAD "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":"
#define MEM_SAMPLE_MS 20
#define FATAL_ERROR_MAX 2048 /* a FATAL line's error text, UTF-8 bytes (longer: cut on a character boundary) */
#define FATAL_FIX_MAX 1024   /* ... and its fix */
#define FIX_RUNTIME "push the pinned library: `python scripts/build_native_runner.py --android` puts it in " \
  "build/android_arm64/; or run this one anyway with EDGEFARM_ALLOW_RUNTIME=1 (every row then names it)"

/* ------------------------------------------------------------------ the C API (api.h: the one table) */
static const char *bench_api_missing; /* the first bench function the library lacks, or NULL */
static const char *stream_api_missing; /* the first streaming function the library lacks, or NULL (stream.c) */

static const char *load_api(const char *path) {
  static char why[160];
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) return dlerror();
  api_bind(h); /* every part's functions; only the dataset runner's are required here */
  const char *missing = api_missing(EF_RUN);
  if (missing) {
    snprintf(why, sizeof why, "missing symbol %s", missing);
    return why;
  }
  bench_api_missing = api_missing(EF_BENCH); /* `edgefarm bench`'s (bench.c): needed by a bench job only */
  stream_api_missing = api_missing(EF_STREAM); /* a served request streamed (stream.c): else it is answered whole */
  return NULL;
}

/* ------------------------------------------------------------------ fatal errors */
/* The one format of every fatal error, written through the JSON writer (valid UTF-8 kept as it is,
 * invalid bytes U+FFFD, both strings escaped); no allocation (it also reports a failed one): the texts
 * are capped so the line always fits its static buffer. */
static void fatal(int code, const char *error, const char *fix) {
  static char buf[6 * (FATAL_ERROR_MAX + FATAL_FIX_MAX) + 64];
  sbuf s = sb_fixed(buf, sizeof buf);
  sb_str(&s, "{\"error\":");
  sb_json_text(&s, error, strlen(error), FATAL_ERROR_MAX, NULL, NULL);
  sb_str(&s, ",\"fix\":");
  sb_json_text(&s, fix, strlen(fix), FATAL_FIX_MAX, NULL, NULL);
  sb_printf(&s, ",\"exit_code\":%d}", code);
  emit("FATAL", s.buf, s.len);
  _exit(code);
}

static void usage_fatal(const char *why) {
  fatal(EXIT_USAGE, why, "edgefarm_runner --settings SETTINGS --job JOB.conv --results R [--hook DRIVER] "
        "[--hook-timeout-s 0.001..86400] [--state-dir DIR] [--log-level 0..5|1000] [--power-dir DIR]");
}

/* A regular file's bytes (at most max_len: anything longer is refused), or NULL. */
static char *read_file(const char *path, size_t *len, size_t max_len) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return NULL;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max_len) {
    close(fd);
    errno = EFBIG;
    return NULL;
  }
  sbuf s = {0};
  char chunk[65536];
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    sb_add(&s, chunk, (size_t)n);
    if (s.len > max_len) break; /* grew while read */
  }
  close(fd);
  if (!s.buf) sb_add(&s, "", 0);
  *len = s.len;
  return s.buf;
}

/* ------------------------------------------------------------------ the run's settings */
/* The settings file as android_runner/settings.py renders it; its values point into the file's text,
 * kept for the whole run. Numbers are whole (times in ms), each in the bound settings.py names. */
typedef struct {
  const char *model, *cache_dir, *backend, *vision, *audio, *lib;
  long threads, max_num_tokens, sample_timeout_ms, cooldown_mc, cooldown_max_ms, allow_runtime;
  long settle_mc, settle_window_ms, settle_max_ms; /* the hook's settle gate (driver.sh) */
} run_settings;

/* SETTING_KEYS, each SETTING_<KEY>_LEAST/_MOST, SETTINGS_MAX_BYTES, SETTINGS_HEADER and the backends: generated
 * from android_runner/settings.py at build time (settings_gen.h, android_runner/native/settings_header.py) */

static void settings_fatal(const char *path, long line_no, const char *what) {
  static char why[1200];
  snprintf(why, sizeof why, "settings file %.600s line %ld: %s", path, line_no, what);
  fatal(EXIT_USAGE, why, "rerun: the host writes the settings file with the job (android_runner/settings.py)");
}

static long setting_long(const char *path, long no, const char *key, const char *v, long lo, long hi) {
  long out;
  if (parse_long(v, lo, hi, &out) != 0) {
    char why[200];
    snprintf(why, sizeof why, "%s must be a whole number in %ld..%ld, not '%.40s'", key, lo, hi, v);
    settings_fatal(path, no, why);
  }
  return out;
}

static void read_settings(const char *path, run_settings *out) {
  size_t len = 0;
  char *text = read_file(path, &len, SETTINGS_MAX_BYTES);
  if (!text) {
    char why[600];
    snprintf(why, sizeof why, "cannot read the settings file %.400s (a regular file of at most %d bytes): %s", path,
             SETTINGS_MAX_BYTES, strerror(errno));
    fatal(EXIT_USAGE, why, "rerun: the host writes the settings file with the job (android_runner/settings.py)");
  }
  if (memchr(text, 0, len)) settings_fatal(path, 0, "a NUL byte");
  int seen[SETTING_COUNT] = {0};
  char *cur = text, *end = text + len;
  long no = 0;
  memset(out, 0, sizeof *out);
  while (cur < end) {
    char *nl = memchr(cur, '\n', (size_t)(end - cur));
    no++;
    if (!nl) settings_fatal(path, no, "the last line has no newline");
    *nl = 0;
    char *line = cur;
    cur = nl + 1;
    if (no == 1) {
      if (strcmp(line, SETTINGS_HEADER) != 0) settings_fatal(path, 1, "not a settings file (no '" SETTINGS_HEADER "' header)");
      continue;
    }
    char *eq = strchr(line, '=');
    if (!eq) settings_fatal(path, no, "not a key=value line");
    *eq = 0;
    const char *v = eq + 1;
    size_t k = 0;
    while (k < SETTING_COUNT && strcmp(line, SETTING_KEYS[k]) != 0) k++;
    if (k == SETTING_COUNT) settings_fatal(path, no, "unknown key");
    if (seen[k]++) settings_fatal(path, no, "a key given twice");
#define BOUNDED(KEY) setting_long(path, no, SETTING_KEYS[k], v, KEY##_LEAST, KEY##_MOST)
#define GATE(KEY) (*v || !KEY##_OPTIONAL ? BOUNDED(KEY) : -1) /* empty: that gate is off */
    switch ((enum setting_key)k) {
      case SETTING_MODEL: out->model = v; break;
      case SETTING_CACHE_DIR: out->cache_dir = v; break;
      case SETTING_BACKEND: out->backend = v; break;
      case SETTING_VISION_BACKEND: out->vision = *v ? v : NULL; break;
      case SETTING_AUDIO_BACKEND: out->audio = *v ? v : NULL; break;
      case SETTING_THREADS: out->threads = BOUNDED(SETTING_THREADS); break;
      case SETTING_MAX_NUM_TOKENS: out->max_num_tokens = BOUNDED(SETTING_MAX_NUM_TOKENS); break;
      case SETTING_SAMPLE_TIMEOUT_MS: out->sample_timeout_ms = BOUNDED(SETTING_SAMPLE_TIMEOUT_MS); break;
      case SETTING_COOLDOWN_MC: out->cooldown_mc = GATE(SETTING_COOLDOWN_MC); break; /* the hook's */
      case SETTING_COOLDOWN_MAX_MS: out->cooldown_max_ms = BOUNDED(SETTING_COOLDOWN_MAX_MS); break; /* the hook's */
      case SETTING_SETTLE_MC: out->settle_mc = GATE(SETTING_SETTLE_MC); break; /* the hook's */
      case SETTING_SETTLE_WINDOW_MS: out->settle_window_ms = BOUNDED(SETTING_SETTLE_WINDOW_MS); break;
      case SETTING_SETTLE_MAX_MS: out->settle_max_ms = BOUNDED(SETTING_SETTLE_MAX_MS); break;
      case SETTING_LIB: out->lib = v; break;
      case SETTING_ALLOW_RUNTIME: out->allow_runtime = BOUNDED(SETTING_ALLOW_RUNTIME); break;
      case SETTING_COUNT: break;
    }
#undef GATE
#undef BOUNDED
    if ((k == SETTING_BACKEND && !is_backend(v)) ||
        ((k == SETTING_VISION_BACKEND || k == SETTING_AUDIO_BACKEND) && *v && !is_backend(v)))
      settings_fatal(path, no, "a backend is " BACKENDS_TEXT);
    if ((k == SETTING_MODEL || k == SETTING_CACHE_DIR || k == SETTING_LIB) && !*v) settings_fatal(path, no, "an empty path");
  }
  if (no == 0) settings_fatal(path, 1, "an empty file");
  for (size_t k = 0; k < SETTING_COUNT; k++)
    if (!seen[k]) {
      char why[100];
      snprintf(why, sizeof why, "no %s (every key is written)", SETTING_KEYS[k]);
      settings_fatal(path, no, why);
    }
}

/* Sample numbers already in the results file (a rerun resumes after them); done has max_n + 1 bytes. */
static unsigned char *done_set(const char *path, long max_n, int *torn) {
  unsigned char *done = xmalloc((size_t)max_n + 1);
  memset(done, 0, (size_t)max_n + 1);
  size_t len = 0;
  char *text = read_file(path, &len, (size_t)1 << 30);
  *torn = 0;
  if (!text) return done;
  if (len > 0 && text[len - 1] != '\n') *torn = 1; /* killed mid-write: start on a new line */
  char *p = text, *end = text + len;
  while (p < end) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) break; /* a torn last line does not count */
    *nl = 0;
    if (strncmp(p, "{\"n\":", 5) == 0) {
      char *comma = strchr(p + 5, ',');
      long n;
      if (comma) {
        *comma = 0;
        if (parse_long(p + 5, 1, max_n, &n) == 0) done[n] = 1;
      }
    }
    p = nl + 1;
  }
  free(text);
  return done;
}

/* ------------------------------------------------------------------ the runner's state */
/* Everything the main thread and the watchdog share, in one struct (main's), under its lock. */
typedef struct {
  pthread_mutex_t lock;
  mem_kb peaks;             /* the sample's, so far */
  double deadline;          /* monotonic seconds; 0 = no sample running */
  long current_n;           /* sample in flight */
  int finished;             /* the sample's line is being or was written (by the main thread or the watchdog) */
  int hwm_reset_ok;         /* this sample's VmHWM was reset at its start */
  double sample_t0;
  double timeout_s;
  power_state power;
  int results_fd, results_torn;
  const char *runtime_override; /* non-NULL: --allow-runtime let a non-pinned library run */
  const char *serve_dir;        /* --serve's request folder, where the host's cancel marks <n>.cancel come */
} runner;

static void sample_memory(runner *r) {
  mem_kb m = {0};
  mem_read(&m);
  pthread_mutex_lock(&r->lock);
  mem_peak(&r->peaks, &m);
  pthread_mutex_unlock(&r->lock);
}

static void add_row_common(const runner *r, sbuf *s, const mem_kb *m, int hwm_reset_ok) {
  sb_printf(s, ",\"peak_rss_kb\":%ld,\"peak_hwm_kb\":%ld,\"peak_anon_kb\":%ld,\"peak_file_kb\":%ld,"
            "\"peak_swap_kb\":%ld,\"peak_method\":\"%s\",\"mem_sample_ms\":%d,\"runner\":\"native\"",
            m->rss, m->hwm, m->anon, m->file, m->swap, hwm_reset_ok ? "hwm_reset" : "sampled", MEM_SAMPLE_MS);
  if (r->runtime_override) {
    sb_str(s, ",\"runtime_override\":");
    sb_json_string(s, r->runtime_override);
  }
  sb_printf(s, ",\"pid\":%d}", (int)getpid());
}

/* The sample's line: ONE write to the results file, ONE write of the RESULT line. A write the file
 * refused (full storage) is said in a NOTE; the RESULT line still carries the row to the host. */
static void emit_result(runner *r, long n, sbuf *line) {
  sb_add(line, "\n", 1);
  const char *data = line->buf;
  size_t len = line->len;
  if (r->results_torn) { /* an earlier line was cut short: this one starts on a fresh line */
    if (write_all(r->results_fd, "\n", 1) == 0) r->results_torn = 0;
  }
  ssize_t w = write(r->results_fd, data, len);
  if (w != (ssize_t)len) {
    int e = errno;
    if (w > 0) r->results_torn = 1;
    char msg[256];
    snprintf(msg, sizeof msg, "warning: the results file refused sample %ld's line (%s): the RESULT line "
             "below is its only copy", n, w < 0 ? strerror(e) : "short write");
    note(msg);
  }
  emit("RESULT", data, len - 1);
}

static void *watchdog(void *arg) {
  runner *r = arg;
  for (;;) {
    usleep(MEM_SAMPLE_MS * 1000);
    sample_memory(r);
    pthread_mutex_lock(&r->lock);
    power_tick(&r->power);
    int fire = r->deadline > 0 && !r->finished && now_s() > r->deadline;
    if (fire) r->finished = 1;
    mem_kb m = r->peaks;
    long n = r->current_n;
    int reset = r->hwm_reset_ok;
    double wall_ms = (now_s() - r->sample_t0) * 1000.0;
    pthread_mutex_unlock(&r->lock);
    if (fire) {
      sbuf s = {0};
      sb_printf(&s, "{\"n\":%ld,\"status\":\"timeout\",\"exit_code\":%d,\"error\":", n, EXIT_TIMEOUT);
      char why[96];
      snprintf(why, sizeof why, "no answer within %g s (sample timeout)", r->timeout_s);
      sb_json_string(&s, why);
      sb_number(&s, "wall_ms", wall_ms);
      add_row_common(r, &s, &m, reset);
      emit_result(r, n, &s);
      _exit(EXIT_TIMEOUT); /* a runtime call cannot be interrupted: the driver restarts us */
    }
  }
  return NULL;
}

/* ------------------------------------------------------------------ one sample */
static void add_error_text(sbuf *s, const char *what) {
  const char *msg = api.litert_lm_get_last_error_message();
  sbuf t = {0};
  sb_str(&t, what);
  if (msg && *msg) sb_str(&t, ": "), sb_str(&t, msg);
  sb_json_string(s, t.buf);
  free(t.buf);
}

/* The reply as the row's "response": a plain text reply rebuilt around its answer cleaned and capped
 * as answer_text.py's clean_answer does; another shape passed on whole (see the top of this file). */
static void add_answer_text(sbuf *line, const char *text, size_t len, long *invalid, long *dropped) {
  sbuf rebuilt = {0};
  sb_str(&rebuilt, TEXT_REPLY_HEAD);
  sb_json_text(&rebuilt, text ? text : "", len, OUTPUT_MAX_BYTES, invalid, dropped);
  sb_str(&rebuilt, "}]}");
  sb_json_text(line, rebuilt.buf, rebuilt.len, 0, NULL, NULL);
  free(rebuilt.buf);
}

static void add_answer(sbuf *line, const char *reply, size_t len, long *invalid, long *dropped) {
  sbuf text = {0};
  if (reply_text(reply, len, REPLY_MAX_DEPTH, &text) == 0) add_answer_text(line, text.buf, text.len, invalid, dropped);
  else sb_json_text(line, reply, len, OUTPUT_MAX_BYTES, invalid, dropped);
  free(text.buf);
}

/* The sample's figures taken the moment it ends (memory, peaks, wall time, power), under the lock the
 * watchdog shares; 1 if this thread ended it (0: the watchdog timed it out first and owns its row). */
static int end_measurement(runner *r, mem_kb *m, int *reset, double *wall_ms, sbuf *power) {
  sample_memory(r);
  pthread_mutex_lock(&r->lock);
  int mine = !r->finished;
  r->finished = 1;
  r->deadline = 0;
  *m = r->peaks;
  *reset = r->hwm_reset_ok;
  *wall_ms = (now_s() - r->sample_t0) * 1000.0;
  power_end(&r->power, power);
  pthread_mutex_unlock(&r->lock);
  return mine;
}

/* One turn sent with the run's own whole-answer call, timed around that call alone (*wall_ms): 0 and the
 * reply (*response, owned), or -1 and the error (a JSON string) in *error. */
static int send_whole(LiteRtLmConversation *conv, const char *message, char **response, size_t *response_len,
                      sbuf *error, double *wall_ms) {
  double t0 = now_s();
  LiteRtLmJsonResponse *resp = api.litert_lm_conversation_send_message(conv, message, "{}", NULL);
  *wall_ms = (now_s() - t0) * 1000.0;
  if (!resp) { /* the earlier turn's reply stays the row's */
    add_error_text(error, "the runtime refused the message");
    return -1;
  }
  const char *text = api.litert_lm_json_response_get_string(resp);
  free(*response);
  *response = NULL;
  *response_len = text ? strnlen(text, (size_t)REPLY_MAX_BYTES + 1) : 0;
  if (*response_len > (size_t)REPLY_MAX_BYTES) {
    api.litert_lm_json_response_delete(resp);
    sb_printf(error, "\"the runtime's reply is over %ld bytes (the runner's REPLY_MAX_BYTES): not read\"",
              REPLY_MAX_BYTES);
    return -1;
  }
  *response = xmalloc(*response_len + 1);
  memcpy(*response, text ? text : "", *response_len + 1);
  api.litert_lm_json_response_delete(resp);
  return 0;
}

/* Turn i's figures from the runtime's benchmark info, appended to the row's "turns" (TTFT from the first). */
static void add_turn(sbuf *turns, LiteRtLmConversation *conv, size_t i, double wall, double *ttft_ms) {
  LiteRtLmBenchmarkInfo *bench = api.litert_lm_conversation_get_benchmark_info(conv);
  if (!bench) return;
  int np = api.litert_lm_benchmark_info_get_num_prefill_turns(bench);
  int nd = api.litert_lm_benchmark_info_get_num_decode_turns(bench);
  if (i == 0) *ttft_ms = api.litert_lm_benchmark_info_get_time_to_first_token(bench) * 1000.0;
  sb_printf(turns, "%s{\"prefill_tokens\":%d", i ? "," : "",
            np > 0 ? api.litert_lm_benchmark_info_get_prefill_token_count_at(bench, np - 1) : 0);
  sb_number(turns, "prefill_tps", np > 0 ? api.litert_lm_benchmark_info_get_prefill_tokens_per_sec_at(bench, np - 1) : 0.0);
  sb_printf(turns, ",\"decode_tokens\":%d", nd > 0 ? api.litert_lm_benchmark_info_get_decode_token_count_at(bench, nd - 1) : 0);
  sb_number(turns, "decode_tps", nd > 0 ? api.litert_lm_benchmark_info_get_decode_tokens_per_sec_at(bench, nd - 1) : 0.0);
  sb_number(turns, "wall_ms", wall);
  sb_add(turns, "}", 1);
  api.litert_lm_benchmark_info_delete(bench);
}

/* `--serve DIR`: request n's cancel mark, DIR/<n>.cancel (the host pushes it when the client went away). */
static void cancel_mark(char *path, size_t n, const char *dir, long request) {
  snprintf(path, n, "%s/%ld%s", dir, request, CANCEL_SUFFIX);
}

static void run_sample(runner *r, LiteRtLmEngine *engine, const sample *s, double init_ms) {
  sbuf line = {0}, turns = {0}, error = {0};
  char *response = NULL;
  size_t response_len = 0;
  double ttft_ms = -1.0, infer_ms = 0.0;
  streamed piecewise = {0}; /* a served request streamed: its last turn's answer (stream.c) */
  int streaming = s->stream && !stream_api_missing, answered_piecewise = 0;
  if (s->stream && stream_api_missing) {
    static int said;
    if (!said++) {
      char msg[200];
      snprintf(msg, sizeof msg, "warning: the runtime library has no %s: streamed requests are answered whole", stream_api_missing);
      note(msg);
    }
  }

  LiteRtLmConversation *conv = NULL;
  LiteRtLmSamplerParams *sampler = api.litert_lm_sampler_params_create(kLiteRtLmSamplerTypeTopP);
  LiteRtLmSessionConfig *session = sampler ? api.litert_lm_session_config_create() : NULL;
  LiteRtLmConversationConfig *config = session ? api.litert_lm_conversation_config_create() : NULL;
  if (!config) {
    add_error_text(&error, "the conversation's settings could not be created");
  } else {
    api.litert_lm_sampler_params_set_top_k(sampler, (int32_t)s->top_k);
    api.litert_lm_sampler_params_set_top_p(sampler, (float)s->top_p);
    api.litert_lm_sampler_params_set_temperature(sampler, (float)s->temperature);
    api.litert_lm_sampler_params_set_seed(sampler, (int32_t)s->seed);
    api.litert_lm_session_config_set_sampler_params(session, sampler);
    if (s->max_output_tokens > 0) api.litert_lm_session_config_set_max_output_tokens(session, (int)s->max_output_tokens);
    api.litert_lm_conversation_config_set_session_config(config, session);
    if (s->system && *s->system) api.litert_lm_conversation_config_set_system_message(config, s->system);
    if (s->history && *s->history) api.litert_lm_conversation_config_set_messages(config, s->history);
    if (s->tools && *s->tools) api.litert_lm_conversation_config_set_tools(config, s->tools);
    conv = api.litert_lm_conversation_create(engine, config);
    if (!conv) add_error_text(&error, "the conversation could not be created");
  }
  if (sampler) api.litert_lm_sampler_params_delete(sampler);
  if (session) api.litert_lm_session_config_delete(session);
  if (config) api.litert_lm_conversation_config_delete(config);

  for (size_t i = 0; conv && i < s->turns && !error.len; i++) {
    double wall;
    if (streaming && i + 1 == s->turns) { /* piece by piece; an answer read whole keeps the run's own call */
      char mark[4400];
      if (r->serve_dir) cancel_mark(mark, sizeof mark, r->serve_dir, s->n);
      int rc = stream_turn(conv, s->messages[i], s->n, r->serve_dir ? mark : NULL, &piecewise, &error);
      wall = piecewise.wall_ms;
      infer_ms += wall;
      if (rc != 0) break; /* the earlier turn's reply stays the row's, as after a refused message */
      free(response);
      response = NULL;
      answered_piecewise = 1;
    } else {
      int rc = send_whole(conv, s->messages[i], &response, &response_len, &error, &wall);
      infer_ms += wall;
      if (rc != 0) break;
    }
    add_turn(&turns, conv, i, wall, &ttft_ms);
    if (piecewise.cancelled) sb_json_string(&error, "cancelled: the client went away"); /* litert_runner.py's words */
  }
  sbuf fid = {0}; /* --fidelity: one more pass on this engine, inside the sample's deadline (fidelity.c) */
  if (s->fidelity && !error.len && (response || answered_piecewise)) {
    sbuf text = {0};
    int plain = answered_piecewise ? (sb_add(&text, piecewise.text.buf ? piecewise.text.buf : "", piecewise.text.len), 1)
                                   : reply_text(response, response_len, REPLY_MAX_DEPTH, &text) == 0;
    fidelity_record(&fid, engine, s, plain ? (text.buf ? text.buf : "") : NULL, plain ? text.len : 0);
    free(text.buf);
  }
  /* The answer is in hand: the sample is finished now, before the conversation is torn down or any
   * hook runs, so nothing after this point can turn it into a timeout. */
  mem_kb m;
  int reset;
  double wall_ms;
  sbuf power = {0};
  int mine = end_measurement(r, &m, &reset, &wall_ms, &power);
  if (mine) {
    long invalid = 0, dropped = 0;
    sb_printf(&line, "{\"n\":%ld,\"status\":\"%s\",\"error\":", s->n, error.len ? "error" : "ok");
    if (error.len) sb_add(&line, error.buf, error.len);
    else sb_add(&line, "\"\"", 2);
    sb_str(&line, ",\"response\":");
    if (answered_piecewise) add_answer_text(&line, piecewise.text.buf, piecewise.text.len, &invalid, &dropped);
    else if (response) add_answer(&line, response, response_len, &invalid, &dropped);
    else sb_str(&line, "null");
    sb_printf(&line, ",\"invalid_utf8_bytes\":%ld,\"output_truncated_bytes\":%ld", invalid, dropped);
    if (s->max_output_tokens > 0) sb_printf(&line, ",\"max_output_tokens\":%ld", s->max_output_tokens); /* the cap given */
    sb_number(&line, "init_ms", init_ms);
    if (ttft_ms >= 0) sb_number(&line, "ttft_ms", ttft_ms);
    sb_number(&line, "infer_ms", infer_ms);
    sb_number(&line, "wall_ms", wall_ms);
    if (power.buf) sb_add(&line, power.buf, power.len);
    sb_printf(&line, ",\"turns\":[%s]", turns.buf ? turns.buf : "");
    if (fid.buf) sb_add(&line, fid.buf, fid.len);
    add_row_common(r, &line, &m, reset);
    emit_result(r, s->n, &line);
  }
  if (conv) api.litert_lm_conversation_delete(conv);
  free(response);
  free(piecewise.text.buf);
  free(power.buf);
  free(fid.buf);
  free(line.buf);
  free(turns.buf);
  free(error.buf);
}

/* ------------------------------------------------------------------ one bench repetition (bench.c) */
typedef struct {
  const char *model, *cache_dir, *loads_path;
  long max_num_tokens;
} bench_setup;

static void run_bench_sample(runner *r, const bench_setup *setup, const sample *s) {
  const bench_cell *c = &s->bench;
  char why[1024] = "";
  int load_no = 0;
  long threads_ran = -1;
  double init_ms = 0.0;
  bench_figures f;
  memset(&f, 0, sizeof f);
  f.depth_tokens = f.prefill_tokens = f.decode_tokens = -1;
  void *engine = bench_engine_for(setup->model, c, setup->cache_dir, setup->max_num_tokens, &init_ms, &load_no, why,
                                  sizeof why);
  if (engine) { /* a fresh engine per repetition (bench.h) */
    char small[200];
    int lfd = open(setup->loads_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (lfd >= 0) {
      int k = snprintf(small, sizeof small, "%d\t%.3f\n", (int)getpid(), init_ms);
      if (write_all(lfd, small, (size_t)k) != 0) note("warning: cannot record the model load in loads.tsv (storage full?)");
      close(lfd);
    }
    int k = snprintf(small, sizeof small, "{\"init_ms\":%.3f,\"pid\":%d}", init_ms, (int)getpid());
    emit("READY", small, (size_t)k);
  }
  int rc = engine ? bench_run(engine, c, &f, why, sizeof why) : -1;
  if (engine) threads_ran = bench_threads_ran(); /* after its work: a short-lived thread is gone */
  mem_kb m;
  int reset;
  double wall_ms;
  sbuf power = {0};
  int mine = end_measurement(r, &m, &reset, &wall_ms, &power);
  if (mine) {
    sbuf line = {0};
    sb_printf(&line, "{\"n\":%ld,\"status\":\"%s\",\"error\":", s->n, rc == 0 ? "ok" : "error");
    sb_json_string(&line, rc == 0 ? "" : why);
    sb_str(&line, ",\"response\":null,\"invalid_utf8_bytes\":0,\"output_truncated_bytes\":0");
    if (engine) {
      sb_number(&line, "init_ms", init_ms);
      sb_printf(&line, ",\"engine_load\":%d", load_no);
      if (threads_ran > 0) sb_printf(&line, ",\"threads_ran\":%ld", threads_ran);
    }
    sb_printf(&line, ",\"backend\":\"%s\",\"threads\":%ld", c->backend, c->threads);
    if (f.prefill_tokens >= 0 && f.prefill_tps > 0 && f.decode_tokens > 0 && f.decode_tps > 0) /* bench.py's TTFT */
      sb_number(&line, "ttft_ms", 1000.0 * (f.prefill_tokens / f.prefill_tps + 1.0 / f.decode_tps));
    sb_number(&line, "infer_ms", f.timed_wall_ms);
    sb_number(&line, "wall_ms", wall_ms);
    if (power.buf) sb_add(&line, power.buf, power.len);
    sb_str(&line, ",\"turns\":[");
    if (f.depth_tokens >= 0) {
      sb_printf(&line, "{\"prefill_tokens\":%d", f.depth_tokens);
      sb_number(&line, "prefill_tps", f.depth_tps);
      sb_number(&line, "wall_ms", f.depth_wall_ms);
      sb_str(&line, "},");
    }
    if (f.prefill_tokens >= 0) {
      sb_printf(&line, "{\"prefill_tokens\":%d", f.prefill_tokens);
      sb_number(&line, "prefill_tps", f.prefill_tps);
      if (f.decode_tokens >= 0) {
        sb_printf(&line, ",\"decode_tokens\":%d", f.decode_tokens);
        sb_number(&line, "decode_tps", f.decode_tps);
      }
      sb_number(&line, "wall_ms", f.timed_wall_ms);
      sb_str(&line, "}");
    } else if (f.depth_tokens >= 0) {
      line.len--; /* the depth turn's comma */
    }
    sb_str(&line, "]");
    add_row_common(r, &line, &m, reset);
    emit_result(r, s->n, &line);
    free(line.buf);
  }
  free(power.buf);
}

/* ------------------------------------------------------------------ the runtime library check */
static void check_runtime(runner *r, const char *lib, int allow) {
  static char why[1600], which[400];
  lib_identity id;
  if (pin_identify(lib, &id) != 0) {
    snprintf(why, sizeof why, "cannot read the LiteRT-LM runtime library %s: %s", lib, strerror(errno));
    fatal(EXIT_RUNTIME, why, FIX_RUNTIME);
  }
  if (strcmp(id.sha256, EF_PINNED_SHA256) == 0 && strcmp(id.version, EF_PINNED_VERSION) == 0) return;
  snprintf(which, sizeof which, "%s: sha256 %s, version %s", lib, id.sha256, id.version);
  if (allow) {
    r->runtime_override = which;
    return;
  }
  snprintf(why, sizeof why, "the runtime library is not the pinned one: %s; this runner was built for litert-lm-api %s "
           "(sha256 %s, from the wheel's RECORD)", which, EF_PINNED_VERSION, EF_PINNED_SHA256);
  fatal(EXIT_RUNTIME, why, FIX_RUNTIME);
}

/* ------------------------------------------------------------------ main */
static long opt_long(const char *name, const char *v, long lo, long hi) {
  long out;
  if (parse_long(v, lo, hi, &out) != 0) {
    char why[200];
    snprintf(why, sizeof why, "%s must be a whole number in %ld..%ld, not '%.40s'", name, lo, hi, v);
    usage_fatal(why);
  }
  return out;
}

static double opt_seconds(const char *name, const char *v) {
  double out;
  if (parse_double(v, 0.001, 86400.0, &out) != 0) {
    char why[200];
    snprintf(why, sizeof why, "%s must be seconds in 0.001..86400, not '%.40s'", name, v);
    usage_fatal(why);
  }
  return out;
}

/* One sample of the job (or one request), start to row: the hook around it, its inflight mark. */
static void run_one(runner *r, LiteRtLmEngine *engine, const hook_cfg *hook, const bench_setup *setup,
                    const sample *s, const char *inflight, double init_ms) {
  char small[64];
  hook_run(hook, s->n, "before");
  snprintf(small, sizeof small, "%ld\n", s->n);
  write_file(inflight, small);
  int k = snprintf(small, sizeof small, "%ld", s->n);
  emit("BEGIN", small, (size_t)k);
  int reset = mem_reset_hwm();
  pthread_mutex_lock(&r->lock);
  memset(&r->peaks, 0, sizeof r->peaks);
  r->hwm_reset_ok = reset;
  r->current_n = s->n;
  r->finished = 0;
  r->sample_t0 = now_s();
  r->deadline = r->sample_t0 + r->timeout_s;
  power_start(&r->power);
  pthread_mutex_unlock(&r->lock);
  if (s->is_bench) run_bench_sample(r, setup, s);
  else if (engine) run_sample(r, engine, s, init_ms);
  else fatal(EXIT_USAGE, "a job mixing bench cells and samples", "this is an edgefarm bug: report it with the job file");
  hook_run(hook, s->n, "after"); /* outside the sample's deadline, under its own */
  write_file(inflight, ""); /* after the hook: a death in it is still this sample's (its row is kept) */
}

#define SERVE_TORN_S 30 /* a request file that still does not parse this long after its last write is dropped */

static int ends_with(const char *name, size_t len, const char *suffix) {
  size_t k = strlen(suffix);
  return len > k && strcmp(name + len - k, suffix) == 0;
}

/* `--serve DIR`: the oldest complete DIR/<name>.job, or 0 when there is none (yet); name in best. With no
 * request waiting, a cancel mark is one that came after its request's answer (the host's race with the
 * row): it is removed, so a later request with the same number is not stopped by it. */
static int serve_next(const char *dir, char *best, size_t best_n) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  best[0] = 0;
  int marks = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    marks |= ends_with(e->d_name, len, CANCEL_SUFFIX);
    if (len < best_n && ends_with(e->d_name, len, REQUEST_SUFFIX) && (!best[0] || strcmp(e->d_name, best) < 0))
      snprintf(best, best_n, "%s", e->d_name);
  }
  if (marks && !best[0]) {
    rewinddir(d);
    char path[4400];
    while ((e = readdir(d)) != NULL)
      if (ends_with(e->d_name, strlen(e->d_name), CANCEL_SUFFIX)) {
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
      }
  }
  closedir(d);
  return best[0] != 0;
}

/* `--serve DIR`: run requests until DIR/stop; the number run. */
static long serve_loop(runner *r, LiteRtLmEngine *engine, const bench_setup *setup, const char *dir,
                       const char *state_dir, const char *inflight, double init_ms) {
  static const hook_cfg no_hook = {0};
  char path[4400], stop[4400], name[256], why[512];
  snprintf(stop, sizeof stop, "%s/stop", dir);
  long served = 0;
  useconds_t idle_us = 500;
  while (access(stop, F_OK) != 0) {
    if (!serve_next(dir, name, sizeof name)) {
      usleep(idle_us);
      if (idle_us < 20000) idle_us = idle_us * 3 / 2;
      continue;
    }
    idle_us = 500;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len = 0;
    char *text = read_file(path, &len, (size_t)64 << 20);
    sample *samples = NULL;
    size_t count = 0;
    if (!text || parse_job(text, len, &samples, &count, why, sizeof why) != 0) { /* a push under way */
      struct stat st;
      if (stat(path, &st) == 0 && time(NULL) - st.st_mtime > SERVE_TORN_S) {
        note("warning: a request file that never became complete was dropped");
        unlink(path);
      }
      free(text);
      usleep(1000);
      continue;
    }
    unlink(path);
    for (size_t i = 0; i < count; i++) {
      run_one(r, engine, &no_hook, setup, &samples[i], inflight, init_ms);
      served++;
      cancel_mark(path, sizeof path, dir, samples[i].n); /* answered: its mark is spent */
      unlink(path);
      char media[4400];
      snprintf(media, sizeof media, "%s/media/%ld", state_dir, samples[i].n);
      pid_t pid = fork(); /* the request's media folder: `rm -rf` as the phone's own toybox does it */
      if (pid == 0) {
        execlp("rm", "rm", "-rf", media, (char *)NULL);
        _exit(127);
      }
      if (pid > 0) waitpid(pid, NULL, 0);
      free(samples[i].messages);
      free(samples[i].prefill);
    }
    free(samples);
    free(text);
  }
  return served;
}

int main(int argc, char **argv) {
  const char *settings_path = NULL, *job = NULL, *results = NULL, *state = NULL, *power_dir = NULL, *serve = NULL;
  long log_level = kLiteRtLmLogSeverityInfo;
  /* static: the watchdog thread reads it until the process is gone, also while exit() runs the runtime's
   * destructors after main has returned (an automatic variable's frame is gone by then: SIGSEGV) */
  static runner r = {.lock = PTHREAD_MUTEX_INITIALIZER, .timeout_s = 300.0, .results_fd = -1};
  hook_cfg hook = {.timeout_s = 600.0};
  char state_dir[4096];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (strcmp(a, name) == 0 && v && (++i, 1))
    if (OPT("--settings")) settings_path = v;
    else if (OPT("--job")) job = v;
    else if (OPT("--results")) results = v;
    else if (OPT("--hook-timeout-s")) hook.timeout_s = opt_seconds("--hook-timeout-s", v);
    else if (OPT("--hook")) hook.path = v;
    else if (OPT("--state-dir")) state = v;
    else if (OPT("--log-level")) log_level = opt_long("--log-level", v, 0, 1000);
    else if (OPT("--power-dir")) power_dir = v;
    else if (OPT("--serve")) serve = v;
    else usage_fatal("unknown or incomplete option");
#undef OPT
  }
  if (!settings_path || !(job || serve) || !results) usage_fatal("--settings, --job (or --serve) and --results are required");
  if (job && serve) usage_fatal("--job and --serve exclude each other");
  static run_settings set;
  read_settings(settings_path, &set);
  const char *lib = set.lib, *model = set.model, *backend = set.backend, *vision = set.vision, *audio = set.audio;
  const char *cache_dir = set.cache_dir;
  long threads = set.threads, max_num_tokens = set.max_num_tokens;
  int allow_runtime = (int)set.allow_runtime;
  r.timeout_s = (double)set.sample_timeout_ms / 1000.0;
  signal(SIGPIPE, SIG_IGN); /* a host that went away must not kill a sample mid-write */
  if (state) snprintf(state_dir, sizeof state_dir, "%s", state);
  else {
    snprintf(state_dir, sizeof state_dir, "%s", job ? job : serve);
    char *slash = strrchr(state_dir, '/');
    if (slash) *slash = 0;
    else snprintf(state_dir, sizeof state_dir, ".");
  }
  hook.state_dir = state_dir;
  char why[512];
  size_t job_len = 0;
  char *job_text = read_file(job ? job : "", &job_len, (size_t)1 << 30);
  if (serve) job_text = strdup("EFJOB 1\n"), job_len = 8; /* no samples: the requests come one by one */
  if (!job_text) {
    snprintf(why, sizeof why, "cannot read the job file %s (a regular file of at most 1 GiB): %s", job, strerror(errno));
    fatal(EXIT_USAGE, why, "rerun: the host pushes the job file again");
  }
  sample *samples = NULL;
  size_t count = 0;
  if (parse_job(job_text, job_len, &samples, &count, why, sizeof why) != 0)
    fatal(EXIT_USAGE, why, "this is an edgefarm bug: report it with the job file");
  long max_n = 0;
  for (size_t i = 0; i < count; i++)
    if (samples[i].n > max_n) max_n = samples[i].n;
  int torn = 0;
  unsigned char *done = done_set(results, max_n, &torn);
  r.results_fd = open(results, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (r.results_fd < 0) {
    snprintf(why, sizeof why, "cannot open the results file %s: %s", results, strerror(errno));
    fatal(EXIT_USAGE, why, "check the device's storage (full or read-only?)");
  }
  r.results_torn = torn;

  check_runtime(&r, lib, allow_runtime);
  const char *bad = load_api(lib);
  if (bad) {
    snprintf(why, sizeof why, "cannot use the LiteRT-LM runtime library %s: %s", lib, bad);
    fatal(EXIT_RUNTIME, why, FIX_RUNTIME);
  }
  /* INFO and up reach stderr (the driver keeps it as runner.log): the runtime names the backend it
   * really used there, and its errors say why a model or backend failed. */
  api.litert_lm_set_min_log_level((LiteRtLmLogSeverity)log_level);
  if (r.runtime_override) {
    char msg[600];
    snprintf(msg, sizeof msg, "warning: running a runtime library that is not the pinned one (--allow-runtime): %s", r.runtime_override);
    note(msg);
  }

  power_setup(&r.power, power_dir);
  pthread_t dog;
  if (pthread_create(&dog, NULL, watchdog, &r) != 0) fatal(EXIT_NOMEM, "cannot start the watchdog thread", "free memory on the device");

  char loads[4200], inflight[4200], small[256];
  snprintf(loads, sizeof loads, "%s/loads.tsv", state_dir);
  snprintf(inflight, sizeof inflight, "%s/inflight", state_dir);
  long pending = 0;
  for (size_t i = 0; i < count; i++) pending += !done[samples[i].n];
  int k;
  /* a bench job (every sample a bench cell) makes its engines per cell (bench.c), none here */
  int bench_job = count > 0;
  for (size_t i = 0; i < count; i++) bench_job &= samples[i].is_bench;
  bench_setup setup = {model, cache_dir, loads, max_num_tokens};
  double run_engine_init_ms = 0.0;
  LiteRtLmEngine *engine = NULL;
  if (bench_job && bench_api_missing) {
    snprintf(why, sizeof why, "the LiteRT-LM runtime library %s has no bench functions: %s", lib, bench_api_missing);
    fatal(EXIT_RUNTIME, why, FIX_RUNTIME);
  }
  if (!bench_job) {
  double t0 = now_s();
  LiteRtLmEngineSettings *settings = api.litert_lm_engine_settings_create(model, backend, vision, audio);
  if (!settings) {
    sbuf e = {0};
    sb_str(&e, "engine settings could not be created: ");
    sb_str(&e, api.litert_lm_get_last_error_message() ? api.litert_lm_get_last_error_message() : "");
    fatal(EXIT_MODEL_UNLOADABLE, e.buf, "check the model file and the backend");
  }
  api.litert_lm_engine_settings_enable_benchmark(settings);
  api.litert_lm_engine_settings_set_cache_dir(settings, cache_dir);
  if (threads > 0) api.litert_lm_engine_settings_set_num_threads(settings, (int)threads);
  if (max_num_tokens > 0) api.litert_lm_engine_settings_set_max_num_tokens(settings, (int)max_num_tokens);
  engine = api.litert_lm_engine_create(settings);
  const char *engine_error = engine ? "" : api.litert_lm_get_last_error_message();
  sbuf e = {0};
  if (!engine) sb_str(&e, "the engine could not be created from the model: "), sb_str(&e, engine_error ? engine_error : "");
  api.litert_lm_engine_settings_delete(settings);
  double init_ms = (now_s() - t0) * 1000.0;
  if (!engine) fatal(EXIT_MODEL_UNLOADABLE, e.buf, "check that the model file is a complete .litertlm for this runtime");
  int lfd = open(loads, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (lfd >= 0) {
    snprintf(small, sizeof small, "%d\t%.3f\n", (int)getpid(), init_ms);
    if (write_all(lfd, small, strlen(small)) != 0) note("warning: cannot record the model load in loads.tsv (storage full?)");
    close(lfd);
  }
  /* what the runtime was given, from the settings file (backend: one of three words, checked) */
  k = snprintf(small, sizeof small, "{\"init_ms\":%.3f,\"pid\":%d,\"pending\":%ld,\"settings\":{\"backend\":\"%s\","
               "\"threads\":%ld,\"max_num_tokens\":%ld,\"sample_timeout_ms\":%ld}}", init_ms, (int)getpid(), pending,
               backend, threads, max_num_tokens, set.sample_timeout_ms);
  emit("READY", small, (size_t)k);
  run_engine_init_ms = init_ms;
  }

  for (size_t i = 0; i < count; i++)
    if (!done[samples[i].n]) run_one(&r, engine, &hook, &setup, &samples[i], inflight, run_engine_init_ms);
  r.serve_dir = serve; /* a streamed request's cancel marks come there (stream.c) */
  if (serve) pending = serve_loop(&r, engine, &setup, serve, state_dir, inflight, run_engine_init_ms);
  if (engine) api.litert_lm_engine_delete(engine);
  bench_close();
  unlink(inflight);
  k = snprintf(small, sizeof small, "{\"samples\":%ld}", pending);
  emit("DONE", small, (size_t)k);
  return 0;
}
