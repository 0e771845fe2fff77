/*
 * edgefarm's native phone runner: ONE LiteRT-LM engine for a whole job, a fresh conversation per
 * sample, on LiteRT-LM's own C API (liblitert-lm.so, dlopen'ed: the litert-lm-api wheels ship it
 * for Android arm64, Linux aarch64 and x86_64; signatures as in the wheel's litert_lm/_ffi.py).
 *
 *   edgefarm_runner --lib LIBLITERT_LM --model M --job JOB.conv --results RESULTS.jsonl
 *                   [--backend cpu|gpu|npu] [--vision-backend cpu] [--audio-backend cpu]
 *                   [--threads N] [--cache-dir D] [--max-num-tokens N] [--sample-timeout-s S]
 *                   [--hook DRIVER.sh] [--state-dir DIR] [--log-level N] [--power-dir DIR]
 *
 * The host renders every sample into the job file (android_runner/conversation.py) as the exact
 * JSON the C API takes, so this program needs no JSON parser: it only escapes strings it writes.
 * Per sample it appends ONE JSON line to RESULTS (one write(2), O_APPEND) keyed by the sample's
 * number `n`, and prints protocol lines on stdout:
 *   EDGEFARM READY {"init_ms":..,"pid":..}   EDGEFARM BEGIN n   EDGEFARM RESULT {...}   EDGEFARM DONE
 * State files in --state-dir (default: the job file's folder): `inflight` holds the number of the
 * sample being run (the driver records a crash for it if we die), `loads.tsv` gets one line per
 * engine load, `samples/<n>/` is where the hook writes its before/after snapshots.
 * --power-dir (a power-supply folder, e.g. /sys/class/power_supply/battery): each watchdog tick
 * (20 ms) and at a sample's start and end, read current_now (else current_avg), voltage_now and
 * status there, and put the RAW trapezoid integral of I*V over the sample in its result line
 * ("power": units and sign are decided on the host, orchestrator/telemetry/energy.py).
 * Exit: 0 done, 2 usage, 3 runtime library unusable, 65 model unloadable, 124 sample timeout.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXIT_USAGE 2
#define EXIT_RUNTIME 3
#define EXIT_MODEL_UNLOADABLE 65 /* android_runner/status.py MODEL_UNLOADABLE_EXIT */
#define EXIT_TIMEOUT 124         /* android_runner/status.py TIMEOUT_EXIT */
#define SAMPLER_TOP_P 2          /* TOP_K (1) and GREEDY (3) fail at send with UNIMPLEMENTED */
#define MAX_TURNS 64

/* ------------------------------------------------------------------ the C API, by dlsym */
typedef void *ptr;
static struct {
  void (*set_min_log_level)(int);
  ptr (*settings_create)(const char *, const char *, const char *, const char *);
  void (*settings_delete)(ptr);
  void (*settings_enable_benchmark)(ptr);
  void (*settings_set_cache_dir)(ptr, const char *);
  void (*settings_set_num_threads)(ptr, int);
  void (*settings_set_max_num_tokens)(ptr, int);
  ptr (*engine_create)(ptr);
  void (*engine_delete)(ptr);
  ptr (*sampler_create)(int);
  void (*sampler_delete)(ptr);
  void (*sampler_top_k)(ptr, int);
  void (*sampler_top_p)(ptr, float);
  void (*sampler_temperature)(ptr, float);
  void (*sampler_seed)(ptr, int);
  ptr (*session_config_create)(void);
  void (*session_config_delete)(ptr);
  void (*session_config_max_output_tokens)(ptr, int);
  void (*session_config_sampler)(ptr, ptr);
  ptr (*conv_config_create)(void);
  void (*conv_config_delete)(ptr);
  void (*conv_config_session)(ptr, ptr);
  void (*conv_config_system)(ptr, const char *);
  void (*conv_config_tools)(ptr, const char *);
  ptr (*conv_create)(ptr, ptr);
  void (*conv_delete)(ptr);
  ptr (*conv_send)(ptr, const char *, const char *, ptr);
  const char *(*response_string)(ptr);
  void (*response_delete)(ptr);
  ptr (*conv_benchmark)(ptr);
  void (*bench_delete)(ptr);
  double (*bench_init_s)(ptr);
  double (*bench_ttft_s)(ptr);
  int (*bench_prefill_turns)(ptr);
  int (*bench_decode_turns)(ptr);
  int (*bench_prefill_tokens_at)(ptr, int);
  int (*bench_decode_tokens_at)(ptr, int);
  double (*bench_prefill_tps_at)(ptr, int);
  double (*bench_decode_tps_at)(ptr, int);
  int (*last_error_code)(void);
  const char *(*last_error_message)(void);
  void (*clear_last_error)(void);
} api;

