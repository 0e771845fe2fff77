#ifndef EDGEFARM_STREAM_H_
#define EDGEFARM_STREAM_H_
/* `edgefarm serve`'s streamed answer on a phone: the request's last turn sent with the C API's streaming
 * call (litert_lm_conversation_send_message_stream), each piece of the answer an
 * `EDGEFARM PIECE {"id":"<n>","text":...}` line the moment the runtime gives it (the Python runner's PIECE
 * line, android_runner/litert_runner.py), and the host's cancel mark watched meanwhile: a client that went
 * away stops the answer (litert_lm_conversation_cancel_process), so the phone is free for the next request. */
#include "litert_lm_c_api.h"
#include "text.h"

typedef struct {
  sbuf text;       /* the answer: every piece's text, joined, bytes as the runtime gave them */
  int cancelled;   /* the cancel mark was seen and the runtime told to stop (its answer so far is in text) */
  double wall_ms;  /* from the send to the runtime's final chunk */
} streamed;

/* Send `message` on `conv` and wait for the runtime's final chunk. `id` names the request on PIECE lines;
 * while it waits, the file `cancel_mark` (the host pushes it when the client went away) is looked for at
 * every piece and every STREAM_POLL_MS. 0 when the answer ended (whole, or cancelled); -1 when the runtime
 * refused to start it or ended it with an error, its words in `error` (a JSON string, as the row's). */
int stream_turn(LiteRtLmConversation *conv, const char *message, long id, const char *cancel_mark, streamed *out,
                sbuf *error);
#endif
