"""The platform spread (issue 60; docs/reproducibility.md, 'The platform spread'): what verify
accepts, what `--record-spread` keeps, what a record says, and how a kernel is chosen."""

import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from rankrepro.pipeline import platforms
from rankrepro.pipeline.integrity import file_digest
from rankrepro.pipeline.verify import CellCheck, judge


def _cell(root: Path, name: str, cell: str, payload: bytes = b"cell") -> Path:
    p = root / "results" / name / "cells" / f"{cell}.parquet"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(payload)
    return p


def _chk(by, problem="", cell="c"):
    return CellCheck("p/a", cell, not by and not problem, 10, len(by), 0, 0, problem, by_metric=by)


def test_verify_judges_a_difference_by_the_rule_for_numbers_that_move(tmp_path):
    """identical; within the last bits (1e-9 relative); within the spread measured for the cell's
    committed bytes, or for its learner's measured cell in the artefact; else it differs."""
    p = _cell(tmp_path, "p/a", "c")
    _cell(tmp_path, "p/a", "c2")
    spread = {"measured": [{"kernel": "haswell", "cells": {"p/a/c": {"sha256": file_digest(p), "found": "moved"}}}],
              "cells": {"p/a/c": {"mae": {"abs": 1e-3, "rel": 1e-3}}}, "learners": {"p/a/c": "gpor"}}
    j = lambda by, sp=spread, **kw: judge(_chk(by, **kw), sp, kw.pop("alg", "gpor"), tmp_path)  # noqa: E731
    assert j({}) == "identical"
    assert j({"mae": [1e-15, 1e-15]}, {}) == "last bits"
    assert j({"mae": [5e-4, 1e-3]}) == "platform spread"
    assert j({"mae": [2e-3, 1e-3]}) == "differs"  # beyond its spread
    assert j({"mae": [5e-4, 1e-3], "qwk": [1e-4, 1e-4]}) == "differs"  # a metric not measured
    assert j({"mae": [5e-4, 1e-3]}, {}) == "differs"  # nothing measured
    assert j({}, problem="2 rows missing") == "differs"
    # a cell not measured itself takes its learner's measured spread in the same artefact, not another's
    assert judge(_chk({"mae": [5e-4, 1e-3]}, cell="c2"), spread, "gpor", tmp_path) == "platform spread"
    assert judge(_chk({"mae": [5e-4, 1e-3]}, cell="c2"), spread, "cgpor", tmp_path) == "differs"
    # a measurement holds for the bytes it was made against: the cell made again is measured again
    p.write_bytes(b"made again")
    assert j({"mae": [5e-4, 1e-3]}) == "differs"
    assert _chk({}).passes is False  # no verdict yet


def _catalog():
    cells = [SimpleNamespace(id="c", algorithm="gpor"), SimpleNamespace(id="d", algorithm="gpr")]
    return {"p/a": SimpleNamespace(name="p/a", paper="p", artefact="a", all_cells=cells, cells=cells)}


