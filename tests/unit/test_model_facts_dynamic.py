"""Model facts of a model exported with a dynamic KV cache (data/models/tiny-text-dynamic.litertlm):
no fixed cache length, so the memory floor counts the cache at the token limit and the bandwidth
bound at the decode's context, where a fixed-cache model counts its whole exported cache."""

from __future__ import annotations

from pathlib import Path

from orchestrator.decode_bound import decode_bytes_per_token
from orchestrator.model_facts import read_model_facts

MODELS = Path(__file__).resolve().parents[2] / "data" / "models"


def test_a_dynamic_cache_has_no_fixed_length_and_is_counted_at_the_context():
    dynamic = read_model_facts(MODELS / "tiny-text-dynamic.litertlm")
    static = read_model_facts(MODELS / "tiny-text.litertlm")
    assert dynamic.kv_cache_tokens is None and static.kv_cache_tokens == 2048
    assert dynamic.kv_bytes_per_token == 1024  # 2 layers x K,V x 4 heads x 16 x f32
    assert dynamic.kv_bytes(8192) == 8 * 2**20
    sig = {t.name: t.shape for s in dynamic.sections for t in s.inputs}
    assert sig["kv_cache_k_0"] == (1, 4, -1, 16) and sig["kv_cache_v_0"] == (1, 4, 16, -1)
    # a decode step reads the cache up to its context, not a fixed length
    grow = decode_bytes_per_token(dynamic, 4000) - decode_bytes_per_token(dynamic, 1000)
    assert grow == 3000 * 1024
    assert decode_bytes_per_token(static, 4000) == decode_bytes_per_token(static, 1000)
