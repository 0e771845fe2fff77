#!/usr/bin/env python3
"""The import graph of edgefarm's own modules: how many, how many arrows, which cycles.

    python scripts/module_graph.py [--root REPO] [--arrows] [--top]

Every `import` and `from ... import` of `orchestrator` and `android_runner`, at the top of a module or
inside a function (an import hidden in a function is still an arrow), TYPE_CHECKING-only imports
included (they never run, but a module that names a later one's records in its annotations sits
below it all the same). A package's `__init__` counts as a module. The C sources of the native
runner (android_runner/native/*.c) are modules too: an arrow for each `#include "x.h"` of another
source's header and for each call of a function another source defines (a callback into the caller
is a cycle like any other). Cycles are the strongly connected components of more than one module
(Tarjan). Stdlib only: it reads the Python files with `ast`, the C files with regular expressions.
`--arrows` lists every arrow; `--top` counts the arrows between the run's stages (cli -> plan ->
execute -> finish) and lists those that climb back up (a stage importing an earlier one).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("orchestrator", "android_runner")


def module_name(path: Path, root: Path = REPO) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, name: str, known: set[str]) -> set[str]:
    """The edgefarm modules `path` imports (a `from pkg import mod` names the module when it is one)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_package = path.name == "__init__.py"
    here = name.split(".") if is_package else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                out.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.add(sub if sub in known else target)
    found = set()
    for target in out:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)
    return found


def private_imports(root: Path = REPO) -> list[str]:
    """`from <edgefarm module> import _name` anywhere (a private name used across modules)."""
    out = []
    for pkg in PACKAGES:
        for path in sorted((root / pkg).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                if isinstance(node, ast.ImportFrom) and (
                    node.level or (node.module or "").split(".")[0] in PACKAGES
                ):
                    for alias in node.names:
                        if alias.name.startswith("_") and not alias.name.startswith("__"):
                            out.append(f"{path.relative_to(root)}:{node.lineno} imports {alias.name}")
    return out


C_DIR = Path("android_runner/native")
_C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)
_C_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')
_C_DEFINED = re.compile(r"^(?!static\b)(?:[A-Za-z_][\w ]*?[\s*])(\w+)\s*\([^;{]*\)\s*\{", re.MULTILINE)
_C_CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_C_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)\.h"', re.MULTILINE)


def c_graph(root: Path = REPO) -> dict[str, set[str]]:
    """The native runner's C sources as modules (`android_runner/native/x.c` -> `native:x`): an arrow
    to the source whose header is included, and to the source that defines a function called."""
    files = {f"native:{p.stem}": p for p in sorted((root / C_DIR).glob("*.c"))}
    code = {name: _C_COMMENT.sub(" ", p.read_text(encoding="utf-8")) for name, p in files.items()}
    defined = {fn: name for name, text in code.items() for fn in _C_DEFINED.findall(text) if fn != "main"}
    out: dict[str, set[str]] = {}
    for name, text in code.items():
        arrows = {f"native:{h}" for h in _C_INCLUDE.findall(text) if f"native:{h}" in files}
        arrows |= {defined[fn] for fn in _C_CALLED.findall(_C_STRING.sub('""', text)) if fn in defined}
        out[name] = arrows - {name}
    return out