def test_record_keeps_every_cell_measured_and_forgets_a_cell_made_again(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.setenv("NPY_DISABLE_CPU_FEATURES", "X86_V4 AVX512_ICL AVX512_SPR")
    monkeypatch.setenv("NUMBA_CPU_NAME", "haswell")
    c = _cell(tmp_path, "p/a", "c")
    d = _cell(tmp_path, "p/a", "d")
    moved = _chk({"mae": [2e-4, 3e-4]})
    moved.verdict = "differs"
    same = _chk({}, cell="d")
    assert platforms.record([moved, same], _catalog(), tmp_path, outcomes=lambda *a: []) == (2, 1)
    rec = json.loads((tmp_path / platforms.SPREAD).read_text())
    (m,) = rec["measured"]
    assert m["kernel"] == "haswell" and m["kernel_env"]["NUMBA_CPU_NAME"] == "haswell"
    assert m["cells"] == {"p/a/c": {"sha256": file_digest(c), "found": "moved"},
                          "p/a/d": {"sha256": file_digest(d), "found": "identical"}}
    assert rec["cells"] == {"p/a/c": {"mae": {"abs": 2e-4, "rel": 3e-4}}}
    assert rec["outcomes"] == {"p/a": {"haswell": []}}
    sec = platforms.record_section("p/a", tmp_path / "results", {"c": file_digest(c), "d": file_digest(d)})
    assert sec["kernels"] == {"haswell": {"cells": 2, "identical": 1, "last_bits": 0, "moved": 1}}
    assert sec["moved"] == {"c": {"mae": 2e-4}} and not sec["depends_on_platform"]
    assert "2 cell(s) recomputed under haswell: 1 move(s), the largest 0.0002 (mae of c)" in sec["text"]
    # a second measurement of the same bytes keeps the largest difference
    smaller = _chk({"mae": [1e-4, 1e-4]})
    platforms.record([smaller], _catalog(), tmp_path)
    assert json.loads((tmp_path / platforms.SPREAD).read_text())["cells"]["p/a/c"]["mae"]["abs"] == 2e-4
    # the cell made again: its old measurement is dropped, the new one alone counts
    c.write_bytes(b"made again")
    assert platforms.record_section("p/a", tmp_path / "results", {"c": file_digest(c), "d": file_digest(d)})["moved"] == {}
    platforms.record([smaller], _catalog(), tmp_path)
    rec = json.loads((tmp_path / platforms.SPREAD).read_text())
    assert rec["cells"]["p/a/c"]["mae"]["abs"] == 1e-4


def test_a_record_says_when_an_outcome_depends_on_the_platform(tmp_path):
    c = _cell(tmp_path, "p/a", "c")
    rec = {"measured": [{"kernel": "sandybridge", "cells": {"p/a/c": {"sha256": file_digest(c), "found": "moved"}}}],
           "cells": {"p/a/c": {"mae": {"abs": 0.01, "rel": 0.02}}},
           "outcomes": {"p/a": {"sandybridge": ["table c mae: verdict: 'consistent' -> 'differs'"]}}}
    (tmp_path / platforms.SPREAD).write_text(json.dumps(rec))
    sec = platforms.record_section("p/a", tmp_path / "results", {"c": file_digest(c)})
    assert sec["depends_on_platform"] and "DEPENDS ON THE PLATFORM" in sec["text"] and "'differs'" in sec["text"]
    assert platforms.record_section("p/other", tmp_path / "results", {"c": file_digest(c)}) is None


def test_outcome_changes_aggregates_again_with_the_recomputed_cells(tmp_path):
    """The verdicts across platforms: the committed record of a real artefact aggregated again with
    one cell replaced -- the same bytes change nothing; a cell whose values moved far changes a verdict."""
    import pandas as pd

    from rankrepro.pipeline.catalog import default_cache_dir, load_catalog
    from rankrepro.pipeline.integrity import cell_file
    from rankrepro.records_check import outcome_changes

    root = Path(".")
    name = "crammer_singer2005/fig6"
    catalog = load_catalog("paper", cache_dir=default_cache_dir())
    exp = catalog[name]
    cell = exp.cells[0].id
    dst = cell_file(tmp_path, exp, cell)
    dst.parent.mkdir(parents=True)
    shutil.copy(cell_file(root, exp, cell), dst)
    assert outcome_changes(catalog, name, [cell], root, tmp_path) == []
    df = pd.read_parquet(dst)
    df.loc[~df["metric"].str.contains("seconds"), "value"] *= 3.0
    df.to_parquet(dst)
    assert outcome_changes(catalog, name, [cell], root, tmp_path)


def test_a_kernel_is_chosen_by_running_again_under_its_settings(monkeypatch):
    calls = []
    monkeypatch.setattr(os, "execve", lambda exe, argv, env: calls.append((argv, env)))
    monkeypatch.setattr(platforms, "_cpu_flags", lambda: {"avx", "avx2", "avx512f"})
    with pytest.raises(platforms.KernelError, match="not a kernel setting"):
        platforms.under_kernel("nehalem9", [])
    for k in platforms.ENV_KEYS:
        monkeypatch.delenv(k, raising=False)
    platforms.under_kernel("sandybridge", ["verify", "--kernel", "sandybridge"])
    (argv, env), = calls
    assert argv[1:] == ["-m", "rankrepro.cli", "verify", "--kernel", "sandybridge"]
    assert {k: env[k] for k in platforms.ENV_KEYS} == platforms.KERNELS["sandybridge"]
    for k, v in platforms.KERNELS["sandybridge"].items():
        monkeypatch.setenv(k, v)
    platforms.under_kernel("sandybridge", [])  # already under it: runs on, no second exec
    assert len(calls) == 1 and platforms.current_kernel() == "sandybridge"
    monkeypatch.setattr(platforms, "_cpu_flags", lambda: {"avx", "avx2"})
    with pytest.raises(platforms.KernelError, match="no AVX512F"):
        platforms.under_kernel("skylakex", [])


def test_a_recomputed_cell_keeps_the_committed_times_for_the_outcomes(tmp_path):
    """A time is measured afresh on every run: the outcomes across kernels are judged with the
    committed cell's timing metrics, every other value as recomputed."""
    import pandas as pd

    rows = lambda v, t: pd.DataFrame({"cell": "c", "algorithm": "a", "params": "{}", "trial": [0, 0, 1],  # noqa: E731
                                      "metric": ["mae", "train_seconds", "train_seconds"],
                                      "round": pd.array([None, None, None], dtype="Int64"), "value": [v, t, t + 1]})
    rows(0.5, 1.0).to_parquet(tmp_path / "want.parquet")
    rows(0.6, 9.0).to_parquet(tmp_path / "got.parquet")
    from rankrepro.records_check import _with_committed_times

    out = _with_committed_times(tmp_path / "want.parquet", tmp_path / "got.parquet", tmp_path / "x" / "c.parquet")
    assert pd.read_parquet(out)["value"].tolist() == [0.6, 1.0, 2.0]


def test_the_text_names_the_largest_metric_move_and_counts_apart():
    kernels = {"haswell": {"cells": 2, "identical": 0, "last_bits": 0, "moved": 2}}
    moved = {"gpor": {"mae": 3e-4, "em_iterations": 2.0}, "cgpor": {"amae": 5e-4, "ep_unconverged": 1.0}}
    text = platforms.platform_text(kernels, moved, {})
    # an EM iteration count of 2 is not the largest move: a metric's 5e-4 is
    assert "the largest 0.0005 (amae of cgpor)" in text
    assert "EM iterations by up to 2" in text and "unconverged EP runs by up to 1" in text
    only_counts = platforms.platform_text(kernels, {"gpor": {"em_iterations": 1.0}}, {})
    assert "the largest" not in only_counts and "EM iterations by up to 1" in only_counts
