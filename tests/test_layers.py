"""The package's floors (issue 15): the lower floors -- algorithms/, data/, protocols/,
metrics.py, stats.py, io.py -- import nothing from the upper ones (pipeline/, report/, the
command line), and no module imports itself back through others (no import cycle).

Every import statement counts, also those inside functions (a lazy import is still a
dependency); the imports are read from the source (ast), nothing is executed."""
import ast
from pathlib import Path

import pytest

from conftest import ROOT

SRC = ROOT / "src"
PACKAGE = "rankrepro"
#: the lower floors, as module-name prefixes
LOWER = ("rankrepro.algorithms", "rankrepro.data", "rankrepro.protocols", "rankrepro.metrics", "rankrepro.stats",
         "rankrepro.io")
#: what the lower floors must not import
UPPER = ("rankrepro.pipeline", "rankrepro.report", "rankrepro.cli", "rankrepro.jobs")
#: the top floor: the Snakemake-facing entry points and the command line
TOP = ("rankrepro.jobs", "rankrepro.cli")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in (SRC / PACKAGE).rglob("*.py")}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that module ``name`` imports (any statement, any depth)."""
    is_pkg = path.name == "__init__.py"
    here = name if is_pkg else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            # `from pkg import sub` imports the submodule pkg.sub; `from mod import name`, mod
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for t in targets:
            # the deepest module of the package the dotted name lies in
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t.startswith(PACKAGE) and t != name:
                found.add(t)
    return found


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    return {m: _imports(m, p, known) for m, p in mods.items()}


def _is(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_is_read():
    """The parser finds known edges (else the checks below would pass vacuously)."""
    g = _graph()
    assert "rankrepro.protocols.base" in g["rankrepro.protocols.online"]
    assert "rankrepro.data.builders" in g["rankrepro.protocols.online"]
    assert "rankrepro.pipeline.cells" in g["rankrepro.pipeline.runner"]
    assert "rankrepro.algorithms._compiled" in g["rankrepro.algorithms.oap"]  # `from . import _compiled as K`
    assert "rankrepro.data.fetch" in g["rankrepro.data.status"]  # an import inside a function


def test_lower_floors_import_nothing_from_the_upper_ones():
    bad = [f"{m} imports {t}" for m, ts in sorted(_graph().items()) if _is(m, LOWER)
           for t in sorted(ts) if _is(t, UPPER)]
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_the_pipeline_imports_neither_the_report_nor_the_top_floor():
    """pipeline/ (catalog, runner, fingerprints, verify) sits below report/ and the entry points:
    the jobs that aggregate or draw (jobs.py) live on the top floor beside the command line."""
    bad = [f"{m} imports {t}" for m, ts in sorted(_graph().items()) if _is(m, ("rankrepro.pipeline",))
           for t in sorted(ts) if _is(t, ("rankrepro.report", *TOP))]
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_no_import_cycle():
    cycles = _cycles(_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


@pytest.mark.parametrize("graph, want", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": set(), "c": {"a", "b"}}, []),
])
def test_cycle_finder(graph, want):
    assert _cycles(graph) == want
