"""evalscope metrics: BLEU vs direct nltk calls, ROUGE vs an independent reference, VMCQ extraction,
the scorers' report shape, the table, and the LLM judge against a local HTTP endpoint."""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import warnings
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from nltk.tokenize import NLTKWordTokenizer
from nltk.translate.bleu_score import sentence_bleu

from orchestrator.datasets.types import Dataset, Part, Sample, Turn
from orchestrator.scoring import SCORERS, report_json
from orchestrator.scoring.evalscope_metrics import CHINESE, bleu_scores, extract_choice, rouge_scores
from orchestrator.scoring.evalscope_table import render_table
from orchestrator.scoring.judge import JudgeConfig, add_judge_accuracy, parse_verdict

PAIRS = [  # (prediction, reference): case differences, punctuation, repeats, empty output
    ("Dog", "Dog"), ("dog", "Dog"), ("A dog.", "Dog"), ("The dog is running", "The dog runs"),
    ("", "Museum"), ("Museum", ""), ("It is a museum building", "Museum"),
    ("the the the the", "the cat is on the mat"), ("The cat sat on the mat", "the cat sat on the mat"),
    ("Tokyo skyline at night", "Tokyo"), ("Tesla Model 3", "Tesla"), ("He is running fast.", "Running"),
    ("A piano music performance.", "A piano music performance."), ("Hello, world!", "Hello, world."),
    ("The main differences are color and size", "The main differences are..."),
    ("What? No. Yes.", "Yes? No."), ("a b c d e f g", "g f e d c b a"), ("a b a b a b", "a b a b"),
    ("  spaced   out   words ", "spaced out words"), ("It's the dog's bone", "It is the dog's bone"),
    ("A sunny beach and a wave video.", "A sunny beach and a wave video."), ("   ", "x"),
    ("New York New York", "New York"), ("x y z", "a b c"),
]  # fmt: skip


def test_enough_pairs() -> None:
    assert len(PAIRS) >= 20