static const char *load_api(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) return dlerror();
#define SYM(field, name)                              \
  do {                                                \
    *(void **)(&api.field) = dlsym(h, name);          \
    if (!api.field) return "missing symbol " name;    \
  } while (0)
  SYM(set_min_log_level, "litert_lm_set_min_log_level");
  SYM(settings_create, "litert_lm_engine_settings_create");
  SYM(settings_delete, "litert_lm_engine_settings_delete");
  SYM(settings_enable_benchmark, "litert_lm_engine_settings_enable_benchmark");
  SYM(settings_set_cache_dir, "litert_lm_engine_settings_set_cache_dir");
  SYM(settings_set_num_threads, "litert_lm_engine_settings_set_num_threads");
  SYM(settings_set_max_num_tokens, "litert_lm_engine_settings_set_max_num_tokens");
  SYM(engine_create, "litert_lm_engine_create");
  SYM(engine_delete, "litert_lm_engine_delete");
  SYM(sampler_create, "litert_lm_sampler_params_create");
  SYM(sampler_delete, "litert_lm_sampler_params_delete");
  SYM(sampler_top_k, "litert_lm_sampler_params_set_top_k");
  SYM(sampler_top_p, "litert_lm_sampler_params_set_top_p");
  SYM(sampler_temperature, "litert_lm_sampler_params_set_temperature");
  SYM(sampler_seed, "litert_lm_sampler_params_set_seed");
  SYM(session_config_create, "litert_lm_session_config_create");
  SYM(session_config_delete, "litert_lm_session_config_delete");
  SYM(session_config_max_output_tokens, "litert_lm_session_config_set_max_output_tokens");
  SYM(session_config_sampler, "litert_lm_session_config_set_sampler_params");
  SYM(conv_config_create, "litert_lm_conversation_config_create");
  SYM(conv_config_delete, "litert_lm_conversation_config_delete");
  SYM(conv_config_session, "litert_lm_conversation_config_set_session_config");
  SYM(conv_config_system, "litert_lm_conversation_config_set_system_message");
  SYM(conv_config_tools, "litert_lm_conversation_config_set_tools");
  SYM(conv_create, "litert_lm_conversation_create");
  SYM(conv_delete, "litert_lm_conversation_delete");
  SYM(conv_send, "litert_lm_conversation_send_message");
  SYM(response_string, "litert_lm_json_response_get_string");
  SYM(response_delete, "litert_lm_json_response_delete");
  SYM(conv_benchmark, "litert_lm_conversation_get_benchmark_info");
  SYM(bench_delete, "litert_lm_benchmark_info_delete");
  SYM(bench_init_s, "litert_lm_benchmark_info_get_total_init_time_in_second");
  SYM(bench_ttft_s, "litert_lm_benchmark_info_get_time_to_first_token");
  SYM(bench_prefill_turns, "litert_lm_benchmark_info_get_num_prefill_turns");
  SYM(bench_decode_turns, "litert_lm_benchmark_info_get_num_decode_turns");
  SYM(bench_prefill_tokens_at, "litert_lm_benchmark_info_get_prefill_token_count_at");
  SYM(bench_decode_tokens_at, "litert_lm_benchmark_info_get_decode_token_count_at");
  SYM(bench_prefill_tps_at, "litert_lm_benchmark_info_get_prefill_tokens_per_sec_at");
  SYM(bench_decode_tps_at, "litert_lm_benchmark_info_get_decode_tokens_per_sec_at");
  /* exported, per thread; signatures per upstream c/engine.h */
  SYM(last_error_code, "litert_lm_get_last_error_code");
  SYM(last_error_message, "litert_lm_get_last_error_message");
  SYM(clear_last_error, "litert_lm_clear_last_error");
