"""General-MCQ (evalscope's text MCQ): CSV/JSONL rows in evalscope's example layout, its Chinese prompt,
the answer letter, and every way a file can be wrong, each named by file, line and field."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.datasets import load_dataset
from orchestrator.datasets.evalscope_mcq import TEMPLATE, load
from orchestrator.datasets.resolve import pick_format
from orchestrator.errors import DatasetError

REPO = Path(__file__).resolve().parents[4]
# evalscope's example layout (custom_eval/text/mcq/example_val.csv, example_dev.csv), our own questions
VAL_CSV = (
    "id,category,question,A,B,C,D,answer,explanation\n"
    "1,天文,太阳系中最大的行星是？,地球,木星,火星,金星,B,木星最大。\n"
    '2,units,"Which is a thousand, in metres?","1,000 m","1 km, exactly","10,000 cm",1 mm,B,'
    '"1 km is 1,000 m."\n'
    "3,logic,Is the sky green?,yes,no,,,b,\n"
)
DEV_CSV = "id,question,A,B,C,D,answer\n1,一周有几天？,五天,六天,七天,八天,C\n"


def write_mcq_examples(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "example_dev.csv").write_text(DEV_CSV, encoding="utf-8")
    (folder / "example_val.csv").write_text(VAL_CSV, encoding="utf-8")
    return folder / "example_val.csv"


HEAD = (
    '回答下面的单项选择题，请选出其中的正确答案。你的回答的全部内容应该是这样的格式："答案：[LETTER]"（不带引号），'
    "其中 [LETTER] 是 {} 中的一个。\n\n问题："
)


def test_template_is_evalscopes_chinese_single_answer_verbatim() -> None:
    # evalscope 1.14.1 utils/multi_choices.py CHINESE_SINGLE_ANSWER_TEMPLATE (a raw string, .lstrip()):
    # the instruction, a blank line, 问题/选项 and the choices, then a final newline
    assert TEMPLATE.startswith(HEAD.format("{letters}")) and TEMPLATE.endswith("\n选项：\n{choices}\n")


def test_csv_rows_in_evalscopes_layout(tmp_path: Path) -> None:
    val = write_mcq_examples(tmp_path / "mcq")
    ds = load(val)
    assert ds.problems == () and ds.format == "general_mcq"
    zh, en, two = ds.samples
    assert [s.id for s in ds.samples] == ["1", "2", "3"]  # the `id` column
    assert zh.turns[0].text == HEAD.format("A,B,C,D") + (
        "太阳系中最大的行星是？\n选项：\nA) 地球\nB) 木星\nC) 火星\nD) 金星\n"
    )
    assert (zh.reference, zh.choices, zh.modality, zh.task, zh.subset) == (
        "B", ("地球", "木星", "火星", "金星"), "text", "multiple_choice", "example"
    )  # fmt: skip
    assert en.choices == ("1,000 m", "1 km, exactly", "10,000 cm", "1 mm")  # quoted cells keep their commas
    assert en.turns[0].text.split("问题：")[1].startswith("Which is a thousand, in metres?\n")
    # a CSV row has every header column: empty C and D are empty options, as evalscope sends them
    assert two.choices == ("yes", "no", "", "") and two.turns[0].text.endswith("A) yes\nB) no\nC) \nD) \n")
    assert two.reference == "B"  # `b`: evalscope compares lower-cased


def test_jsonl_rows_stop_at_the_first_missing_option(tmp_path: Path) -> None:
    rows = [
        {"id": "q1", "question": "Pick B", "A": "x", "B": "y", "C": "z", "answer": "B"},
        {"id": "q2", "question": "Pick A", "A": 1, "B": 2, "D": "skipped: no C", "answer": "A"},
    ]
    f = tmp_path / "t_val.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = load_dataset(f)
    assert ds.format == "general_mcq" and ds.problems == ()
    assert [s.choices for s in ds.samples] == [("x", "y", "z"), ("1", "2")]
    assert (
        ds.samples[1]
        .turns[0]
        .text.endswith("其中 [LETTER] 是 A,B 中的一个。\n\n问题：Pick A\n选项：\nA) 1\nB) 2\n")
    )


def test_folder_and_subset_read_the_val_split(tmp_path: Path) -> None:
    folder = tmp_path / "mcq"
    write_mcq_examples(folder)
    assert [s.id for s in load(folder, "example").samples] == ["1", "2", "3"]
    assert [s.id for s in load(folder).samples] == ["1", "2", "3"]  # example_dev.csv is the few-shot split
    assert len(load(folder, "example", split="dev").samples) == 1
    assert pick_format(folder).name == "general_mcq"


def test_other_evalscope_files_are_not_general_mcq(tmp_path: Path) -> None:
    vqa = tmp_path / "v.jsonl"
    vqa.write_text(
        json.dumps({"messages": [{"role": "user", "content": "Hi"}], "question": "Q", "A": "a", "B": "b"})
    )
    vmcq = tmp_path / "m.csv"
    vmcq.write_text('question,options,A,B,answer\nQ,"[""a"", ""b""]",a,b,A\n')
    assert pick_format(vqa).name == "general_vqa" and pick_format(vmcq).name == "general_vmcq"


def test_bad_rows_are_problems_naming_line_and_field(tmp_path: Path) -> None:
    f = tmp_path / "bad_val.csv"
    f.write_text(
        "id,question,A,B,C,D,answer\n"
        "1,ok?,a,b,c,d,D\n"
        "2,too far?,a,b,c,d,E\n"  # not a letter of A..D
        "3,two?,a,b,c,d,AC\n"  # several answers: evalscope's multiple_correct
        "4,,a,b,c,d,A\n"  # no question
        "5,sound speed?,343 m/s,299,792 km/s,1,225 km/h,60 m/s,A\n"  # evalscope's own example's unquoted commas
        "6,short?,a,b\n",
        encoding="utf-8",
    )
    ds = load(f)
    assert [s.id for s in ds.samples] == ["1"]
    got = {p.where: (p.field, p.message) for p in ds.problems}
    assert got[f"{f}:3"][0] == "answer" and "one letter of A,B,C,D, got 'E'" in got[f"{f}:3"][1]
    assert got[f"{f}:4"][0] == "answer" and got[f"{f}:5"][0] == "question"
    assert "9 cells but the header has 7 columns" in got[f"{f}:6"][1] and "quote" in got[f"{f}:6"][1]
    assert "4 cells" in got[f"{f}:7"][1]


def test_a_list_answer_names_multiple_correct(tmp_path: Path) -> None:
    f = tmp_path / "m.jsonl"
    f.write_text(json.dumps({"question": "Q", "A": "a", "B": "b", "answer": ["A", "B"]}) + "\n")
    (p,) = load(f).problems
    assert p.where == f"{f}:1" and p.field == "answer" and "multiple_correct" in p.message


def test_a_missing_answer_column_refuses_the_file(tmp_path: Path) -> None:
    f = tmp_path / "noanswer.csv"
    f.write_text("id,question,A,B,C\n1,Q,a,b,c\n")
    with pytest.raises(DatasetError) as e:
        load(f)
    assert f"{f}:1" in str(e.value) and "'answer'" in str(e.value) and "fix:" in str(e.value)


def test_a_subset_cannot_name_a_file_outside_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "mcq"
    write_mcq_examples(folder)
    (tmp_path / "secret_val.csv").write_text(VAL_CSV)
    with pytest.raises(DatasetError) as e:
        load(folder, "../secret")
    assert "not a plain file name" in str(e.value) and str(folder) in str(e.value)
    (folder / "linked_val.csv").symlink_to(tmp_path / "secret_val.csv")
    with pytest.raises(DatasetError) as e:
        load(folder, "linked")
    assert "outside the dataset folder" in str(e.value) and "fix:" in str(e.value)


def test_cli_checks_it_and_exits_2_on_a_missing_column(tmp_path: Path) -> None:
    def check(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "orchestrator", "dataset", "check", *args],
                              capture_output=True, text=True, timeout=120, cwd=REPO, check=False)  # fmt: skip

    ok = check(str(write_mcq_examples(tmp_path / "mcq")))
    assert ok.returncode == 0 and "general_mcq" in ok.stdout, ok.stdout + ok.stderr
    bad = tmp_path / "q.csv"
    bad.write_text("question,A,B\nQ,a,b\n")
    p = check(str(bad), "--format", "general_mcq")
    assert p.returncode == 2 and f"{bad}:1" in p.stderr and "'answer'" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


def test_files_are_found_in_evalscopes_order(tmp_path: Path) -> None:
    # evalscope's LocalDataLoader: per extension (jsonl, csv, tsv), `<subset>_<split>` then `<subset>`
    folder = tmp_path / "mcq"
    write_mcq_examples(folder)
    row = {"id": "j1", "question": "From JSONL?", "A": "yes", "B": "no", "answer": "A"}
    (folder / "example.jsonl").write_text(json.dumps(row) + "\n")
    assert [s.id for s in load(folder, "example").samples] == ["j1"]  # example.jsonl before example_val.csv
    (folder / "example.jsonl").unlink()
    (folder / "example_val.tsv").write_text("id\tquestion\tA\tB\tanswer\nt1\tFrom TSV?\tyes\tno\tA\n")
    assert [s.id for s in load(folder, "example").samples] == ["1", "2", "3"]  # csv before tsv


def test_a_cell_over_the_csv_limit_is_a_problem_at_its_line(tmp_path: Path) -> None:
    f = tmp_path / "big.csv"
    f.write_text("question,A,B,answer\nok?,a,b,A\n" + "big?," + "x" * 200_000 + ",b,A\n")
    ds = load(f)
    assert [s.id for s in ds.samples] == ["0"]
    (p,) = ds.problems
    assert p.where == f"{f}:3" and "not readable as CSV" in p.message and "128 KiB" in p.message
