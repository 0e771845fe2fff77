"""edgefarm bench's grid: llama-bench's value syntax, its bounds, the cells and the shapes refused."""

from __future__ import annotations

import pytest

from android_runner.bench import exact_text
from orchestrator.bench.grid import (
    MAX_CELLS,
    MAX_VALUES,
    Cell,
    cells,
    parse_backends,
    parse_values,
    refused_shapes,
)
from orchestrator.errors import ConfigError


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("512", (512,)),
        ("128,512", (128, 512)),
        ("0-4096+1024", (0, 1024, 2048, 3072, 4096)),
        ("128-1024*2", (128, 256, 512, 1024)),
        ("1-3", (1, 2, 3)),
        ("512,128-256*2,512", (512, 128, 256)),  # repeats dropped, order kept
        (" 64 , 32 ", (64, 32)),
    ],
)
def test_llama_bench_value_syntax(text, values):
    assert parse_values(text, "-d") == values


@pytest.mark.parametrize(
    ("text", "flag", "said"),
    [
        ("abc", "-p", "is not a number or a range"),
        ("5-2", "-p", "is empty or never ends"),
        ("1-8*1", "-p", "is empty or never ends"),
        ("0-8*2", "-d", "is empty or never ends"),
        ("0", "-p", "0 is outside 1..131072"),
        ("200000", "-d", "200000 is outside 0..131072"),
        ("1-1000", "-n", f"more than {MAX_VALUES} values"),
        ("300", "--threads", "300 is outside 1..256"),
    ],
)
def test_bad_values_are_refused_naming_the_flag(text, flag, said):
    with pytest.raises(ConfigError) as e:
        parse_values(text, flag)
    assert said in str(e.value) and f"{flag} {text}" in str(e.value) and "fix:" in str(e.value)


def test_backends_are_checked():
    assert parse_backends("cpu,gpu,cpu") == ("cpu", "gpu")
    with pytest.raises(ConfigError, match="'tpu' is not a backend"):
        parse_backends("cpu,tpu")


def test_the_cross_product_puts_settings_outermost_and_threads_only_on_cpu():
    grid = cells((128, 512), (64,), (0, 1024), ("cpu", "gpu"), (4, 8))
    assert len(grid) == 2 * 2 * 2 + 2 * 2  # cpu x 2 threads x 4 shapes, gpu x 4 shapes
    assert [c.threads for c in grid[:8]] == [4, 4, 4, 4, 8, 8, 8, 8]
    assert {c.threads for c in grid if c.backend == "gpu"} == {None}
    assert grid[0] == Cell(128, 64, 0, "cpu", 4) and grid[0].id == "p128-n64-d0-cpu-t4"
    assert Cell(512, 0, 4096, "gpu", None).id == "p512-n0-d4096-gpu"
    assert Cell.of(grid[5].spec()) == grid[5]


def test_a_grid_over_the_cell_bound_is_refused():
    with pytest.raises(ConfigError, match=f"more than {MAX_CELLS}"):
        cells(tuple(range(1, 60)), tuple(range(1, 10)), (0,), ("cpu",), (None,))


def test_shapes_over_the_token_limit_are_named_with_their_numbers():
    grid = cells((128, 1024), (128,), (0, 1024), ("cpu",), (None,))
    assert refused_shapes(grid, 2048) == ["d1024 + p1024 + n128 = 2176 tokens > the limit of 2048"]
    assert refused_shapes(grid, None) == []


def _toy_tokenizer():
    """A tokenizer that merges "ab" into one token: cuts between a and b change the count."""
    vocab = {"a": 1, "b": 2, "ab": 3, " ": 4}
    inv = {v: k for k, v in vocab.items()}

    def tokenize(text: str) -> list[int]:
        out, i = [], 0
        while i < len(text):
            if text[i : i + 2] == "ab":
                out.append(3)
                i += 2
            else:
                out.append(vocab[text[i]])
                i += 1
        return out

    return tokenize, lambda ids: "".join(inv[i] for i in ids)


def test_exact_text_finds_a_cut_whose_retokenization_has_the_count_asked():
    tokenize, detokenize = _toy_tokenizer()
    pool = [1, 2, 4] * 50  # "ab " detokenizes to a text that tokenizes as [3, 4]: the counts differ
    for count in (1, 2, 7, 40):
        assert len(tokenize(exact_text(tokenize, detokenize, pool, count))) == count
    assert exact_text(tokenize, detokenize, pool, 0) == ""


def test_exact_text_says_so_when_no_cut_fits():
    tokenize, detokenize = _toy_tokenizer()
    with pytest.raises(ValueError, match="no text of exactly 3 tokens"):
        exact_text(tokenize, detokenize, [1, 2] * 2, 3)  # "abab" is only ever 2 tokens: the pool runs out