#undef SYM
  return NULL;
}

/* ------------------------------------------------------------------ small helpers */
typedef struct {
  char *buf;
  size_t len, cap;
} sbuf;

static void sb_grow(sbuf *s, size_t more) {
  if (s->len + more + 1 <= s->cap) return;
  size_t cap = s->cap ? s->cap : 1024;
  while (cap < s->len + more + 1) cap *= 2;
  char *b = realloc(s->buf, cap);
  if (!b) _exit(EXIT_RUNTIME);
  s->buf = b;
  s->cap = cap;
}

static void sb_add(sbuf *s, const char *data, size_t n) {
  sb_grow(s, n);
  memcpy(s->buf + s->len, data, n);
  s->len += n;
  s->buf[s->len] = 0;
}

static void sb_printf(sbuf *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  sb_grow(s, (size_t)n);
  va_start(ap, fmt);
  vsnprintf(s->buf + s->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  s->len += (size_t)n;
}

/* A JSON string literal (quotes included); invalid UTF-8 bytes pass through as they are. */
static void sb_json_string(sbuf *s, const char *text) {
  sb_add(s, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)(text ? text : ""); *p; p++) {
    switch (*p) {
      case '"': sb_add(s, "\\\"", 2); break;
      case '\\': sb_add(s, "\\\\", 2); break;
      case '\n': sb_add(s, "\\n", 2); break;
      case '\r': sb_add(s, "\\r", 2); break;
      case '\t': sb_add(s, "\\t", 2); break;
      default:
        if (*p < 0x20) sb_printf(s, "\\u%04x", *p);
        else sb_add(s, (const char *)p, 1);
    }
  }
  sb_add(s, "\"", 1);
}

static void sb_number(sbuf *s, const char *key, double v) {
  if (v != v || v > 1e300 || v < -1e300) sb_printf(s, ",\"%s\":null", key); /* NaN / inf */
  else sb_printf(s, ",\"%s\":%.4f", key, v);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void write_all(int fd, const char *data, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;
    }
    data += w;
    n -= (size_t)w;
  }
}

static void write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  write_all(fd, text, strlen(text));
  close(fd);
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  sbuf s = {0};
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sb_add(&s, chunk, n);
  fclose(f);
  if (!s.buf) sb_grow(&s, 1);
  *len = s.len;
  return s.buf;
}

/* ------------------------------------------------------------------ the job file */
/* "EFJOB 1\n" then per sample:
 *   S <n>\n  Y <len>\n<system>\n  T <len>\n<tools json>\n  P <top_k> <top_p> <temperature> <seed>\n
 *   O <max_output_tokens>\n  M <len>\n<message json>\n (one per turn)  E\n
 * Y and T are optional; byte lengths, so any text goes through untouched. */
typedef struct {
  int n;
  const char *system, *tools;
  int top_k, seed, max_output_tokens;
  float top_p, temperature;
  int turns;
  const char *messages[MAX_TURNS];
} sample;

static char *next_line(char **cur, char *end) {
  char *line = *cur;
  char *nl = memchr(line, '\n', (size_t)(end - line));
  if (!nl) return NULL;
  *nl = 0;
  *cur = nl + 1;
  return line;
}

/* A length-prefixed field: the header line was "<tag> <len>"; the bytes and a newline follow. */
static const char *take_field(char **cur, char *end, const char *header) {
  long len = atol(header + 2);
  if (len < 0 || *cur + len + 1 > end) return NULL;
  char *data = *cur;
  data[len] = 0; /* overwrites the newline after the field */
  *cur += len + 1;
  return data;
}

