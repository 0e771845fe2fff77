"""`edgefarm ab`'s input checks through click: rounds, block length and --resolve bounded, --block-s
refused beside run's own --repeat / --sustain, run flags ab owns refused, unreadable
flags named with the fix; nothing runs and no folder is made."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from orchestrator.cli import main


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--rounds", "101"], "101 is not in the range 2<=x<=100"),
        (["--rounds", "1"], "1 is not in the range 2<=x<=100"),
        (["--block-s", "601"], "601.0 is not in the range 0<=x<=600.0"),
        (["--resolve", "0.1"], "0.1 is not in the range 0.5<=x<=50"),
        (["--resolve", "5", "--rounds", "3"], "--resolve needs --rounds 4 or more"),
        (
            ["--block-s", "2", "--", "--repeat", "5"],
            "--block-s and --repeat both set how often a block runs each sample",
        ),
        (["--block-s", "2", "--b", "--sustain 3"], "fix: drop --block-s, or --sustain from the run flags"),
        (["--a", "--out=elsewhere"], "--a: --out=elsewhere is set by edgefarm ab"),
        (["--b", "--resume runs/x"], "--b: --resume is set by edgefarm ab"),
        (["--b", '"unclosed'], "--b: cannot read the flags '\"unclosed': No closing quotation"),
        (["--", "--out", "x"], "edgefarm ab RUN FLAGS: --out is set by edgefarm ab"),
    ],
)
def test_bad_input_is_refused_before_any_block_runs(tmp_path, args, said):
    out = tmp_path / "ab"
    r = CliRunner().invoke(main, ["ab", "--out", str(out), *args])
    assert r.exit_code == 2 and said in r.output, r.output
    assert not out.exists()
