"""Optional LLM judge (`--judge URL --judge-model NAME`): an `Accuracy` metric for General-VQA.

Any OpenAI-compatible endpoint: POST {URL}/chat/completions, temperature 0. The judge reads the
question text (media omitted: it need not be multimodal, as in evalscope), the reference and the
prediction, and ends its reply with CORRECT or INCORRECT. An unparseable reply scores 0 and is
counted in `summary.judge_unparsed`. An endpoint that cannot be reached stops scoring with a
ConfigError: it is a setup problem, not a sample result.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..datasets.types import Dataset, Sample
from ..errors import ConfigError
from .evalscope import metric_rows
from .evalscope_metrics import ACCURACY

PROMPT = """You are grading an answer to a question against a reference answer.

Question: {question}

Reference answer: {reference}

Model answer: {prediction}

Does the model answer give the same answer as the reference (wording may differ; extra correct detail is fine; a contradiction or a different answer is not)?
Reply with one word on the last line: CORRECT or INCORRECT."""

_VERDICT = re.compile(r"\b(INCORRECT|CORRECT)\b", re.IGNORECASE)


@dataclass(frozen=True)
class JudgeConfig:
    url: str  # base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1
    model: str
    api_key: str | None = None
    timeout_s: float = 60.0
    max_tokens: int = 256


Post = Callable[[JudgeConfig, Mapping[str, Any]], Mapping[str, Any]]


def post_chat(cfg: JudgeConfig, body: Mapping[str, Any]) -> Mapping[str, Any]:
    """POST {url}/chat/completions with urllib; errors become a ConfigError naming the endpoint."""
    url = cfg.url.rstrip("/") + "/chat/completions"
    headers = {"Content-Type": "application/json"}
    if cfg.api_key:
        headers["Authorization"] = f"Bearer {cfg.api_key}"
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=cfg.timeout_s) as resp:
            return json.loads(resp.read().decode("utf-8"))
    except urllib.error.HTTPError as e:
        detail = e.read().decode("utf-8", "replace")[:200]
        raise ConfigError(f"judge endpoint answered HTTP {e.code}: {detail}", where=url,
                          fix="check --judge (base URL ending in /v1) and --judge-model") from None  # fmt: skip
    except (urllib.error.URLError, OSError, json.JSONDecodeError) as e:
        raise ConfigError(f"judge endpoint unusable: {e}", where=url,
                          fix="start the OpenAI-compatible server or fix --judge") from None  # fmt: skip


def parse_verdict(text: str) -> bool | None:
    """The last CORRECT / INCORRECT in the reply, or None."""
    found = _VERDICT.findall(text or "")
    return None if not found else found[-1].upper() == "CORRECT"


def question_text(sample: Sample) -> str:
    """The user turns' text, media left out."""
    return "\n".join(t.text.strip() for t in sample.turns if t.text.strip())


def judge_one(
    cfg: JudgeConfig, sample: Sample, prediction: str, post: Post = post_chat
) -> tuple[bool | None, str]:
    """(verdict, raw judge reply) for one prediction."""
    prompt = PROMPT.format(question=question_text(sample), reference=sample.reference, prediction=prediction)
    body = {"model": cfg.model, "messages": [{"role": "user", "content": prompt}],
            "temperature": 0.0, "max_tokens": cfg.max_tokens}  # fmt: skip
    reply = post(cfg, body)
    try:
        text = reply["choices"][0]["message"]["content"] or ""
    except (KeyError, IndexError, TypeError):
        raise ConfigError(f"judge reply is not a chat completion: {str(reply)[:200]}", where=cfg.url,
                          fix="point --judge at an OpenAI-compatible /v1 endpoint") from None  # fmt: skip
    return parse_verdict(text), text


def add_judge_accuracy(
    report: Mapping[str, Any], dataset: Dataset, cfg: JudgeConfig, post: Post = post_chat
) -> dict[str, Any]:
    """A copy of a General-VQA report with `Accuracy` per scored sample and per subset."""
    by_id = {s.id: s for s in dataset.samples}
    samples, unparsed = [], 0
    for row in report["samples"]:
        row = {**row, "scores": dict(row["scores"])}
        sample = by_id.get(row["id"])
        if row["status"] == "scored" and sample is not None:
            verdict, raw = judge_one(cfg, sample, row["output"] or "", post)
            unparsed += verdict is None
            row["scores"][ACCURACY] = 1.0 if verdict else 0.0
            row["judge"] = {"model": cfg.model, "verdict": verdict, "reply": raw}
        samples.append(row)
    out = {**report, "samples": samples}
    out["metrics"] = list(report["metrics"]) + metric_rows(samples, (ACCURACY,))
    out["summary"] = {**report["summary"], "judge_model": cfg.model, "judge_unparsed": unparsed}
    return out