static int parse_job(char *buf, size_t size, sample **out, int *count, char *why, size_t why_n) {
  char *cur = buf, *end = buf + size;
  char *line = next_line(&cur, end);
  if (!line || strcmp(line, "EFJOB 1") != 0) {
    snprintf(why, why_n, "not an edgefarm job file (no 'EFJOB 1' header)");
    return -1;
  }
  int cap = 64, k = 0;
  sample *list = calloc((size_t)cap, sizeof *list);
  sample *s = NULL;
  while ((line = next_line(&cur, end)) != NULL) {
    if (line[0] == 'S') {
      if (k == cap) {
        cap *= 2;
        list = realloc(list, (size_t)cap * sizeof *list);
      }
      s = &list[k++];
      memset(s, 0, sizeof *s);
      s->n = atoi(line + 2);
      s->top_k = 1;
      s->top_p = 0.95f;
      s->temperature = 1.0f;
    } else if (!s) {
      snprintf(why, why_n, "record before the first sample: %.40s", line);
      return -1;
    } else if (line[0] == 'Y' || line[0] == 'T' || line[0] == 'M') {
      const char *data = take_field(&cur, end, line);
      if (!data) {
        snprintf(why, why_n, "sample %d: field %c runs past the end of the file", s->n, line[0]);
        return -1;
      }
      if (line[0] == 'Y') s->system = data;
      else if (line[0] == 'T') s->tools = data;
      else if (s->turns < MAX_TURNS) s->messages[s->turns++] = data;
    } else if (line[0] == 'P') {
      if (sscanf(line + 2, "%d %f %f %d", &s->top_k, &s->top_p, &s->temperature, &s->seed) != 4) {
        snprintf(why, why_n, "sample %d: bad sampler line", s->n);
        return -1;
      }
    } else if (line[0] == 'O') {
      s->max_output_tokens = atoi(line + 2);
    } else if (line[0] == 'E') {
      s = NULL;
    }
  }
  *out = list;
  *count = k;
  return 0;
}

/* Sample numbers already in the results file (a rerun resumes after them). */
static unsigned char *done_set(const char *path, int max_n, int *torn) {
  unsigned char *done = calloc((size_t)max_n + 2, 1);
  size_t len = 0;
  char *text = read_file(path, &len);
  *torn = 0;
  if (!text) return done;
  if (len > 0 && text[len - 1] != '\n') *torn = 1; /* killed mid-write: start on a new line */
  for (char *p = text; p && *p;) {
    char *nl = strchr(p, '\n');
    if (nl && strncmp(p, "{\"n\":", 5) == 0) {
      int n = atoi(p + 5);
      if (n > 0 && n <= max_n) done[n] = 1;
    }
    p = nl ? nl + 1 : NULL;
  }
  free(text);
  return done;
}

/* ------------------------------------------------------------------ memory peaks and the watchdog */
typedef struct {
  long rss, hwm, anon, file, swap; /* kB */
} mem_kb;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static mem_kb peaks;
static double deadline;   /* monotonic seconds; 0 = no sample running */
static int current_n;     /* sample in flight */
static int finished;      /* the sample's line was written (by the main thread or the watchdog) */
static double timeout_s = 300.0;
static int results_fd = -1;
static double sample_t0;

static void read_status(mem_kb *m) {
  char buf[4096];
  int fd = open("/proc/self/status", O_RDONLY);
  if (fd < 0) return;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return;
  buf[n] = 0;
  static const char *keys[] = {"VmRSS:", "VmHWM:", "RssAnon:", "RssFile:", "VmSwap:"};
  long *dst[] = {&m->rss, &m->hwm, &m->anon, &m->file, &m->swap};
  for (int i = 0; i < 5; i++) {
    char *p = strstr(buf, keys[i]);
    if (!p) continue;
    long v = atol(p + strlen(keys[i]));
    if (v >= 0 && v < (1L << 40)) *dst[i] = v; /* some kernels print overflowed garbage */
  }
}

static void sample_memory(void) {
  mem_kb m = {0};
  read_status(&m);
  pthread_mutex_lock(&lock);
  if (m.rss > peaks.rss) peaks.rss = m.rss;
  if (m.hwm > peaks.hwm) peaks.hwm = m.hwm;
  if (m.anon > peaks.anon) peaks.anon = m.anon;
  if (m.file > peaks.file) peaks.file = m.file;
  if (m.swap > peaks.swap) peaks.swap = m.swap;
  pthread_mutex_unlock(&lock);
}

/* ------------------------------------------------------------------ battery power (raw) */
static char power_current[4200], power_voltage[4200], power_status[4200];
static const char *power_src; /* NULL: no power folder readable */
static struct {
  int on, have, n, pos, neg, charging;
  double integral, i_sum, v_sum, t_first, t_last, i_last, v_last;
} pw;

