"""OpenAI request bodies -> Ask: each field, each bound (named with its flag), the refusals."""

from __future__ import annotations

import base64

import pytest

from orchestrator.serve.api import (
    GREEDY,
    SAMPLING_TOP_K,
    ApiError,
    Bounds,
    has_media,
    parse_chat,
    parse_completion,
)

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 64).decode()


DEFAULT = Bounds()


def chat(tmp_path, bounds=DEFAULT, **body):
    return parse_chat({"model": "m/cpu", **body}, bounds, tmp_path, "req-1")


def refused(tmp_path, bounds=DEFAULT, **body) -> ApiError:
    with pytest.raises(ApiError) as e:
        chat(tmp_path, bounds, **body)
    return e.value


def test_history_system_and_media_become_the_runs_sample(tmp_path):
    ask = chat(tmp_path, messages=[
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "keep kiwi"},
        {"role": "assistant", "content": [{"type": "text", "text": "kept"}]},
        {"role": "user", "content": [{"type": "text", "text": "what?"},
                                     {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                                     {"type": "input_audio", "input_audio": {"data": PNG, "format": "wav"}}]},
    ], max_tokens=7)  # fmt: skip
    s = ask.sample
    assert s.system == "be brief" and ask.history_roles == ("user", "assistant") and len(s.turns) == 3
    image, audio = s.turns[-1].parts[1:]
    assert (
        image.kind == "image"
        and image.path.parent == tmp_path
        and image.path.read_bytes().startswith(b"\x89PNG")
    )
    assert audio.kind == "audio" and audio.path.suffix == ".wav"
    assert s.max_output_tokens == 7 and ask.max_tokens == 7 and ask.sampler == GREEDY and not ask.stream


def test_sampler_greedy_unless_a_temperature(tmp_path):
    hi = [{"role": "user", "content": "hi"}]
    assert chat(tmp_path, messages=hi, temperature=0, seed=5).sampler == {**GREEDY, "seed": 5}
    hot = chat(tmp_path, messages=hi, temperature=0.7, top_p=0.5, seed=3).sampler
    assert hot == {"top_k": SAMPLING_TOP_K, "top_p": 0.5, "temperature": 0.7, "seed": 3}


def test_bounds_name_themselves_and_their_flag(tmp_path):
    small = Bounds(messages_max=2, media_max=1, max_tokens_max=10, text_max_chars=5, media_max_bytes=8)
    hi = [{"role": "user", "content": "hi"}]
    e = refused(tmp_path, small, messages=hi * 3)
    assert e.status == 400 and "--messages-max" in e.message and "2 messages" in e.message
    e = refused(tmp_path, small, messages=hi, max_tokens=11)
    assert e.status == 400 and "--max-tokens-max" in e.message
    e = refused(tmp_path, small, messages=[{"role": "user", "content": "123456"}])
    assert e.status == 400 and "--text-max-chars" in e.message
    img = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
    e = refused(tmp_path, small, messages=[{"role": "user", "content": [img]}])
    assert e.status == 413 and "--media-max-mb" in e.message
    e = refused(tmp_path, Bounds(media_max=1), messages=[{"role": "user", "content": [img, img]}])
    assert e.status == 400 and "--media-max" in e.message


@pytest.mark.parametrize("url", ["file:///etc/passwd", "/etc/passwd", "../x.png", "http://h/x.png",
                                 "data:text/plain;base64,aGk="])  # fmt: skip
def test_no_request_names_a_host_file(tmp_path, url):
    e = refused(
        tmp_path, messages=[{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}]
    )
    assert e.status == 400 and e.param.endswith("image_url")
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(("body", "param"), [
    ({"n": 2}, "n"), ({"tools": [{"type": "function"}]}, "tools"), ({"logprobs": True}, "logprobs"),
    ({"stream": "yes"}, "stream"), ({"temperature": 3}, "temperature"), ({"model": ""}, "model"),
])  # fmt: skip
def test_unsupported_or_malformed_fields_are_refused_by_name(tmp_path, body, param):
    e = refused(tmp_path, messages=[{"role": "user", "content": "hi"}], **body)
    assert e.status == 400 and e.param == param and e.body()["error"]["param"] == param


def test_the_last_message_is_the_users_and_roles_are_checked(tmp_path):
    assert "last message" in refused(tmp_path, messages=[{"role": "assistant", "content": "x"}]).message
    assert "role" in refused(tmp_path, messages=[{"role": "tool", "content": "x"}]).message
    late = [
        {"role": "user", "content": "a"},
        {"role": "system", "content": "b"},
        {"role": "user", "content": "c"},
    ]
    assert "system" in refused(tmp_path, messages=late).message


def test_completions_take_one_prompt():
    ask = parse_completion(
        {"model": "m/cpu", "prompt": ["edgefarm ping"], "max_tokens": 3}, Bounds(), "req-2"
    )
    assert not ask.chat and ask.sample.turns[0].text == "edgefarm ping" and ask.max_tokens == 3
    with pytest.raises(ApiError) as e:
        parse_completion({"model": "m/cpu", "prompt": ["a", "b"]}, Bounds(), "req-3")
    assert e.value.param == "prompt"


def test_only_a_body_with_an_image_or_audio_part_needs_the_worker_thread(tmp_path):
    """Text alone is parsed on the server's loop (no I/O); an image or audio part is decoded into files
    (or fetched) by parse_chat, so it goes to a worker thread (serve/app.py)."""
    text = {"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": [
        {"type": "text", "text": "hi"}]}, {"role": "assistant", "content": "hello"}, {"role": "user", "content": "x"}]}  # fmt: skip
    assert not has_media(text) and not has_media({}) and not has_media({"messages": "odd"})
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    audio = {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}
    for part in (image, audio):
        body = {
            "messages": [
                *text["messages"][:-1],
                {"role": "user", "content": [{"type": "text", "text": "x"}, part]},
            ]
        }
        assert has_media(body)
    parse_chat({"model": "m/cpu", **text}, Bounds(), tmp_path / "in", "req-0000001")
    assert not (tmp_path / "in").exists()  # parsed without a file
