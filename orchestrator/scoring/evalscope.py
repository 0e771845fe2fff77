"""Scorers for evalscope's General-VQA and General-VMCQ: per-sample metrics, averaged per subset.

The report dict (report.json for these formats):
  {"schema_version", "format", "dataset" (evalscope's pretty name), "main_metric",
   "metrics": [{"metric", "subset", "num", "score"} ...]  per subset, plus subset "OVERALL"
              (sample-weighted) when there are several subsets,
   "samples": [{"id", "subset", "modality", "status": "scored"|"skipped", "output",
                "reference", "scores": {metric: value}, ("extracted" for VMCQ)} ...],
   "summary": {"total_scored", "skipped", "overall_avg" (the main metric over all scored samples),
               "by_subset": {subset: num}, (VMCQ: "total_passed", "pass_rate_pct")}}
Scores are fractions in [0, 1], rounded to SCORE_DECIMALS. A sample whose output is None (not run,
or `unsupported` such as video) is skipped: counted in `skipped`, in no average.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..datasets.types import Dataset, Sample
from .evalscope_metrics import ACCURACY, VQA_MAIN_METRIC, VQA_METRICS, extract_choice, vqa_scores

SCHEMA_VERSION = 1
SCORE_DECIMALS = 4
OVERALL = "OVERALL"
PRETTY = {"general_vqa": "General-VQA", "general_vmcq": "General-VMCQ"}


def _r(x: float) -> float:
    return round(float(x), SCORE_DECIMALS)


def metric_rows(samples: Sequence[Mapping[str, Any]], metrics: Sequence[str]) -> list[dict[str, Any]]:
    """Per-subset averages of each metric over scored samples (+ OVERALL when several subsets)."""
    scored = [s for s in samples if s["status"] == "scored"]
    subsets = sorted({s["subset"] for s in scored})
    groups = [(sub, [s for s in scored if s["subset"] == sub]) for sub in subsets]
    if len(subsets) > 1:
        groups.append((OVERALL, scored))
    rows = []
    for metric in metrics:
        for sub, group in groups:
            values = [s["scores"][metric] for s in group if metric in s["scores"]]
            if values:
                rows.append(
                    {
                        "metric": metric,
                        "subset": sub,
                        "num": len(values),
                        "score": _r(sum(values) / len(values)),
                    }
                )
    return rows


def _sample_row(sample: Sample, output: str | None) -> dict[str, Any]:
    return {
        "id": sample.id,
        "subset": sample.subset,
        "modality": sample.modality,
        "status": "skipped" if output is None else "scored",
        "output": output,
        "reference": sample.reference,
        "scores": {},
    }


def _report(fmt: str, main: str, samples: list[dict[str, Any]], metrics: Sequence[str]) -> dict[str, Any]:
    scored = [s for s in samples if s["status"] == "scored"]
    by_subset: dict[str, int] = {}
    for s in scored:
        by_subset[s["subset"]] = by_subset.get(s["subset"], 0) + 1
    main_values = [s["scores"][main] for s in scored if main in s["scores"]]
    return {
        "schema_version": SCHEMA_VERSION,
        "format": fmt,
        "dataset": PRETTY[fmt],
        "main_metric": main,
        "metrics": metric_rows(samples, metrics),
        "samples": samples,
        "summary": {
            "total_scored": len(scored),
            "skipped": len(samples) - len(scored),
            "overall_avg": _r(sum(main_values) / len(main_values)) if main_values else 0.0,
            "by_subset": by_subset,
        },
    }


def score_vqa(dataset: Dataset, outputs: Mapping[str, str | None]) -> dict[str, Any]:
    """General-VQA: BLEU-1..4 and ROUGE-1/2/L R/P/F of each output vs the row's `answer`."""
    rows = []
    for sample in dataset.samples:
        out = outputs.get(sample.id)
        row = _sample_row(sample, out)
        if out is not None:
            row["scores"] = {m: _r(v) for m, v in vqa_scores(out, sample.reference).items()}
        rows.append(row)
    return _report("general_vqa", VQA_MAIN_METRIC, rows, VQA_METRICS)


def score_vmcq(dataset: Dataset, outputs: Mapping[str, str | None]) -> dict[str, Any]:
    """General-VMCQ: accuracy of the extracted answer letter."""
    rows = []
    for sample in dataset.samples:
        out = outputs.get(sample.id)
        row = _sample_row(sample, out)
        if out is not None:
            picked = extract_choice(out, len(sample.choices))
            row["extracted"] = picked
            row["scores"] = {ACCURACY: 1.0 if picked == sample.reference else 0.0}
        rows.append(row)
    report = _report("general_vmcq", ACCURACY, rows, (ACCURACY,))
    summary = report["summary"]
    correct = sum(1 for r in rows if r["scores"].get(ACCURACY) == 1.0)
    summary["total_passed"] = correct
    summary["pass_rate_pct"] = (
        round(100.0 * correct / summary["total_scored"], 2) if summary["total_scored"] else 0.0
    )
    return report