static int read_number(const char *path, double *out) {
  char buf[64];
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  char *end;
  double v = strtod(buf, &end);
  if (end == buf) return 0;
  *out = v;
  return 1;
}

static void power_setup(const char *dir) {
  if (!dir || !*dir) return;
  double v;
  snprintf(power_voltage, sizeof power_voltage, "%s/voltage_now", dir);
  snprintf(power_status, sizeof power_status, "%s/status", dir);
  snprintf(power_current, sizeof power_current, "%s/current_now", dir);
  if (!read_number(power_voltage, &v)) return;
  if (read_number(power_current, &v)) power_src = "sysfs:current_now";
  else {
    snprintf(power_current, sizeof power_current, "%s/current_avg", dir);
    if (read_number(power_current, &v)) power_src = "sysfs:current_avg";
  }
}

/* One reading; called with `lock` held. */
static void power_tick_locked(void) {
  if (!power_src || !pw.on) return;
  double i, v, t = now_s();
  if (!read_number(power_current, &i) || !read_number(power_voltage, &v)) return;
  char st[32] = {0};
  int fd = open(power_status, O_RDONLY);
  if (fd >= 0) {
    ssize_t k = read(fd, st, sizeof st - 1);
    close(fd);
    if (k > 0 && (strncmp(st, "Charging", 8) == 0 || strncmp(st, "Full", 4) == 0)) pw.charging = 1;
  }
  if (pw.have) pw.integral += (t - pw.t_last) * (pw.i_last * pw.v_last + i * v) / 2.0;
  else pw.t_first = t;
  pw.have = 1;
  pw.t_last = t;
  pw.i_last = i;
  pw.v_last = v;
  pw.n++;
  pw.i_sum += i;
  pw.v_sum += v;
  if (i > 0) pw.pos++;
  else if (i < 0) pw.neg++;
}

static void power_start(void) {
  pthread_mutex_lock(&lock);
  memset(&pw, 0, sizeof pw);
  pw.on = 1;
  power_tick_locked();
  pthread_mutex_unlock(&lock);
}

static void add_power(sbuf *s) {
  pthread_mutex_lock(&lock);
  power_tick_locked();
  pw.on = 0;
  if (power_src && pw.n > 0) {
    sb_printf(s, ",\"power\":{\"kind\":\"iv\",\"integral\":%.9g,\"n\":%d,\"dt_s\":%.6f,\"i_mean\":%.6g,"
              "\"v_mean\":%.6g,\"pos\":%d,\"neg\":%d,\"charging\":%d,\"src\":\"%s\"}", pw.integral, pw.n,
              pw.t_last - pw.t_first, pw.i_sum / pw.n, pw.v_sum / pw.n, pw.pos, pw.neg, pw.charging, power_src);
  }
  pthread_mutex_unlock(&lock);
}

static void add_peaks(sbuf *s, const mem_kb *m) {
  sb_printf(s, ",\"peak_rss_kb\":%ld,\"peak_hwm_kb\":%ld,\"peak_anon_kb\":%ld,\"peak_file_kb\":%ld,"
            "\"peak_swap_kb\":%ld", m->rss, m->hwm, m->anon, m->file, m->swap);
}

static void emit_result(sbuf *line) {
  sb_add(line, "\n", 1);
  write_all(results_fd, line->buf, line->len); /* one write: a kill loses at most this line */
  fputs("EDGEFARM RESULT ", stdout);
  fwrite(line->buf, 1, line->len, stdout);
  fflush(stdout);
}

