#ifndef EDGEFARM_API_H_
#define EDGEFARM_API_H_
/* The LiteRT-LM C API functions the runner calls, in one table: each resolved once from the dlopen'ed
 * runtime (api_bind) and called as api.NAME by every part (edgefarm_runner.c, bench.c, fidelity.c, stream.c). Their
 * types come from litert_lm_c_api.h (checked against the library and upstream's header by build.py).
 * Each function names the parts that need it; a runtime without one of a part's functions still runs the
 * other parts, and that part says which function is missing (api_missing). */
#include "litert_lm_c_api.h"

enum {
  EF_RUN = 1,       /* the dataset runner: conversations (a runtime without these is refused) */
  EF_BENCH = 2,     /* `edgefarm bench`: sessions, tokenizer, the start token (bench.c) */
  EF_SCORING = 4,   /* --fidelity's scoring pass (fidelity.c) */
  EF_TOKENIZER = 8, /* --fidelity's answer token ids (fidelity.c) */
  EF_STREAM = 16,   /* `edgefarm serve`'s streamed answers and their cancel (stream.c) */
};
#define EF_PARTS 5

/* X(name, parts) */
#define EF_API_FUNCTIONS(X)                                                        \
  X(litert_lm_get_last_error_message, EF_RUN | EF_BENCH | EF_SCORING)              \
  X(litert_lm_set_min_log_level, EF_RUN)                                           \
  X(litert_lm_engine_settings_create, EF_RUN | EF_BENCH)                           \
  X(litert_lm_engine_settings_delete, EF_RUN | EF_BENCH)                           \
  X(litert_lm_engine_settings_enable_benchmark, EF_RUN | EF_BENCH)                 \
  X(litert_lm_engine_settings_set_cache_dir, EF_RUN | EF_BENCH)                    \
  X(litert_lm_engine_settings_set_num_threads, EF_RUN | EF_BENCH)                  \
  X(litert_lm_engine_settings_set_max_num_tokens, EF_RUN | EF_BENCH)               \
  X(litert_lm_engine_settings_set_num_decode_tokens, EF_BENCH)                     \
  X(litert_lm_engine_create, EF_RUN | EF_BENCH)                                    \
  X(litert_lm_engine_delete, EF_RUN | EF_BENCH)                                    \
  X(litert_lm_sampler_params_create, EF_RUN)                                       \
  X(litert_lm_sampler_params_delete, EF_RUN)                                       \
  X(litert_lm_sampler_params_set_top_k, EF_RUN)                                    \
  X(litert_lm_sampler_params_set_top_p, EF_RUN)                                    \
  X(litert_lm_sampler_params_set_temperature, EF_RUN)                              \
  X(litert_lm_sampler_params_set_seed, EF_RUN)                                     \
  X(litert_lm_session_config_create, EF_RUN | EF_BENCH | EF_SCORING)               \
  X(litert_lm_session_config_delete, EF_RUN | EF_BENCH | EF_SCORING)               \
  X(litert_lm_session_config_set_max_output_tokens, EF_RUN)                        \
  X(litert_lm_session_config_set_sampler_params, EF_RUN)                           \
  X(litert_lm_session_config_set_apply_prompt_template, EF_BENCH)                  \
  X(litert_lm_conversation_config_create, EF_RUN)                                  \
  X(litert_lm_conversation_config_delete, EF_RUN)                                  \
  X(litert_lm_conversation_config_set_session_config, EF_RUN)                      \
  X(litert_lm_conversation_config_set_system_message, EF_RUN)                      \
  X(litert_lm_conversation_config_set_tools, EF_RUN)                               \
  X(litert_lm_conversation_config_set_messages, EF_RUN)                            \
  X(litert_lm_conversation_create, EF_RUN)                                         \
  X(litert_lm_conversation_delete, EF_RUN)                                         \
  X(litert_lm_conversation_send_message, EF_RUN)                                   \
  X(litert_lm_json_response_get_string, EF_RUN)                                    \
  X(litert_lm_json_response_delete, EF_RUN)                                        \
  X(litert_lm_conversation_send_message_stream, EF_STREAM)                         \
  X(litert_lm_conversation_cancel_process, EF_STREAM)                              \
  X(litert_lm_stream_chunk_get_text, EF_STREAM)                                    \
  X(litert_lm_stream_chunk_is_final, EF_STREAM)                                    \
  X(litert_lm_stream_chunk_get_error, EF_STREAM)                                   \
  X(litert_lm_conversation_get_benchmark_info, EF_RUN)                             \
  X(litert_lm_session_get_benchmark_info, EF_BENCH)                                \
  X(litert_lm_benchmark_info_delete, EF_RUN | EF_BENCH)                            \
  X(litert_lm_benchmark_info_get_time_to_first_token, EF_RUN)                      \
  X(litert_lm_benchmark_info_get_num_prefill_turns, EF_RUN | EF_BENCH)             \
  X(litert_lm_benchmark_info_get_num_decode_turns, EF_RUN | EF_BENCH)              \
  X(litert_lm_benchmark_info_get_prefill_token_count_at, EF_RUN | EF_BENCH)        \
  X(litert_lm_benchmark_info_get_decode_token_count_at, EF_RUN | EF_BENCH)         \
  X(litert_lm_benchmark_info_get_prefill_tokens_per_sec_at, EF_RUN | EF_BENCH)     \
  X(litert_lm_benchmark_info_get_decode_tokens_per_sec_at, EF_RUN | EF_BENCH)      \
  X(litert_lm_engine_create_session, EF_BENCH | EF_SCORING)                        \
  X(litert_lm_session_delete, EF_BENCH | EF_SCORING)                               \
  X(litert_lm_input_data_create, EF_BENCH | EF_SCORING)                            \
  X(litert_lm_input_data_delete, EF_BENCH | EF_SCORING)                            \
  X(litert_lm_session_run_prefill, EF_BENCH | EF_SCORING)                          \
  X(litert_lm_session_run_decode, EF_BENCH)                                        \
  X(litert_lm_session_run_text_scoring, EF_SCORING)                                \
  X(litert_lm_responses_get_num_candidates, EF_SCORING)                            \
  X(litert_lm_responses_has_token_scores_at, EF_SCORING)                           \
  X(litert_lm_responses_get_num_token_scores_at, EF_SCORING)                       \
  X(litert_lm_responses_get_token_scores_at, EF_SCORING)                           \
  X(litert_lm_responses_has_token_length_at, EF_SCORING)                           \
  X(litert_lm_responses_get_token_length_at, EF_SCORING)                           \
  X(litert_lm_responses_delete, EF_BENCH | EF_SCORING)                             \
  X(litert_lm_engine_tokenize, EF_BENCH | EF_TOKENIZER)                            \
  X(litert_lm_tokenize_result_get_tokens, EF_BENCH | EF_TOKENIZER)                 \
  X(litert_lm_tokenize_result_get_num_tokens, EF_BENCH | EF_TOKENIZER)             \
  X(litert_lm_tokenize_result_delete, EF_BENCH | EF_TOKENIZER)                     \
  X(litert_lm_engine_detokenize, EF_BENCH)                                         \
  X(litert_lm_detokenize_result_get_string, EF_BENCH)                              \
  X(litert_lm_detokenize_result_delete, EF_BENCH)                                  \
  X(litert_lm_engine_get_start_token, EF_BENCH)                                    \
  X(litert_lm_token_union_get_type, EF_BENCH)                                      \
  X(litert_lm_token_union_get_ids, EF_BENCH)                                       \
  X(litert_lm_token_union_delete, EF_BENCH)

#define EF_API_MEMBER(name, parts) __typeof__(&name) name;
typedef struct {
  EF_API_FUNCTIONS(EF_API_MEMBER)
} ef_api;
#undef EF_API_MEMBER

extern ef_api api; /* every function, NULL until api_bind found it */

/* Resolve every function in the dlopen'ed runtime `handle` (NULL: none is found). */
void api_bind(void *handle);

/* The first function of `part` (one EF_ flag) the runtime lacks, or NULL when it has them all. */
const char *api_missing(int part);
#endif
