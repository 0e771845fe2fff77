"""Preflight against the predicted memory floor (weights + KV cache at the token limit)."""

from orchestrator.devices.types import DeviceInfo
from orchestrator.model_facts import ModelFacts, SectionFacts
from orchestrator.runners.android_driver import preflight

GB = 2**30


def _facts(weights: int, kv_per_token: float, tokens: int) -> ModelFacts:
    sec = SectionFacts("tf_lite_prefill_decode", weights, weights, {"INT4": weights}, "INT4", (), ())
    return ModelFacts((sec,), kv_cache_tokens=tokens, kv_bytes_per_token=kv_per_token)


def test_the_floor_grows_with_the_token_limit_and_is_checked_against_ram():
    facts = _facts(int(2.9 * GB), 64 * 1024, 32768)  # 2.9 GB of weights, 64 KiB of K+V per token
    assert facts.kv_bytes(4096) == 4096 * 64 * 1024 and facts.kv_bytes(None) == 32768 * 64 * 1024
    phone = DeviceInfo(name="p", kind="adb", ram_mb=6 * 1024, free_storage_mb=50_000)
    assert preflight(phone, int(2.9 * GB), floor_bytes=facts.floor_bytes(4096)) == ""  # 3.2 GB < 4.8 GB
    why = preflight(phone, int(2.9 * GB), floor_bytes=facts.floor_bytes(32768))  # 4.9 GB: over 80% of 6 GB
    assert "needs at least 5017.6 MB" in why and "6144.0 MB" in why
    assert (
        preflight(DeviceInfo(name="p", kind="adb"), int(2.9 * GB), floor_bytes=10 * GB) == ""
    )  # RAM unknown


def test_boards_use_the_same_floor_check():
    from orchestrator.model_facts import memory_refusal

    floor = _facts(int(2.9 * GB), 64 * 1024, 32768).floor_bytes(None)  # 4.9 GB
    assert "over 80% of this device's RAM (4096.0 MB)" in memory_refusal(4096.0, floor)  # a 4 GB Pi 5
    assert memory_refusal(8192.0, floor) == "" and memory_refusal(None, floor) == ""
