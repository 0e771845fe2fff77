"""evalscope parity on Chinese, mixed Chinese/English and empty predictions.

The reference values come from evalscope 1.14.1's own method, reproduced here statement for
statement with the packages it calls (jieba for words, rouge_chinese for ROUGE, nltk for BLEU):
- `evalscope/metrics/utils/functions.py` `bleu_ngram_one_sample`,
- `evalscope/metrics/utils/rouge.py` `compute_rouge_score_one_sample_zh` (with its `_mean`),
both called from `evalscope/benchmarks/general_qa_vqa_metrics.py` `calculate_metric_score`.
(evalscope itself is not installed: its wheel pulls in torch and dozens of packages.)
"""

from __future__ import annotations

from pathlib import Path

import jieba
import pytest
from nltk.tokenize import word_tokenize
from nltk.translate.bleu_score import sentence_bleu
from rouge_chinese import Rouge

from orchestrator.datasets.types import Dataset, Part, Sample, Turn
from orchestrator.scoring import SCORERS, report_json
from orchestrator.scoring.evalscope_metrics import VQA_METRICS, vqa_scores


def _is_contains_chinese(strs: str) -> bool:  # evalscope's, verbatim
    return any("\u4e00" <= c <= "\u9fa5" for c in strs)


def evalscope_bleu(predict: str, reference: str) -> dict[str, float]:
    """bleu_ngram_one_sample (evalscope 1.14.1). English goes through word_tokenize with
    preserve_line=True here (punkt's data is not installed; docs/evalscope.md says so)."""
    predict_t = (
        list(jieba.cut(predict))
        if _is_contains_chinese(predict)
        else word_tokenize(predict, preserve_line=True)
    )
    ref_t = (
        [list(jieba.cut(reference))]
        if _is_contains_chinese(reference)
        else [word_tokenize(reference, preserve_line=True)]
    )
    return {
        f"BLEU-{n}": sentence_bleu(ref_t, predict_t, weights=w)
        for n, w in ((1, (1, 0, 0, 0)), (2, (0, 1, 0, 0)), (3, (0, 0, 1, 0)), (4, (0, 0, 0, 1)))
    }


def evalscope_rouge(predict: str, reference: str) -> dict[str, float]:
    """compute_rouge_score_one_sample_zh([predict], [reference]) (evalscope 1.14.1)."""
    zh_scorer = Rouge()
    pair_scores = []
    for p, r in zip([predict], [reference]):
        p = " ".join(jieba.cut(p)) if _is_contains_chinese(p) else p
        r = " ".join(jieba.cut(r)) if _is_contains_chinese(r) else r
        try:
            score = zh_scorer.get_scores(p, r, ignore_empty=True)[0]
        except Exception:  # noqa: BLE001, S112 - evalscope catches everything here and logs a warning
            continue
        pair_scores.append(score)
    result = {}
    for prefix, key in (("ROUGE-1", "rouge-1"), ("ROUGE-2", "rouge-2"), ("ROUGE-L", "rouge-l")):
        for stat in ("r", "p", "f"):
            values = [s[key][stat] for s in pair_scores]
            result[f"{prefix}-{stat.upper()}"] = sum(values) / len(values) if values else 0.0
    return result


def evalscope_vqa(predict: str, reference: str) -> dict[str, float]:
    return {**evalscope_bleu(predict, reference), **evalscope_rouge(predict, reference)}


pytestmark = pytest.mark.filterwarnings("ignore:\\nThe hypothesis contains 0 counts:UserWarning")

CHINESE = [  # (prediction, reference)
    ("我喜欢吃苹果", "我喜欢吃苹果"),  # identical: every metric 1.0 (whole-string tokens gave 0 before)
    ("我喜欢吃苹果", "我喜欢吃香蕉"),
    ("这是一只在草地上奔跑的狗。", "一只狗在草地上奔跑"),
    ("北京是中国的首都。上海是最大的城市！", "中国的首都是北京"),
    ("图片里有一只猫", "这张图片显示了一只白色的猫？"),
    ("今天天气不错，我们聊聊天", "今天天气很好"),
    ("他说：“你好。”然后离开了", "他说你好然后离开"),
    ("是", "是的"),
]
MIXED = [
    ("这是 Tesla Model 3 汽车", "Tesla Model 3"),
    ("The answer is 北京", "北京"),
    ("东京 Tokyo 的夜景", "Tokyo skyline at night"),
    ("我用 Python 写代码。It works!", "我用Python写代码"),
    ("GPU 比 CPU 快 5 倍", "GPU 快 5 倍"),
    ("Hello world", "你好 world"),
]
EMPTY = [("", "我喜欢吃苹果"), ("", "Museum"), ("我喜欢吃苹果", ""), ("", ""), ("   ", "狗")]


@pytest.mark.parametrize(("pred", "ref"), CHINESE + MIXED + EMPTY)
def test_every_metric_equals_evalscopes_own_computation(pred: str, ref: str) -> None:
    got, want = vqa_scores(pred, ref), evalscope_vqa(pred, ref)
    assert set(got) == set(VQA_METRICS) == set(want)
    for m in VQA_METRICS:
        assert got[m] == pytest.approx(want[m], abs=1e-9), (m, pred, ref, got[m], want[m])


def test_a_chinese_answer_evalscope_scores_one_scores_one_here() -> None:
    got = vqa_scores("我喜欢吃苹果", "我喜欢吃苹果")
    assert got["BLEU-1"] == 1.0 and got["ROUGE-L-R"] == pytest.approx(1.0)
    assert vqa_scores("一只狗在草地上奔跑", "这是一只在草地上奔跑的狗。")["ROUGE-1-R"] > 0.5


def test_empty_predictions_count_as_zero_in_the_subset_average_as_evalscope_does() -> None:
    """evalscope 1.14.1 keeps every key at 0.0 when no pair scored (`_mean([])`), so an empty answer
    pulls the mean down; the subset mean here equals the plain mean of evalscope's per-sample values."""
    rows = [("0", "我喜欢吃苹果", "我喜欢吃苹果"), ("1", "", "一只狗"), ("2", "The answer is 北京", "北京")]
    samples = [
        Sample(
            id=i,
            modality="text",
            task="t",
            turns=(Turn(parts=(Part(kind="text", text="q"),)),),
            reference=ref,
            references=(ref,),
            format="general_vqa",
            subset="zh",
        )
        for i, _, ref in rows
    ]
    ds = Dataset(name="d", format="general_vqa", root=Path("/"), files=(), samples=tuple(samples))
    rep = report_json(SCORERS.get("general_vqa").score(ds, {i: out for i, out, _ in rows}))
    by_metric = {m["metric"]: m for m in rep["metrics"] if m["subset"] == "zh"}
    for m in VQA_METRICS:
        want = sum(evalscope_vqa(out, ref)[m] for _, out, ref in rows) / len(rows)
        assert by_metric[m]["num"] == 3
        assert by_metric[m]["score"] == pytest.approx(want, abs=1e-4), m