static void *watchdog(void *arg) {
  (void)arg;
  for (;;) {
    usleep(20000);
    sample_memory();
    pthread_mutex_lock(&lock);
    power_tick_locked();
    int fire = deadline > 0 && !finished && now_s() > deadline;
    if (fire) finished = 1;
    mem_kb m = peaks;
    int n = current_n;
    double wall_ms = (now_s() - sample_t0) * 1000.0;
    pthread_mutex_unlock(&lock);
    if (fire) {
      sbuf s = {0};
      sb_printf(&s, "{\"n\":%d,\"status\":\"timeout\",\"exit_code\":%d,\"error\":", n, EXIT_TIMEOUT);
      char why[96];
      snprintf(why, sizeof why, "no answer within %g s (sample timeout)", timeout_s);
      sb_json_string(&s, why);
      sb_number(&s, "wall_ms", wall_ms);
      add_peaks(&s, &m);
      sb_printf(&s, ",\"pid\":%d}", (int)getpid());
      emit_result(&s);
      _exit(EXIT_TIMEOUT); /* a runtime call cannot be interrupted: the driver restarts us */
    }
  }
  return NULL;
}

/* ------------------------------------------------------------------ one sample */
static const char *hook_path;
static char state_dir[4096];

static void run_hook(int n, const char *phase) {
  if (!hook_path) return;
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/samples/%d", state_dir, n);
  char parent[4200];
  snprintf(parent, sizeof parent, "%s/samples", state_dir);
  mkdir(parent, 0755);
  mkdir(dir, 0755);
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      dup2(devnull, 0);
      dup2(devnull, 1); /* stdout is the protocol stream: keep the hook off it */
    }
    execlp("sh", "sh", hook_path, "hook", dir, phase, (char *)NULL);
    _exit(127);
  }
  if (pid > 0) {
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
  }
}

static const char *error_text(const char *what) {
  static char buf[2048];
  const char *msg = api.last_error_message ? api.last_error_message() : NULL;
  int code = api.last_error_code ? api.last_error_code() : 0;
  if (msg && *msg) snprintf(buf, sizeof buf, "%s (status %d): %s", what, code, msg);
  else snprintf(buf, sizeof buf, "%s (status %d)", what, code);
  return buf;
}

static void run_sample(ptr engine, const sample *s, double init_ms) {
  sbuf line = {0}, turns = {0};
  const char *error = NULL;
  char *response = NULL;
  double ttft_ms = -1.0, infer_ms = 0.0;
  api.clear_last_error();

  ptr sampler = api.sampler_create(SAMPLER_TOP_P);
  api.sampler_top_k(sampler, s->top_k);
  api.sampler_top_p(sampler, s->top_p);
  api.sampler_temperature(sampler, s->temperature);
  api.sampler_seed(sampler, s->seed);
  ptr session = api.session_config_create();
  api.session_config_sampler(session, sampler);
  api.sampler_delete(sampler);
  if (s->max_output_tokens > 0) api.session_config_max_output_tokens(session, s->max_output_tokens);
  ptr config = api.conv_config_create();
  api.conv_config_session(config, session);
  api.session_config_delete(session);
  if (s->system && *s->system) api.conv_config_system(config, s->system);
  if (s->tools && *s->tools) api.conv_config_tools(config, s->tools);
  ptr conv = api.conv_create(engine, config);
  api.conv_config_delete(config);
  if (!conv) error = error_text("the conversation could not be created");

  for (int i = 0; conv && i < s->turns && !error; i++) {
    double t0 = now_s();
    ptr resp = api.conv_send(conv, s->messages[i], "{}", NULL);
    double wall = (now_s() - t0) * 1000.0;
    infer_ms += wall;
    if (!resp) {
      error = error_text("the runtime refused the message");
      break;
    }
    const char *text = api.response_string(resp);
    free(response);
    response = strdup(text ? text : "");
    api.response_delete(resp);
    ptr bench = api.conv_benchmark(conv);
    if (bench) {
      int np = api.bench_prefill_turns(bench), nd = api.bench_decode_turns(bench);
      if (i == 0) ttft_ms = api.bench_ttft_s(bench) * 1000.0;
      sb_printf(&turns, "%s{\"prefill_tokens\":%d", i ? "," : "",
                np > 0 ? api.bench_prefill_tokens_at(bench, np - 1) : 0);
      sb_number(&turns, "prefill_tps", np > 0 ? api.bench_prefill_tps_at(bench, np - 1) : 0.0);
      sb_printf(&turns, ",\"decode_tokens\":%d", nd > 0 ? api.bench_decode_tokens_at(bench, nd - 1) : 0);
      sb_number(&turns, "decode_tps", nd > 0 ? api.bench_decode_tps_at(bench, nd - 1) : 0.0);
      sb_number(&turns, "wall_ms", wall);
      sb_add(&turns, "}", 1);
      api.bench_delete(bench);
    }
  }
  if (conv) api.conv_delete(conv);

  sample_memory();
  sbuf power = {0};
  add_power(&power); /* the last reading closes the integral before the hook's dumpsys calls */
  pthread_mutex_lock(&lock);
  mem_kb m = peaks;
  double wall_ms = (now_s() - sample_t0) * 1000.0;
  pthread_mutex_unlock(&lock);
  run_hook(s->n, "after"); /* before the line: the host reads the snapshots when it sees the result */
  pthread_mutex_lock(&lock);
  int mine = !finished;
  finished = 1;
  pthread_mutex_unlock(&lock);
  if (mine) {
    sb_printf(&line, "{\"n\":%d,\"status\":\"%s\",\"error\":", s->n, error ? "error" : "ok");
    sb_json_string(&line, error ? error : "");
    sb_add(&line, ",\"response\":", 12);
    if (response) sb_json_string(&line, response);
    else sb_add(&line, "null", 4);
    sb_number(&line, "init_ms", init_ms);
    if (ttft_ms >= 0) sb_number(&line, "ttft_ms", ttft_ms);
    sb_number(&line, "infer_ms", infer_ms);
    sb_number(&line, "wall_ms", wall_ms);
    add_peaks(&line, &m);
    if (power.buf) sb_add(&line, power.buf, power.len);
    sb_printf(&line, ",\"turns\":[%s],\"pid\":%d}", turns.buf ? turns.buf : "", (int)getpid());
    emit_result(&line);
  }
  free(response);
  free(power.buf);
  free(line.buf);
  free(turns.buf);
}

