"""scoring/judge.py `endpoint`: the chat-completions URL and its auth from a --judge URL."""

from __future__ import annotations

import pytest

from orchestrator.errors import ConfigError
from orchestrator.scoring.judge import JudgeConfig, endpoint


def test_the_path_is_joined_before_the_query_and_userinfo_becomes_basic_auth():
    url, headers = endpoint(JudgeConfig("http://user:p%40ss@h:8/v1/?api_key=K", "m"))
    assert url == "http://h:8/v1/chat/completions?api_key=K"
    assert headers == {"Authorization": "Basic dXNlcjpwQHNz"}  # user:p@ss
    assert endpoint(JudgeConfig("http://h/v1", "m", api_key="T")) == (
        "http://h/v1/chat/completions",
        {"Authorization": "Bearer T"},
    )


def test_userinfo_and_an_api_key_together_are_refused_without_the_password():
    with pytest.raises(ConfigError) as e:
        endpoint(JudgeConfig("http://user:PW@h/v1", "m", api_key="T"))
    assert "PW" not in str(e.value) and "fix:" in str(e.value)
