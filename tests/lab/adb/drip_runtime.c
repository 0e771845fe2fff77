/* A slow phone, for the device lab (`edgefarm serve`'s streamed answers, docs/serve.md): a liblitert-lm.so
 * that wraps the REAL library, as noisy_runtime.c does (the real one beside it as liblitert-lm-real.so, this
 * library's DT_NEEDED with rpath $ORIGIN, so every function not defined here is the real one). One function
 * is wrapped (compile with -DDRIP_MS=<ms>):
 * - litert_lm_conversation_send_message_stream: for a message naming `drip-me`, the real runtime's callback
 *   is given each piece as it comes, and then the runtime's own decode thread (which calls it) waits DRIP_MS
 *   before its next token: the answer is the real one, DRIP_MS a piece slower, so a client can leave
 *   mid-answer and the real litert_lm_conversation_cancel_process is what stops it (the rule of
 *   tests/lab/local/faulty_runner.py's DRIP_ON for the Python runner). Any other message passes through.
 * Lab code only: the runtime's real behaviour stays the real library's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include <time.h>

#include "litert_lm_c_api.h"
#include "runtime_wrap.h"

#ifndef DRIP_MS
#error "build with -DDRIP_MS=<ms>"
#endif

typedef void (*piece_fn)(void *callback_data, const LiteRtLmStreamChunk *chunk);

static piece_fn callers_callback; /* one stream at a time: the runner answers one request at a time */
static void *callers_data;

static void dripping(void *data, const LiteRtLmStreamChunk *chunk) {
  (void)data;
  __typeof__(&litert_lm_stream_chunk_is_final) is_final = real("litert_lm_stream_chunk_is_final");
  bool last = is_final(chunk);
  callers_callback(callers_data, chunk);
  if (!last) {
    struct timespec wait = {DRIP_MS / 1000, (DRIP_MS % 1000) * 1000000L};
    nanosleep(&wait, NULL);
  }
}

int litert_lm_conversation_send_message_stream(LiteRtLmConversation *conversation, const char *message_json,
                                               const char *extra_context,
                                               const LiteRtLmConversationOptionalArgs *optional_args,
                                               void (*callback)(void *callback_data, const LiteRtLmStreamChunk *chunk),
                                               void *callback_data) {
  __typeof__(&litert_lm_conversation_send_message_stream) send = real("litert_lm_conversation_send_message_stream");
  if (!message_json || !strstr(message_json, "drip-me"))
    return send(conversation, message_json, extra_context, optional_args, callback, callback_data);
  callers_callback = callback, callers_data = callback_data;
  return send(conversation, message_json, extra_context, optional_args, dripping, NULL);
}
