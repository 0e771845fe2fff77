"""orchestrator/redact.py: the one redaction of secrets in URLs and settings."""

from __future__ import annotations

import pytest

from orchestrator.redact import is_redacted, redact, redact_tree


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("http://user:PW@host/v1?api_key=KEY", "http://user:***@host/v1?api_key=***"),
        ("https://u:p%40ss@h:8/v1?x=1&token=abc&y=2", "https://u:***@h:8/v1?x=1&token=***&y=2"),
        ("EDGEFARM password=hunter2 more", "EDGEFARM password=*** more"),
        ("Authorization: Bearer sk-0123456789", "Authorization: Bearer ***"),
        ("http://h:8000/v1?keyword=hi&monkey=banana", "http://h:8000/v1?keyword=hi&monkey=banana"),
        ("http://user@host/v1", "http://user@host/v1"),
        ("", ""),
    ],
)
def test_secrets_are_masked_and_the_rest_kept(text, shown):
    assert redact(text) == shown
    assert is_redacted(text) == (text != shown)


def test_a_tree_is_redacted_string_by_string():
    tree = {"judge_url": "http://a:b@c/v1", "limit": 3, "modality": ["text", "x?token=t"]}
    assert redact_tree(tree) == {
        "judge_url": "http://a:***@c/v1",
        "limit": 3,
        "modality": ["text", "x?token=***"],
    }
