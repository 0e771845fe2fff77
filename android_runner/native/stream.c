/* The streamed answer of a served request (stream.h). */
#define _GNU_SOURCE
#include "stream.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "io.h"
#include "reply.h"

#define STREAM_POLL_MS 20  /* the cancel mark is looked for at least this often while no piece comes */
#define PIECE_MAX_DEPTH 32 /* a piece's reply JSON is read as a whole reply is (edgefarm_runner.c REPLY_MAX_DEPTH) */

/* The one stream in flight (the runner answers one request at a time): what the runtime's thread (on_piece)
 * and the waiting thread share, under its lock. `round` tells a stray chunk of an earlier stream from this
 * one's: the runtime is given the round as its callback data. */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  uintptr_t round;
  long id;
  int final, cancelled, not_text;
  size_t sent; /* text[0..sent) is on PIECE lines; the rest waits for a character's last byte */
  sbuf text, error;
} st = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};

/* How much of p[0..n) ends on a character boundary: a last character whose bytes have not all come yet (a
 * token may end inside one) is held for the next piece, so a PIECE line never splits a character. */
static size_t whole_characters(const unsigned char *p, size_t n) {
  for (size_t back = 1; back <= 3 && back <= n; back++) {
    unsigned char c = p[n - back];
    if ((c & 0xC0) == 0x80) continue; /* a continuation byte: look further back for its lead */
    size_t need = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 1;
    return need > back ? n - back : n;
  }
  return n;
}

/* Text[sent..upto) as one PIECE line; called under the lock. */
static void send_piece(size_t upto) {
  if (upto <= st.sent) return;
  sbuf line = {0};
  sb_printf(&line, "{\"id\":\"%ld\",\"text\":", st.id);
  sb_json_text(&line, st.text.buf + st.sent, upto - st.sent, 0, NULL, NULL);
  sb_str(&line, "}");
  emit("PIECE", line.buf, line.len);
  free(line.buf);
  st.sent = upto;
}

/* The runtime's callback, on its own thread: a piece's text is sent the moment it comes. */
static void on_piece(void *round, const LiteRtLmStreamChunk *chunk) {
  pthread_mutex_lock(&st.lock);
  if ((uintptr_t)round == st.round && !st.final) {
    const char *reply = api.litert_lm_stream_chunk_get_text(chunk);
    if (reply && *reply && !st.cancelled) { /* after a cancel the host reads no more pieces (litert_runner.py) */
      if (reply_text(reply, strlen(reply), PIECE_MAX_DEPTH, &st.text) == 0)
        send_piece(st.sent + whole_characters((const unsigned char *)st.text.buf + st.sent, st.text.len - st.sent));
      else
        st.not_text = 1;
    }
    if (api.litert_lm_stream_chunk_is_final(chunk)) {
      const char *err = api.litert_lm_stream_chunk_get_error(chunk);
      if (err && *err) sb_str(&st.error, err);
      if (!st.cancelled) send_piece(st.text.len); /* a character left incomplete at the end: the JSON writer's U+FFFD */
      st.final = 1;
    }
    pthread_cond_broadcast(&st.changed);
  }
  pthread_mutex_unlock(&st.lock);
}

static void wait_a_moment(void) { /* under the lock: until a chunk comes or STREAM_POLL_MS pass */
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_nsec += STREAM_POLL_MS * 1000000L;
  if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
  pthread_cond_timedwait(&st.changed, &st.lock, &until);
}

int stream_turn(LiteRtLmConversation *conv, const char *message, long id, const char *cancel_mark, streamed *out,
                sbuf *error) {
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&st.lock);
  uintptr_t round = ++st.round;
  st.id = id;
  st.final = st.cancelled = st.not_text = 0;
  st.sent = st.text.len = st.error.len = 0;
  pthread_mutex_unlock(&st.lock);
  double t0 = now_s();
  int rc = api.litert_lm_conversation_send_message_stream(conv, message, "{}", NULL, on_piece, (void *)round);
  if (rc != 0) {
    const char *msg = api.litert_lm_get_last_error_message();
    sbuf t = {0};
    sb_printf(&t, "the runtime refused the message (its streaming call, code %d)", rc);
    if (msg && *msg) sb_str(&t, ": "), sb_str(&t, msg);
    sb_json_string(error, t.buf);
    free(t.buf);
    return -1;
  }
  pthread_mutex_lock(&st.lock);
  while (!st.final) {
    if (!st.cancelled && cancel_mark && access(cancel_mark, F_OK) == 0) {
      st.cancelled = 1; /* no more pieces from now on */
      pthread_mutex_unlock(&st.lock);
      api.litert_lm_conversation_cancel_process(conv); /* the runtime ends the answer with a final chunk */
      pthread_mutex_lock(&st.lock);
      continue;
    }
    wait_a_moment();
  }
  out->wall_ms = (now_s() - t0) * 1000.0;
  out->cancelled = st.cancelled;
  sb_add(&out->text, st.text.buf ? st.text.buf : "", st.text.len);
  int failed = 0;
  if (st.not_text) {
    sb_json_string(error, "a piece of the streamed answer is not a plain text reply (a tool call?): not read");
    failed = 1;
  } else if (st.error.len && !st.cancelled) { /* after a cancel the runtime's final words are its CANCELLED */
    sbuf t = {0};
    sb_str(&t, "the runtime failed the streamed answer: ");
    sb_add(&t, st.error.buf, st.error.len);
    sb_json_string(error, t.buf);
    free(t.buf);
    failed = 1;
  }
  pthread_mutex_unlock(&st.lock);
  return failed ? -1 : 0;
}