/* ------------------------------------------------------------------ main */
static void usage(const char *why) {
  fprintf(stderr, "EDGEFARM FATAL %s\nusage: edgefarm_runner --lib LIB --model M --job JOB.conv --results R "
          "[--backend cpu|gpu|npu] [--vision-backend B] [--audio-backend B] [--threads N] [--cache-dir D] "
          "[--max-num-tokens N] [--sample-timeout-s S] [--hook DRIVER] [--state-dir DIR] [--log-level N] "
          "[--power-dir DIR]\n",
          why);
  exit(EXIT_USAGE);
}

int main(int argc, char **argv) {
  const char *lib = NULL, *model = NULL, *job = NULL, *results = NULL, *backend = "cpu";
  const char *vision = NULL, *audio = NULL, *cache_dir = ":nocache", *state = NULL, *power_dir = NULL;
  int threads = 0, max_num_tokens = 0, log_level = 2;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (strcmp(a, name) == 0 && v && (++i, 1))
    if (OPT("--lib")) lib = v;
    else if (OPT("--model")) model = v;
    else if (OPT("--job")) job = v;
    else if (OPT("--results")) results = v;
    else if (OPT("--backend")) backend = v;
    else if (OPT("--vision-backend")) vision = v;
    else if (OPT("--audio-backend")) audio = v;
    else if (OPT("--threads")) threads = atoi(v);
    else if (OPT("--cache-dir")) cache_dir = v;
    else if (OPT("--max-num-tokens")) max_num_tokens = atoi(v);
    else if (OPT("--sample-timeout-s")) timeout_s = atof(v);
    else if (OPT("--hook")) hook_path = v;
    else if (OPT("--state-dir")) state = v;
    else if (OPT("--log-level")) log_level = atoi(v);
    else if (OPT("--power-dir")) power_dir = v;
    else usage("unknown or incomplete option");
#undef OPT
  }
  if (!lib || !model || !job || !results) usage("--lib, --model, --job and --results are required");
  signal(SIGPIPE, SIG_IGN); /* a host that went away must not kill a sample mid-write */
  if (state) snprintf(state_dir, sizeof state_dir, "%s", state);
  else {
    snprintf(state_dir, sizeof state_dir, "%s", job);
    char *slash = strrchr(state_dir, '/');
    if (slash) *slash = 0;
    else snprintf(state_dir, sizeof state_dir, ".");
  }

  size_t job_len = 0;
  char *job_text = read_file(job, &job_len);
  if (!job_text) {
    fprintf(stderr, "EDGEFARM FATAL cannot read the job file %s: %s\n", job, strerror(errno));
    return EXIT_USAGE;
  }
  sample *samples = NULL;
  int count = 0;
  char why[256];
  if (parse_job(job_text, job_len, &samples, &count, why, sizeof why) != 0) {
    fprintf(stderr, "EDGEFARM FATAL %s: %s\n", job, why);
    return EXIT_USAGE;
  }
  int max_n = 0;
  for (int i = 0; i < count; i++)
    if (samples[i].n > max_n) max_n = samples[i].n;
  int torn = 0;
  unsigned char *done = done_set(results, max_n, &torn);
  results_fd = open(results, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (results_fd < 0) {
    fprintf(stderr, "EDGEFARM FATAL cannot open %s: %s\n", results, strerror(errno));
    return EXIT_USAGE;
  }
  if (torn) write_all(results_fd, "\n", 1);

  const char *bad = load_api(lib);
  if (bad) {
    fprintf(stderr, "EDGEFARM FATAL cannot use the LiteRT-LM runtime library %s: %s\n", lib, bad);
    return EXIT_RUNTIME;
  }
  api.set_min_log_level(log_level);

  power_setup(power_dir);
  pthread_t dog;
  pthread_create(&dog, NULL, watchdog, NULL);

  double t0 = now_s();
  ptr settings = api.settings_create(model, backend, vision, audio);
  if (!settings) {
    printf("EDGEFARM FATAL {\"error\":");
    sbuf e = {0};
    sb_json_string(&e, error_text("engine settings could not be created"));
    printf("%s}\n", e.buf);
    fflush(stdout);
    return EXIT_MODEL_UNLOADABLE;
  }
  api.settings_enable_benchmark(settings);
  api.settings_set_cache_dir(settings, cache_dir);
  if (threads > 0) api.settings_set_num_threads(settings, threads);
  if (max_num_tokens > 0) api.settings_set_max_num_tokens(settings, max_num_tokens);
  ptr engine = api.engine_create(settings);
  api.settings_delete(settings);
  double init_ms = (now_s() - t0) * 1000.0;
  if (!engine) {
    sbuf e = {0};
    sb_json_string(&e, error_text("the engine could not be created from the model"));
    printf("EDGEFARM FATAL {\"error\":%s}\n", e.buf);
    fflush(stdout);
    return EXIT_MODEL_UNLOADABLE;
  }
  char loads[4200], inflight[4200], line[256];
  snprintf(loads, sizeof loads, "%s/loads.tsv", state_dir);
  snprintf(inflight, sizeof inflight, "%s/inflight", state_dir);
  int lfd = open(loads, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (lfd >= 0) {
    snprintf(line, sizeof line, "%d\t%.3f\n", (int)getpid(), init_ms);
    write_all(lfd, line, strlen(line));
    close(lfd);
  }
  int pending = 0;
  for (int i = 0; i < count; i++) pending += !done[samples[i].n];
  printf("EDGEFARM READY {\"init_ms\":%.3f,\"pid\":%d,\"pending\":%d}\n", init_ms, (int)getpid(), pending);
  fflush(stdout);

  for (int i = 0; i < count; i++) {
    const sample *s = &samples[i];
    if (done[s->n]) continue;
    run_hook(s->n, "before");
    snprintf(line, sizeof line, "%d\n", s->n);
    write_file(inflight, line);
    printf("EDGEFARM BEGIN %d\n", s->n);
    fflush(stdout);
    pthread_mutex_lock(&lock);
    memset(&peaks, 0, sizeof peaks);
    current_n = s->n;
    finished = 0;
    sample_t0 = now_s();
    deadline = sample_t0 + timeout_s;
    pthread_mutex_unlock(&lock);
    power_start();
    run_sample(engine, s, init_ms);
    pthread_mutex_lock(&lock);
    deadline = 0;
    pthread_mutex_unlock(&lock);
    write_file(inflight, "");
  }
  api.engine_delete(engine);
  unlink(inflight);
  printf("EDGEFARM DONE {\"samples\":%d}\n", pending);
  fflush(stdout);
  return 0;
}