def graph(root: Path = REPO) -> dict[str, set[str]]:
    files = {module_name(p, root): p for pkg in PACKAGES for p in sorted((root / pkg).rglob("*.py"))}
    known = set(files)
    return {name: imports(path, name, known) for name, path in files.items()} | c_graph(root)


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(g.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


# The floors, top first: a module may import its own floor's modules and any lower floor's, never a
# higher one's. A module's floor is its longest entry (`orchestrator.run.plan` before `orchestrator.run`);
# a module no entry names fails the check (add it where it belongs). An entry ending in `$` names that
# module alone, one ending in `:` every module that starts with it. The run's stages are floors of their
# own: cli -> plan -> execute -> finish, each importing only later ones and the records below them.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("orchestrator.__main__", "orchestrator.cli"),  # the commands
    ("orchestrator.serve",),  # edgefarm serve: the run's runners kept loaded, its records, the database's hook
    ("orchestrator.history",),  # the results database: takes the run's and bench's records
    ("orchestrator.bench",),  # edgefarm bench: the run's stages and farm over a grid of cells
    ("orchestrator.run.plan",),
    ("orchestrator.run.execute",),
    ("orchestrator.run.finish",),
    ("orchestrator.run",),  # the stages' records (types.py), flag bounds, the sample slice
    ("orchestrator.cluster",),  # the Ray cluster's farm: the farm layer's sessions on farm hosts
    ("orchestrator.report",),  # the combined report and its printers
    ("orchestrator.farm",),  # every device's session, the stand-ins, --shard, the run folder, their records
    ("orchestrator.boards", "orchestrator.runners"),  # a board's setup; the host side of each runner
    (
        "orchestrator.inventory",
        "orchestrator.devices_yaml",
        "orchestrator.scoring",
        "orchestrator.jobs",
        "orchestrator.measure",
        "orchestrator.sustain",
        "orchestrator.progress",
        "orchestrator.interrupt",
        "orchestrator.models",
        "orchestrator.decode_bound",
        "orchestrator.printers",  # the one printer registry (its printers are named, loaded when asked)
    ),
    (
        "orchestrator.devices",
        "orchestrator.datasets",
        "orchestrator.telemetry",
        "orchestrator.model_facts",
        "orchestrator.bundled",
        "orchestrator.catalogue",  # the one figure catalogue (it reads telemetry's energy trust)
    ),
    (
        "orchestrator$",  # the package's __init__ alone
        "orchestrator.errors",
        "orchestrator.fsutil",
        "orchestrator.jsonio",
        "orchestrator.registry",
        "orchestrator.redact",
        "orchestrator.stats",
    ),
    ("android_runner",),  # what runs on a device: never the host's code
    ("native:",),  # the native phone runner's C sources
)
# Arrows that climb a floor and stay, each with its reason; at most MAX_CLIMBS of them.
ALLOWED_CLIMBS: dict[tuple[str, str], str] = {}  # none today (report/ab_length.py -> run/bounds.py was one)
MAX_CLIMBS = 3


def floor_of(name: str) -> int | None:
    """The index of `name`'s floor in FLOORS (0 = top), None when no entry names it."""
    best: tuple[int, int] | None = None  # (entry length, floor)
    for i, entries in enumerate(FLOORS):
        for entry in entries:
            if entry.endswith("$"):
                hit = name == entry[:-1]
            elif entry.endswith(":"):
                hit = name.startswith(entry)
            else:
                hit = name == entry or name.startswith(entry + ".")
            if hit and (best is None or len(entry) > best[0]):
                best = (len(entry), i)
    return None if best is None else best[1]


def climbs(g: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Arrows from a module to one on a higher floor."""
    return sorted(
        (a, b)
        for a in g
        for b in g[a]
        if (fa := floor_of(a)) is not None and (fb := floor_of(b)) is not None and fb < fa
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=REPO, help="the checkout to read (default: this one)")
    ap.add_argument("--arrows", action="store_true", help="list every arrow")
    ap.add_argument("--top", action="store_true", help="list the floors, top first")
    args = ap.parse_args()
    g = graph(args.root.resolve())
    found = cycles(g)
    print(f"modules: {len(g)}")
    print(f"arrows: {sum(len(v) for v in g.values())}")
    print(f"cycles: {len(found)}")
    for c in found:
        print("  cycle: " + " <-> ".join(c))
    private = private_imports(args.root.resolve())
    print(f"private names imported across modules: {len(private)}")
    for line in private:
        print(f"  {line}")
    if args.arrows:
        for name in sorted(g):
            for target in sorted(g[name]):
                print(f"{name} -> {target}")
    homeless = sorted(name for name in g if floor_of(name) is None)
    print(f"modules on no floor: {len(homeless)}")
    for name in homeless:
        print(f"  {name}: add it to FLOORS in scripts/module_graph.py")
    up = climbs(g)
    unexplained = [arrow for arrow in up if arrow not in ALLOWED_CLIMBS]
    print(f"floors: {len(FLOORS)}; arrows climbing a floor: {len(up)} (allowed: {len(ALLOWED_CLIMBS)}, at most {MAX_CLIMBS})")
    for a, b in up:
        print(f"  {a} -> {b}" + (f"  (allowed: {ALLOWED_CLIMBS[(a, b)]})" if (a, b) in ALLOWED_CLIMBS else ""))
    if args.top:
        for i, entries in enumerate(FLOORS):
            print(f"  floor {i}: {', '.join(entries)}")
    bad = found or private or homeless or unexplained or len(ALLOWED_CLIMBS) > MAX_CLIMBS
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