@pytest.mark.parametrize("pred, ref", PAIRS)
def test_bleu_matches_direct_nltk(pred: str, ref: str) -> None:
    tok = NLTKWordTokenizer().tokenize  # what word_tokenize runs on each line
    got = bleu_scores(pred, ref)
    hyp, refs = tok(pred), [tok(ref)]
    for n, w in enumerate([(1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1)], start=1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = sentence_bleu(refs, hyp, weights=w) if hyp and refs[0] else 0.0
        assert got[f"BLEU-{n}"] == pytest.approx(want, abs=1e-12)


def test_bleu_is_case_sensitive_and_exact_match_is_one() -> None:
    assert bleu_scores("Dog", "Dog")["BLEU-1"] == 1.0
    assert bleu_scores("dog", "Dog")["BLEU-1"] == 0.0
    assert bleu_scores("", "Dog") == {"BLEU-1": 0.0, "BLEU-2": 0.0, "BLEU-3": 0.0, "BLEU-4": 0.0}


def _reference_rouge(pred: str, ref: str) -> dict[str, float]:
    """Straight from the definitions (rouge_chinese): distinct n-gram sets, LCS by full table."""

    def words(text: str) -> list[str]:
        text = re.sub(r"([。！？\?])([^”’])", "\\1\n\\2", text)
        text = re.sub(r"(\.{6})([^”’])", "\\1\n\\2", text)
        text = re.sub(r"(\…{2})([^”’])", "\\1\n\\2", text)
        text = re.sub(r"([。！？\?][”’])([^，。！？\?])", "\\1\n\\2", text)
        out = []
        for sent in text.rstrip().split("\n"):
            if sent:
                out.extend(" ".join(sent.split()).split(" "))
        return out

    h, r = words(pred), words(ref)
    res = {}
    if not h or not r:
        return {f"ROUGE-{n}-{s}": 0.0 for n in "12L" for s in "RPF"}
    for n in (1, 2):
        hs = set(zip(*[h[i:] for i in range(n)]))
        rs = set(zip(*[r[i:] for i in range(n)]))
        ov = len(hs & rs)
        p = ov / len(hs) if hs else 0.0
        rc = ov / len(rs) if rs else 0.0
        res.update({f"ROUGE-{n}-R": rc, f"ROUGE-{n}-P": p, f"ROUGE-{n}-F": 2 * p * rc / (p + rc + 1e-8)})
    table = [[0] * (len(h) + 1) for _ in range(len(r) + 1)]
    for i in range(1, len(r) + 1):
        for j in range(1, len(h) + 1):
            table[i][j] = (
                table[i - 1][j - 1] + 1 if r[i - 1] == h[j - 1] else max(table[i - 1][j], table[i][j - 1])
            )
    lcs = table[-1][-1]
    p, rc = lcs / len(h), lcs / len(r)
    res.update({"ROUGE-L-R": rc, "ROUGE-L-P": p, "ROUGE-L-F": 2 * p * rc / (p + rc + 1e-8)})
    return res


@pytest.mark.parametrize("pred, ref", PAIRS)
def test_rouge_matches_reference(pred: str, ref: str) -> None:
    got, want = rouge_scores(pred, ref), _reference_rouge(pred, ref)
    assert got == pytest.approx(want, abs=1e-12)


def test_rouge_hand_values() -> None:
    s = rouge_scores("The cat sat on the mat", "the cat sat on the mat")  # case-sensitive: The != the
    assert s["ROUGE-1-R"] == pytest.approx(5 / 5)  # distinct unigrams: ref 5, all in the prediction
    assert s["ROUGE-1-P"] == pytest.approx(5 / 6)  # prediction has 6 distinct (The and the)
    assert s["ROUGE-L-R"] == pytest.approx(5 / 6) and s["ROUGE-2-R"] == pytest.approx(4 / 5)
    assert rouge_scores("Yes", "Yes")["ROUGE-1-F"] == pytest.approx(1.0, abs=1e-7)


@pytest.mark.parametrize(
    "text, n, want",
    [("ANSWER: B", 4, "B"), ("I think... ANSWER: C", 4, "C"), ("answer: (D)", 4, "D"), ("ANSWER: **A**", 4, "A"),
     ("ANSWER: B, not C", 4, "B"), ("ANSWER: A\nwait, ANSWER: D.", 4, "D"), ("ANSWER: [LETTER]\nSo B", 4, "B"),
     ("ANSWER: E", 4, None), ("The answer is (C).", 4, "C"), ("Clearly Correct", 4, None),
     ("A or B? I pick B", 2, "B"), ("ANSWER: Z then ANSWER: A", 4, "A"), ("", 4, None), ("ANSWER: b", 4, None),
     ("ANSWER: AB", 4, None), ("I", 4, None)],
)  # fmt: skip
def test_extract_choice(text: str, n: int, want: str | None) -> None:
    assert extract_choice(text, n) == want


@pytest.mark.parametrize(
    "text, n, want",
    [("答案：B", 4, "B"), ("答案:C", 4, "C"), ("答案： **A**", 4, "A"), ("答案：（D）", 4, "D"), ("答案：B。", 4, "B"),
     ("先想想……答案：A\n不对，答案：C", 4, "C"), ("答案：E", 4, None), ("答案：b", 4, None), ("答案：AB", 4, None),
     ("ANSWER: B", 4, "B"), ("我选 B", 4, "B"), ("all green", 4, None), ("答案：[LETTER]", 4, None),
     ("Clearly Correct", 4, "C"), ("I think Blue", 2, "B"), ("Blue Sky", 4, None), ("答案：B，C", 4, None),
     ("答案：$\\boxed{C}$", 4, "C"), ("答案：(B/D)", 4, None), ("答案：A and B", 4, None), ("答案：A\n答案：X", 4, "A")],
)  # fmt: skip
def test_extract_choice_after_the_chinese_marker(text: str, n: int, want: str | None) -> None:
    # General-MCQ's template asks for `答案：[LETTER]`; read as evalscope 1.14.1's parse_answers_zh does: the
    # last marker followed by labels decides (`B，C`: no answer), else the text's last capital letter if
    # valid (`Correct` -> C; `Blue Sky` -> none, its last capital is S). Checked against evalscope 1.14.1's
    # own function on 3000 random replies (docs/evalscope.md).
    assert extract_choice(text, n, CHINESE) == want


def test_mcq_scorer_reads_the_chinese_marker() -> None:
    samples = [_sample(str(i), "example", r, "abcd") for i, r in enumerate("BCA")]
    ds = _ds([dataclasses.replace(s, format="general_mcq") for s in samples], "general_mcq")
    rep = report_json(SCORERS.get("general_mcq").score(ds, {"0": "答案：B", "1": "ANSWER: D", "2": None}))
    assert rep["dataset"] == "General-MCQ" and rep["main_metric"] == "Accuracy"
    assert rep["metrics"] == [{"metric": "Accuracy", "subset": "example", "num": 2, "score": 0.5}]
    assert [s["extracted"] for s in rep["samples"][:2]] == ["B", "D"] and rep["summary"]["skipped"] == 1


def _sample(sid: str, subset: str, ref: str, choices=()) -> Sample:
    turn = Turn((Part(kind="text", text=f"What is {sid}?"), Part(kind="image", path=Path("/x.png"))))
    fmt = "general_vmcq" if choices else "general_vqa"
    return Sample(id=sid, modality="image", task="t", turns=(turn,), reference=ref, references=(ref,),
                  format=fmt, subset=subset, choices=tuple(choices))  # fmt: skip


def _ds(samples, fmt) -> Dataset:
    return Dataset(name="d", format=fmt, root=Path("/"), files=(), samples=tuple(samples))


def test_vqa_scorer_averages_per_subset_and_skips_missing() -> None:
    ds = _ds([_sample("0", "a", "Dog"), _sample("1", "a", "Museum"), _sample("2", "b", "Tokyo"),
              _sample("3", "b", "x")], "general_vqa")  # fmt: skip
    rep = report_json(SCORERS.get("general_vqa").score(ds, {"0": "Dog", "1": "", "2": "Tokyo", "3": None}))
    assert rep["summary"]["total_scored"] == 3 and rep["summary"]["skipped"] == 1
    rows = {(m["metric"], m["subset"]): m for m in rep["metrics"]}
    assert rows[("BLEU-1", "a")] == {"metric": "BLEU-1", "subset": "a", "num": 2, "score": 0.5}
    assert rows[("ROUGE-L-R", "OVERALL")]["num"] == 3 and rows[("ROUGE-L-R", "b")]["score"] == 1.0
    assert len(rep["metrics"]) == 13 * 3
    assert rep["main_metric"] == "ROUGE-L-R" and rep["summary"]["overall_avg"] == pytest.approx(0.6667)
    assert [s["status"] for s in rep["samples"]] == ["scored", "scored", "scored", "skipped"]


def test_vmcq_scorer_and_table() -> None:
    ds = _ds([_sample(str(i), "example", r, "abcd") for i, r in enumerate("ADC")], "general_vmcq")
    rep = report_json(
        SCORERS.get("general_vmcq").score(ds, {"0": "ANSWER: A", "1": "B", "2": "Think... ANSWER: C"})
    )
    assert rep["metrics"] == [{"metric": "Accuracy", "subset": "example", "num": 3, "score": 0.6667}]
    assert [s["extracted"] for s in rep["samples"]] == ["A", "B", "C"]
    assert rep["summary"]["total_passed"] == 2 and rep["summary"]["pass_rate_pct"] == 66.67
    assert render_table("qwen-vl-plus", rep).splitlines() == [
        "+--------------+--------------+----------+---------+-----+-------+",
        "| Model        | Dataset      | Metric   | Subset  | Num | Score |",
        "+==============+==============+==========+=========+=====+=======+",
        "| qwen-vl-plus | General-VMCQ | Accuracy | example |   3 | 66.7% |",
        "+--------------+--------------+----------+---------+-----+-------+",
    ]


class _Judge(BaseHTTPRequestHandler):
    seen: ClassVar[list] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Judge.seen.append((self.path, body))
        prompt = body["messages"][0]["content"]
        pred = prompt.split("Model answer: ", 1)[1].split("\n", 1)[0]
        ref = prompt.split("Reference answer: ", 1)[1].split("\n", 1)[0]
        verdict = "CORRECT" if pred.lower().strip(". ") == ref.lower() else "INCORRECT"
        if pred == "garble":
            verdict = "hmm"
        data = json.dumps(
            {"choices": [{"message": {"role": "assistant", "content": f"Reasoning.\n{verdict}"}}]}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a) -> None:
        pass


@pytest.fixture
def judge_url():
    server = HTTPServer(("127.0.0.1", 0), _Judge)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_judge_accuracy_against_local_endpoint(judge_url: str) -> None:
    ds = _ds([_sample("0", "s", "Dog"), _sample("1", "s", "Museum"), _sample("2", "s", "Tokyo"),
              _sample("3", "s", "x")], "general_vqa")  # fmt: skip
    rep = SCORERS.get("general_vqa").score(ds, {"0": "dog.", "1": "A school", "2": "garble", "3": None})
    _Judge.seen.clear()
    out = report_json(add_judge_accuracy(rep, ds, JudgeConfig(url=judge_url, model="judge-1")))
    rep = report_json(rep)
    assert len(_Judge.seen) == 3 and _Judge.seen[0][0] == "/v1/chat/completions"
    assert _Judge.seen[0][1]["model"] == "judge-1" and _Judge.seen[0][1]["temperature"] == 0.0
    assert "What is 0?" in _Judge.seen[0][1]["messages"][0]["content"]
    assert [s["scores"].get("Accuracy") for s in out["samples"]] == [1.0, 0.0, 0.0, None]
    assert out["metrics"][-1] == {"metric": "Accuracy", "subset": "s", "num": 3, "score": 0.3333}
    assert out["summary"]["judge_unparsed"] == 1 and "Accuracy" not in rep["samples"][0]["scores"]


class _Failing(BaseHTTPRequestHandler):
    calls: ClassVar[list] = []

    def do_POST(self) -> None:
        _Failing.calls.append(self.path)
        self.rfile.read(int(self.headers["Content-Length"]))
        data = b'{"error": "model overloaded"}'
        self.send_response(500)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a) -> None:
        pass


