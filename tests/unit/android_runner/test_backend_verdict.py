"""The backend that ran, from the runtime's words at engine creation and later (android_runner/backend.py)."""

from android_runner.backend import classify_backend

# LM runtime/components/sampler_factory.cc:764-768, the 0.18.1 .so's wording
SAMPLER = "GPU sampler unavailable. Falling back to CPU sampling. To use GPU sampling, please make sure ..."
# LM llm_litert_compiled_model_executor_factory.cc:215-217 (seen 0.18.1)
AUX = "NPU backend requested, but TF_LITE_AUX is not packaged in the model. Using the generic path."


def test_a_sampler_fallback_said_at_the_first_session_flags_the_gpu_row():
    engine = classify_backend(["Creating LiteRT environment with options"], "gpu", answered=True)
    assert (engine.ran, engine.failure, engine.flags) == ("gpu", "", ())
    later = engine.merged(classify_backend([SAMPLER], "gpu", answered=True))
    assert (later.ran, later.failure, later.flags) == ("gpu", "", ("gpu_sampler_cpu_fallback",))
    assert later.merged(classify_backend([SAMPLER], "gpu", answered=True)) == later  # said again: same


def test_an_npu_request_that_ran_on_the_cpu_is_a_fallback_and_stays_one():
    engine = classify_backend([AUX], "npu", answered=True)
    assert (engine.ran, engine.failure) == ("cpu", "backend_fallback") and AUX in engine.evidence
    assert engine.merged(classify_backend(["nothing"], "npu", answered=True)).fell_back


def test_registry_warnings_of_other_backends_do_not_touch_a_cpu_run():
    lines = ["GPU accelerator could not be loaded and registered.", "NPU accelerator could not be loaded: x"]
    v = classify_backend(lines, "cpu", answered=True)
    assert (v.ran, v.failure, v.flags) == ("cpu", "", ())
    assert classify_backend(lines, "gpu", answered=False).failure == "gpu_unavailable"
    assert classify_backend(lines, "gpu", answered=True).ran == "cpu"  # answered anyway: on the CPU


def test_the_python_apis_npu_refusal_is_a_missing_npu_not_a_broken_model():
    """litert-lm-api 0.18.1 raises it before any engine off Windows (litert_lm/interfaces.py)."""
    from android_runner.backend import BACKEND_UNAVAILABLE_KINDS, engine_failure

    said = "RuntimeError: NPU is supported only for Intel OpenVINO on Windows. Current platform is 'linux'."
    kind, words = engine_failure("", "npu", said)
    assert kind == "npu_dispatch_missing" and kind in BACKEND_UNAVAILABLE_KINDS and "OpenVINO" in words
