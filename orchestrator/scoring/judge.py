"""Optional LLM judge (`--judge URL --judge-model NAME`): an `Accuracy` metric for General-VQA.

Any OpenAI-compatible endpoint: POST {URL}/chat/completions, temperature 0. The judge reads the
question text (media omitted: it need not be multimodal, as in evalscope), the reference and the
prediction, and ends its reply with CORRECT or INCORRECT. An unparseable reply scores 0 and is
counted in `summary.judge_unparsed`. An endpoint that fails (unreachable, HTTP error, a reply that
is not a chat completion) marks the `Accuracy` metric failed with its reason; every other score and
every report is still written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..datasets.types import Dataset, Sample
from ..errors import ConfigError, EdgefarmError
from ..redact import redact
from .evalscope import metric_rows
from .evalscope_metrics import ACCURACY
from .types import MetricRow, ScoredSample, ScoreReport

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


def endpoint(cfg: JudgeConfig) -> tuple[str, dict[str, str]]:
    """(chat-completions URL, auth headers): `/chat/completions` joined to the path before any query
    string, and the URL's userinfo (`http://user:PW@host/v1`) taken out of it as HTTP basic auth
    (urllib cannot send it in the URL). A URL with userinfo and EDGEFARM_JUDGE_API_KEY is refused."""
    import base64
    from urllib.parse import unquote, urlsplit, urlunsplit

    parts = urlsplit(cfg.url)
    headers: dict[str, str] = {}
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, netloc = netloc.rsplit("@", 1)
        if cfg.api_key:
            raise ConfigError(
                "the judge URL holds a user name and password and EDGEFARM_JUDGE_API_KEY is set too",
                where=f"--judge {redact(cfg.url)}",
                fix="give one: drop the user:password@ part of --judge, or unset EDGEFARM_JUDGE_API_KEY",
            )
        user, _, password = userinfo.partition(":")
        token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode("ascii")
        headers["Authorization"] = f"Basic {token}"
    elif cfg.api_key:
        headers["Authorization"] = f"Bearer {cfg.api_key}"
    path = parts.path.rstrip("/") + "/chat/completions"
    return urlunsplit((parts.scheme, netloc, path, parts.query, "")), headers


def post_chat(cfg: JudgeConfig, body: Mapping[str, Any]) -> Mapping[str, Any]:
    """POST {url}/chat/completions with urllib; errors become a ConfigError naming the endpoint
    (its secrets redacted)."""
    import urllib.error  # here: `edgefarm run` imports this module at start, a judge is rare
    import urllib.request

    url, auth = endpoint(cfg)
    shown = redact(url)
    headers = {"Content-Type": "application/json", **auth}
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=cfg.timeout_s) as resp:
            return json.loads(resp.read().decode("utf-8"))
    except urllib.error.HTTPError as e:
        detail = redact(e.read().decode("utf-8", "replace")[:200])
        raise ConfigError(f"judge endpoint answered HTTP {e.code}: {detail}", where=shown,
                          fix="check --judge (base URL ending in /v1) and --judge-model") from None  # fmt: skip
    except (urllib.error.URLError, OSError, json.JSONDecodeError) as e:
        raise ConfigError(f"judge endpoint unusable: {redact(str(e))}", where=shown,
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
        raise ConfigError(f"judge reply is not a chat completion: {redact(str(reply)[:200])}", where=redact(cfg.url),
                          fix="point --judge at an OpenAI-compatible /v1 endpoint") from None  # fmt: skip
    return parse_verdict(text), text


def add_judge_accuracy(
    report: ScoreReport, dataset: Dataset, cfg: JudgeConfig, post: Post = post_chat
) -> ScoreReport:
    """The General-VQA record with `Accuracy` per scored sample and per subset.

    A judge that fails (unreachable, HTTP 500, not a chat completion) stops judging: `Accuracy` is
    marked failed with the reason (in `metrics` and `summary.judge_error`), every other score stays,
    and the reports are still written."""
    by_id = {s.id: s for s in dataset.samples}
    samples: list[ScoredSample] = []
    unparsed, error = 0, ""
    for row in report.samples:
        sample = by_id.get(row.id)
        if row.status == "scored" and sample is not None and not error:
            try:
                verdict, raw = judge_one(cfg, sample, str(row.detail.get("output") or ""), post)
            except EdgefarmError as e:
                error = str(e).splitlines()[0]
            else:
                unparsed += verdict is None
                row = replace(
                    row,
                    scores={**row.scores, ACCURACY: 1.0 if verdict else 0.0},
                    detail={**row.detail, "judge": {"model": cfg.model, "verdict": verdict, "reply": raw}},
                )
        samples.append(row)
    if error:
        subsets = sorted({s.subset for s in samples if s.status == "scored"}) or [""]
        judged = tuple(MetricRow(ACCURACY, sub, 0, None, failed=f"judge failed: {error}") for sub in subsets)
        samples = [replace(s, scores={k: v for k, v in s.scores.items() if k != ACCURACY}) for s in samples]
    else:
        judged = metric_rows(samples, (ACCURACY,))
    extra = {**report.summary.extra, "judge_model": cfg.model, "judge_unparsed": unparsed}
    if error:
        extra["judge_error"] = error
    return replace(
        report,
        samples=tuple(samples),
        metrics=report.metrics + judged,
        summary=replace(report.summary, extra=extra),
    )