@pytest.fixture
def failing_judge_url():
    server = HTTPServer(("127.0.0.1", 0), _Failing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_a_judge_answering_500_marks_accuracy_failed_and_keeps_every_other_score(failing_judge_url) -> None:
    ds = _ds([_sample("0", "s", "Dog"), _sample("1", "s", "Cat")], "general_vqa")
    rep = SCORERS.get("general_vqa").score(ds, {"0": "Dog", "1": "cat"})
    _Failing.calls.clear()
    out = add_judge_accuracy(rep, ds, JudgeConfig(url=failing_judge_url, model="m", timeout_s=5))
    assert len(_Failing.calls) == 1  # stops at the first failure instead of hammering a broken endpoint
    acc = [m for m in out.metrics if m.metric == "Accuracy"]
    assert acc and acc[0].score is None and "HTTP 500" in acc[0].failed
    assert (
        out.metrics[: len(rep.metrics)] == rep.metrics and out.summary.overall_avg == rep.summary.overall_avg
    )
    data = report_json(out)
    assert "HTTP 500" in data["summary"]["judge_error"]
    assert all("Accuracy" not in s["scores"] for s in data["samples"])
    assert "failed" in render_table("m", out)


def test_judge_unreachable_marks_accuracy_failed() -> None:
    ds = _ds([_sample("0", "s", "Dog")], "general_vqa")
    rep = SCORERS.get("general_vqa").score(ds, {"0": "Dog"})
    out = add_judge_accuracy(rep, ds, JudgeConfig(url="http://127.0.0.1:9/v1", model="m", timeout_s=2))
    assert "judge endpoint" in out.summary.extra["judge_error"]


def test_parse_verdict() -> None:
    assert parse_verdict("CORRECT") is True and parse_verdict("so: incorrect") is False
    assert parse_verdict("Incorrect at first... CORRECT") is True and parse_verdict("") is None
