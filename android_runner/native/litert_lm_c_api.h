/*
 * edgefarm's own declarations of the LiteRT-LM C API functions the native runner calls (and the types
 * they take), written for this project from the runtime's documented interface, so the runner builds
 * anywhere with nothing but a C compiler: no upstream file is needed or copied.
 *
 * Two checks keep them honest (android_runner/native/build.py):
 * - every function declared here must be exported by the pinned liblitert-lm.so (its ELF dynamic
 *   symbols, read at every build of the runner): a name the library lacks stops the build;
 * - where upstream's c/engine.h is at hand (EDGEFARM_LITERT_LM_SRC=<LiteRT-LM checkout>, or
 *   $EDGEFARM_CACHE_DIR/litert-lm/c/engine.h), api_check.c is compiled with upstream's header first and
 *   this one after it: a declaration whose signature differs is a "conflicting types" compile error,
 *   and every enum value below is asserted equal to upstream's.
 * When upstream's header was included first its types are used and this file adds only declarations.
 */
#ifndef EDGEFARM_LITERT_LM_C_API_H_
#define EDGEFARM_LITERT_LM_C_API_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Enum values as the runtime defines them: X(name, value). api_check.c asserts each against upstream. */
#define EF_SAMPLER_TYPES(X) X(kLiteRtLmSamplerTypeTopK, 1) X(kLiteRtLmSamplerTypeTopP, 2) X(kLiteRtLmSamplerTypeGreedy, 3)
#define EF_LOG_SEVERITIES(X)                                                                           \
  X(kLiteRtLmLogSeverityVerbose, 0) X(kLiteRtLmLogSeverityDebug, 1) X(kLiteRtLmLogSeverityInfo, 2)     \
  X(kLiteRtLmLogSeverityWarning, 3) X(kLiteRtLmLogSeverityError, 4) X(kLiteRtLmLogSeverityFatal, 5)    \
  X(kLiteRtLmLogSeveritySilent, 1000)
#define EF_INPUT_DATA_TYPES(X)                                                                         \
  X(kLiteRtLmInputDataTypeText, 0) X(kLiteRtLmInputDataTypeImage, 1) X(kLiteRtLmInputDataTypeImageEnd, 2) \
  X(kLiteRtLmInputDataTypeAudio, 3) X(kLiteRtLmInputDataTypeAudioEnd, 4)
#define EF_TOKEN_UNION_TYPES(X) X(kLiteRtLmTokenUnionTypeString, 0) X(kLiteRtLmTokenUnionTypeIds, 1)

#ifndef THIRD_PARTY_ODML_LITERT_LM_C_ENGINE_H_ /* upstream's include guard: its types when it is there */
#define EF_ENUM_ITEM(name, value) name = value,
typedef enum { EF_SAMPLER_TYPES(EF_ENUM_ITEM) } LiteRtLmSamplerType;
typedef enum { EF_LOG_SEVERITIES(EF_ENUM_ITEM) } LiteRtLmLogSeverity;
typedef enum { EF_INPUT_DATA_TYPES(EF_ENUM_ITEM) } LiteRtLmInputDataType;
typedef enum { EF_TOKEN_UNION_TYPES(EF_ENUM_ITEM) } LiteRtLmTokenUnionType;
#undef EF_ENUM_ITEM

/* Opaque handles: the runtime owns their layout. */
typedef struct LiteRtLmEngine LiteRtLmEngine;
typedef struct LiteRtLmEngineSettings LiteRtLmEngineSettings;
typedef struct LiteRtLmSession LiteRtLmSession;
typedef struct LiteRtLmSessionConfig LiteRtLmSessionConfig;
typedef struct LiteRtLmSamplerParams LiteRtLmSamplerParams;
typedef struct LiteRtLmConversation LiteRtLmConversation;
typedef struct LiteRtLmConversationConfig LiteRtLmConversationConfig;
typedef struct LiteRtLmConversationOptionalArgs LiteRtLmConversationOptionalArgs;
typedef struct LiteRtLmJsonResponse LiteRtLmJsonResponse;
typedef struct LiteRtLmResponses LiteRtLmResponses;
typedef struct LiteRtLmBenchmarkInfo LiteRtLmBenchmarkInfo;
typedef struct LiteRtLmInputData LiteRtLmInputData;
typedef struct LiteRtLmTokenizeResult LiteRtLmTokenizeResult;
typedef struct LiteRtLmDetokenizeResult LiteRtLmDetokenizeResult;
typedef struct LiteRtLmTokenUnion LiteRtLmTokenUnion;
typedef struct LiteRtLmStreamChunk LiteRtLmStreamChunk; /* one piece of a streamed answer, the runtime's */
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Errors and logging. The last error is per thread; every other call clears it on entry. */
const char *litert_lm_get_last_error_message(void);
void litert_lm_set_min_log_level(LiteRtLmLogSeverity level);

