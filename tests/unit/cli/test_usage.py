"""Every command-line error of every command speaks the project's one voice: `error: WHERE: WHAT`,
a `fix:` line, exit 2, never click's `Error: Invalid value ...` (issue 41). Through the real `edgefarm`
group, so each command's own click parameters raise the errors."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from orchestrator.cli import main


@pytest.mark.parametrize(
    ("args", "where", "fix"),
    [
        (["bench", "-r", "0"], "error: -r/--repetitions: 0 is not in the range",
         "fix: give -r/--repetitions a whole number at least 1 and at most"),
        (["bench", "-o", "bogus"], "error: -o/--output: 'bogus' is not one of", "fix: give -o/--output one of: md,"),
        (["report", "--format", "xx", "runs/x"], "error: --format: 'xx' is not one of",
         "fix: give --format one of: "),
        (["run", "--repeat", "0"], "error: --repeat: 0 is not in the range", "fix: give --repeat a whole number at least 1"),
        (["run", "--backend", "tpu"], "error: --backend: 'tpu' is not a backend", "fix: give --backend one or more of: cpu, gpu, npu"),
        (["report"], "error: RUN_DIRS: missing argument", "fix: give RUN_DIRS (usage: edgefarm report [OPTIONS]"),
        (["run", "--repet", "3"], "error: edgefarm run: no such option --repet", "fix: did you mean --repeat, --resume"),
        (["history", "--bogus"], "error: edgefarm history: no such option --bogus", "fix: see `edgefarm history --help`"),
        (["--bogus"], "error: edgefarm: no such option --bogus", "fix: see `edgefarm --help`"),
        (["bogus"], "error: edgefarm: no such command 'bogus'", "fix: see `edgefarm --help`"),
    ],
)  # fmt: skip
def test_click_errors_say_where_and_the_fix_and_exit_2(args, where, fix):
    result = CliRunner().invoke(main, args, prog_name="edgefarm")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(where), result.stderr
    assert fix in result.stderr, result.stderr
    assert "Error: " not in result.stderr and "Usage:" not in result.stderr


def test_the_projects_own_combination_errors_speak_the_same_way():
    result = CliRunner().invoke(
        main, prog_name="edgefarm", args=["run", "--sustain", "2", "--repeat", "3", "--devices", "local"]
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: --sustain: ") and "\n  fix: drop --repeat" in result.stderr


def test_help_and_version_still_exit_0():
    assert CliRunner().invoke(main, ["run", "--help"]).exit_code == 0
    assert CliRunner().invoke(main, ["--version"]).exit_code == 0
