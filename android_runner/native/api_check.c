/*
 * Compiled only where upstream's c/engine.h is at hand (android_runner/native/build.py
 * check_against_upstream): upstream's header first, then edgefarm's own declarations. A function whose
 * declared signature differs from upstream's is a "conflicting types" error; an enum value that differs
 * fails its static assertion. The streaming callback's type is spelled out in our declaration of
 * litert_lm_conversation_send_message_stream, so a callback of another shape upstream conflicts there too.
 * Nothing here is linked into the runner.
 */
#include "engine.h" /* upstream's, from EDGEFARM_LITERT_LM_SRC/c or the cache: never in this repository */
#if __has_include("conversation.h") /* upstream from 2026-08 on: the conversation functions have a header of their own */
#include "conversation.h"
#endif
#include "litert_lm_c_api.h"

#define EF_ASSERT_SAME(name, value) _Static_assert((name) == (value), #name " is not " #value " upstream");
EF_SAMPLER_TYPES(EF_ASSERT_SAME)
EF_LOG_SEVERITIES(EF_ASSERT_SAME)
EF_INPUT_DATA_TYPES(EF_ASSERT_SAME)
EF_TOKEN_UNION_TYPES(EF_ASSERT_SAME)
#undef EF_ASSERT_SAME

int edgefarm_api_check_compiled(void);
int edgefarm_api_check_compiled(void) { return 1; }