/* Engine. */
LiteRtLmEngineSettings *litert_lm_engine_settings_create(const char *model_path, const char *backend_str,
                                                         const char *vision_backend_str,
                                                         const char *audio_backend_str);
void litert_lm_engine_settings_delete(LiteRtLmEngineSettings *settings);
void litert_lm_engine_settings_enable_benchmark(LiteRtLmEngineSettings *settings);
void litert_lm_engine_settings_set_cache_dir(LiteRtLmEngineSettings *settings, const char *cache_dir);
void litert_lm_engine_settings_set_num_threads(LiteRtLmEngineSettings *settings, int num_threads);
void litert_lm_engine_settings_set_max_num_tokens(LiteRtLmEngineSettings *settings, int max_num_tokens);
LiteRtLmEngine *litert_lm_engine_create(const LiteRtLmEngineSettings *settings);
void litert_lm_engine_delete(LiteRtLmEngine *engine);

/* Sampler and session configuration. */
LiteRtLmSamplerParams *litert_lm_sampler_params_create(LiteRtLmSamplerType type);
void litert_lm_sampler_params_delete(LiteRtLmSamplerParams *params);
void litert_lm_sampler_params_set_top_k(LiteRtLmSamplerParams *params, int32_t top_k);
void litert_lm_sampler_params_set_top_p(LiteRtLmSamplerParams *params, float top_p);
void litert_lm_sampler_params_set_temperature(LiteRtLmSamplerParams *params, float temperature);
void litert_lm_sampler_params_set_seed(LiteRtLmSamplerParams *params, int32_t seed);
LiteRtLmSessionConfig *litert_lm_session_config_create(void);
void litert_lm_session_config_delete(LiteRtLmSessionConfig *config);
void litert_lm_session_config_set_max_output_tokens(LiteRtLmSessionConfig *config, int max_output_tokens);
void litert_lm_session_config_set_sampler_params(LiteRtLmSessionConfig *config,
                                                 const LiteRtLmSamplerParams *sampler_params);

/* Conversations (one per sample). */
LiteRtLmConversationConfig *litert_lm_conversation_config_create(void);
void litert_lm_conversation_config_delete(LiteRtLmConversationConfig *config);
void litert_lm_conversation_config_set_session_config(LiteRtLmConversationConfig *config,
                                                      const LiteRtLmSessionConfig *session_config);
void litert_lm_conversation_config_set_system_message(LiteRtLmConversationConfig *config,
                                                      const char *system_message_json);
void litert_lm_conversation_config_set_tools(LiteRtLmConversationConfig *config, const char *tools_json);
void litert_lm_conversation_config_set_messages(LiteRtLmConversationConfig *config, const char *messages_json);
LiteRtLmConversation *litert_lm_conversation_create(LiteRtLmEngine *engine, LiteRtLmConversationConfig *config);
void litert_lm_conversation_delete(LiteRtLmConversation *conversation);
LiteRtLmJsonResponse *litert_lm_conversation_send_message(LiteRtLmConversation *conversation,
                                                          const char *message_json, const char *extra_context,
                                                          const LiteRtLmConversationOptionalArgs *optional_args);
const char *litert_lm_json_response_get_string(const LiteRtLmJsonResponse *response);
void litert_lm_json_response_delete(LiteRtLmJsonResponse *response);

/* The same send in the runtime's streaming form (`edgefarm serve`, a streamed request: stream.c). It returns
 * at once (0: started); the runtime then calls `callback` from a thread of its own with each piece (a chunk
 * whose text is a reply JSON of that piece), and last with a final chunk (no text; an error text when the
 * answer failed or was cancelled). A chunk lives for its call only. The callback's type is spelled out here,
 * not named: where upstream's header is included first (api_check.c), a callback of another shape makes
 * this declaration conflict with upstream's. cancel_process stops the conversation's answer in progress. */
int litert_lm_conversation_send_message_stream(LiteRtLmConversation *conversation, const char *message_json,
                                               const char *extra_context,
                                               const LiteRtLmConversationOptionalArgs *optional_args,
                                               void (*callback)(void *callback_data, const LiteRtLmStreamChunk *chunk),
                                               void *callback_data);
void litert_lm_conversation_cancel_process(LiteRtLmConversation *conversation);
const char *litert_lm_stream_chunk_get_text(const LiteRtLmStreamChunk *chunk);
bool litert_lm_stream_chunk_is_final(const LiteRtLmStreamChunk *chunk);
const char *litert_lm_stream_chunk_get_error(const LiteRtLmStreamChunk *chunk);

