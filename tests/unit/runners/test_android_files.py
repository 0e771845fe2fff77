"""A run's files off the phone in one shell call, under mksh (Android's shell): every sample's small
files read by the shell itself, the runner's records by `cat`, the text exactly what the files hold."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path, PurePosixPath

from orchestrator.runners.android_files import read_phone_files
from orchestrator.runners.android_snapshots import SNAPSHOT_FILES

MKSH = shutil.which("mksh") or "mksh"  # scripts/test.sh installs it; missing, the test fails naming it


class LocalShell:
    """The Device protocol's `run` on this host's mksh, with PATH holding only a `cat` that counts its runs."""

    def __init__(self, tmp: Path) -> None:
        self.bin, self.calls = tmp / "bin", tmp / "cat-calls"
        self.bin.mkdir()
        cat = self.bin / "cat"
        cat.write_text(f'#!{MKSH}\necho x >> {self.calls}\nexec {shutil.which("cat")} "$@"\n')
        cat.chmod(0o755)

    def run(self, argv, *, timeout_s, on_line):
        assert argv[0] == "sh"
        p = subprocess.run([MKSH, *argv[1:]], check=False, capture_output=True, text=True, timeout=timeout_s,
                           env={"PATH": str(self.bin)})  # fmt: skip
        assert p.returncode == 0, p.stderr
        for line in p.stdout.splitlines():
            on_line(line)

    def cats(self) -> int:
        return len(self.calls.read_text().splitlines()) if self.calls.exists() else 0


def test_every_file_comes_back_as_written_and_sample_files_start_no_process(tmp_path):
    job = tmp_path / "job"
    (job / "samples").mkdir(parents=True)
    (job / "results.jsonl").write_text('{"n": 0}\n{"n": 1}\n')
    (job / "loads.tsv").write_text("no newline at the end")
    texts = {"": "", "one\n": "one", "-n\n": "-n", "a\\tb \\\\c\n  indented\n": "a\\tb \\\\c\n  indented",
             "no newline": "no newline", "@@ not a marker\n\nlast\n": "@@ not a marker\n\nlast"}  # fmt: skip
    expected = {"results.jsonl": '{"n": 0}\n{"n": 1}', "loads.tsv": "no newline at the end"}
    for n in range(40):
        folder = job / "samples" / str(n)
        folder.mkdir()
        for i, name in enumerate(SNAPSHOT_FILES):
            written = list(texts)[(n + i) % len(texts)]
            (folder / name).write_text(written)
            expected[f"samples/{n}/{name}"] = texts[written]
    shell = LocalShell(tmp_path)

    got = read_phone_files(shell, PurePosixPath(job), ["results.jsonl", "runner.log", "loads.tsv"], SNAPSHOT_FILES)

    assert got == expected  # runner.log does not exist: absent, not empty
    assert shell.cats() == 2  # the two records that exist; none for the 280 sample files