/* Per-turn figures of the runtime's own benchmark. */
LiteRtLmBenchmarkInfo *litert_lm_conversation_get_benchmark_info(LiteRtLmConversation *conversation);
void litert_lm_benchmark_info_delete(LiteRtLmBenchmarkInfo *benchmark_info);
double litert_lm_benchmark_info_get_time_to_first_token(const LiteRtLmBenchmarkInfo *benchmark_info);
int litert_lm_benchmark_info_get_num_prefill_turns(const LiteRtLmBenchmarkInfo *benchmark_info);
int litert_lm_benchmark_info_get_num_decode_turns(const LiteRtLmBenchmarkInfo *benchmark_info);
int litert_lm_benchmark_info_get_prefill_token_count_at(const LiteRtLmBenchmarkInfo *benchmark_info, int index);
int litert_lm_benchmark_info_get_decode_token_count_at(const LiteRtLmBenchmarkInfo *benchmark_info, int index);
double litert_lm_benchmark_info_get_prefill_tokens_per_sec_at(const LiteRtLmBenchmarkInfo *benchmark_info,
                                                              int index);
double litert_lm_benchmark_info_get_decode_tokens_per_sec_at(const LiteRtLmBenchmarkInfo *benchmark_info,
                                                             int index);

/* Sessions, text scoring and the tokenizer (--fidelity: fidelity.c; `edgefarm bench`: bench.c). */
void litert_lm_engine_settings_set_num_prefill_tokens(LiteRtLmEngineSettings *settings, int num_prefill_tokens);
void litert_lm_engine_settings_set_num_decode_tokens(LiteRtLmEngineSettings *settings, int num_decode_tokens);
void litert_lm_session_config_set_apply_prompt_template(LiteRtLmSessionConfig *config, bool apply_prompt_template);
LiteRtLmSession *litert_lm_engine_create_session(LiteRtLmEngine *engine, LiteRtLmSessionConfig *config);
void litert_lm_session_delete(LiteRtLmSession *session);
LiteRtLmInputData *litert_lm_input_data_create(LiteRtLmInputDataType type, const void *data, size_t size);
void litert_lm_input_data_delete(LiteRtLmInputData *input_data);
int litert_lm_session_run_prefill(LiteRtLmSession *session, const LiteRtLmInputData *const *inputs,
                                  size_t num_inputs);
LiteRtLmResponses *litert_lm_session_run_text_scoring(LiteRtLmSession *session, const char **target_text,
                                                      size_t num_targets, bool store_token_lengths);
int litert_lm_responses_get_num_candidates(const LiteRtLmResponses *responses);
float litert_lm_responses_get_score_at(const LiteRtLmResponses *responses, int index);
bool litert_lm_responses_has_token_scores_at(const LiteRtLmResponses *responses, int index);
int litert_lm_responses_get_num_token_scores_at(const LiteRtLmResponses *responses, int index);
const float *litert_lm_responses_get_token_scores_at(const LiteRtLmResponses *responses, int index);
bool litert_lm_responses_has_token_length_at(const LiteRtLmResponses *responses, int index);
int litert_lm_responses_get_token_length_at(const LiteRtLmResponses *responses, int index);
void litert_lm_responses_delete(LiteRtLmResponses *responses);
LiteRtLmTokenizeResult *litert_lm_engine_tokenize(LiteRtLmEngine *engine, const char *text);
const int *litert_lm_tokenize_result_get_tokens(const LiteRtLmTokenizeResult *tokenize_result);
size_t litert_lm_tokenize_result_get_num_tokens(const LiteRtLmTokenizeResult *tokenize_result);
void litert_lm_tokenize_result_delete(LiteRtLmTokenizeResult *tokenize_result);
LiteRtLmResponses *litert_lm_session_run_decode(LiteRtLmSession *session);
LiteRtLmBenchmarkInfo *litert_lm_session_get_benchmark_info(LiteRtLmSession *session);
LiteRtLmDetokenizeResult *litert_lm_engine_detokenize(LiteRtLmEngine *engine, const int *token_ids, size_t num_tokens);
const char *litert_lm_detokenize_result_get_string(const LiteRtLmDetokenizeResult *result);
void litert_lm_detokenize_result_delete(LiteRtLmDetokenizeResult *result);
LiteRtLmTokenUnion *litert_lm_engine_get_start_token(LiteRtLmEngine *engine);
LiteRtLmTokenUnionType litert_lm_token_union_get_type(const LiteRtLmTokenUnion *token_union);
int litert_lm_token_union_get_ids(const LiteRtLmTokenUnion *token_union, const int **ids, size_t *num_ids);
void litert_lm_token_union_delete(LiteRtLmTokenUnion *token_union);

#ifdef __cplusplus
}
#endif

#endif /* EDGEFARM_LITERT_LM_C_API_H_ */
