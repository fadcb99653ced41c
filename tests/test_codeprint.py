"""Code-aware fingerprints (issue 26) and `rankrepro verify`.

A cell's fingerprint hashes the code its numbers come from: the import closure of its
protocol, learner and data builder inside the package (read from the modules' own imports),
each module by its syntax tree without docstrings, and the numeric libraries' major.minor.
Comments and docstrings change nothing; code does; editing PRank's module touches exactly the
cells that run a learner of that module (OAP's PRank members run the compiled step of
_compiled.py, which every cell of a compiled learner has in its code).  `verify` recomputes committed cells and
compares them bit for bit, timing metrics apart."""
import hashlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT
from rankrepro.pipeline import codeprint
from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.cells import cell_fingerprint

#: the learners of algorithms/prank.py, and every learner that runs the compiled PRank step of
#: algorithms/_compiled.py (the PRank family, OAP's members, and the compiled MCP/WH baselines),
#: written out by hand: the test of what the code's imports give
PRANK_FAMILY = {"prank", "si_prank", "no_prank", "mu_prank", "voted_prank"}
COMPILED = PRANK_FAMILY | {"oap_bpm", "oap_bagg", "oap_vp", "mcp", "widrow_hoff"}


def test_comments_docstrings_and_layout_change_nothing_code_does():
    a = '"""doc"""\nimport numpy as np\ndef f(x):\n    """doc"""\n    # note\n    return x + 1\n'
    b = '"""other"""\nimport numpy as np\n\n\ndef f(x):  # why\n    """changed"""\n    return (x\n            + 1)\n'
    assert codeprint.canonical(a) == codeprint.canonical(b)
    assert codeprint.canonical(a) != codeprint.canonical(a.replace("x + 1", "x + 2"))
    assert codeprint.canonical(a) != codeprint.canonical(a.replace("def f(x)", "def f(x, y=0)"))


def test_closure_follows_imports_and_registries_by_name():
    mods, libs = codeprint.closure(("rankrepro.protocols.online",))
    # the protocol's own imports, the feature maps taken by name from the algorithms registry ...
    assert {"rankrepro.protocols.base", "rankrepro.metrics", "rankrepro.algorithms.feature_maps",
            "rankrepro.algorithms", "rankrepro.data.builders"} <= set(mods)
    # ... but not every learner and builder the registries import
    assert not {"rankrepro.algorithms.prank", "rankrepro.algorithms.baselines", "rankrepro.data.cf"} & set(mods)
    assert "numpy" in libs
    mods, _ = codeprint.closure(("rankrepro.algorithms.oap",))
    assert {"rankrepro.algorithms._compiled", "rankrepro.algorithms.base"} <= set(mods)
    # reading the processed arrays is not making them: no reader or preprocessing in a cell's code
    mods, _ = codeprint.closure(("rankrepro.data.cf",))
    assert "rankrepro.data.arrays" in mods and not {"rankrepro.data.preprocess", "rankrepro.data.readers"} & set(mods)


@pytest.mark.parametrize("name", ["harrington2003/table1", "harrington2003/table2_cystic_fibrosis",
                                  "crammer_singer2005/fig6"])
def test_prank_module_is_in_exactly_the_prank_cells(name):
    exp = load_experiment(name, "paper")
    for c in exp.all_cells:
        mods = codeprint.cell_identity(*exp.variant_of(c))["modules"]
        assert ("rankrepro.algorithms.prank" in mods) == (c.estimator in PRANK_FAMILY), c.id
        assert ("rankrepro.algorithms._compiled" in mods) == (c.estimator in COMPILED), c.id
        assert ("rankrepro.algorithms.oap" in mods) == c.estimator.startswith("oap_"), c.id
        assert "rankrepro.report.html" not in mods and "rankrepro.cli" not in mods
        assert "rankrepro.pipeline.seeding" in mods


def test_fingerprint_follows_the_code(monkeypatch):
    exp = load_experiment("harrington2003/table1", "paper")
    prank, wh = exp.cell("prank"), exp.cell("widrow_hoff-eta0.1")
    before = {c.id: cell_fingerprint(exp, c) for c in (prank, wh)}
    real = codeprint.module_digest

    def edited(name):  # PRank's module with another body
        return "0" * 16 if name == "rankrepro.algorithms.prank" else real(name)

    monkeypatch.setattr(codeprint, "module_digest", edited)
    assert cell_fingerprint(exp, prank) != before["prank"]
    assert cell_fingerprint(exp, wh) == before["widrow_hoff-eta0.1"]
    monkeypatch.setattr(codeprint, "module_digest", real)
    monkeypatch.setattr(codeprint, "library_version", lambda dist: "0.0")  # another numpy, numba, ...
    assert cell_fingerprint(exp, wh) != before["widrow_hoff-eta0.1"]


def test_records_carry_their_code():
    r = json.loads((ROOT / "results/harrington2003/table1.json").read_text())
    exp = load_experiment("harrington2003/table1", "paper")
    assert r["code"] == codeprint.experiment_identity(exp)
    assert r["code"]["modules"]["rankrepro.algorithms.prank"] == codeprint.module_digest("rankrepro.algorithms.prank")


# -------------------------------------------------------------------------------------
# verify
# -------------------------------------------------------------------------------------
def test_compare_is_bitwise_and_skips_timing():
    from rankrepro.metrics import TIMING_METRICS
    from rankrepro.pipeline.verify import compare

    want = pd.DataFrame({"cell": "c", "algorithm": "a", "params": "{}", "trial": [0, 0, 0, 1],
                         "metric": ["m", "m", sorted(TIMING_METRICS)[0], "m"], "round": pd.array([1, 2, None, 1], "Int64"),
                         "value": [0.1, float("nan"), 3.0, 0.5]})
    got = want.copy()
    got.loc[2, "value"] = 99.0  # a timing metric: not compared
    assert compare(got, want)[:3] == (True, 3, 0)
    got.loc[3, "value"] = 0.5 + 2 ** -53  # one ulp-level change is a difference
    same, n, n_diff, max_abs, max_rel, problem = compare(got, want)
    assert not same and n_diff == 1 and 0 < max_abs < 1e-15 and max_rel < 1e-15 and not problem
    same, *_, problem = compare(got.iloc[:3], want)
    assert not same and "1 committed row(s) not recomputed" in problem


def _scratch_root(tmp_path, name, cell):
    """A results tree holding one committed cell (and the record) of ``name``."""
    root = tmp_path / "repo"
    paper, artefact = name.split("/")
    d = root / "results" / paper / artefact / "cells"
    d.mkdir(parents=True)
    for ext in ("parquet", "fingerprint"):
        shutil.copy(ROOT / "results" / paper / artefact / "cells" / f"{cell}.{ext}", d / f"{cell}.{ext}")
    shutil.copy(ROOT / "results" / f"{name}.json", root / "results" / f"{name}.json")
    return root, d / f"{cell}.parquet"


def test_verify_recomputes_and_catches_a_changed_number(tmp_path):
    """The committed cell recomputed at paper scale is identical; the same cell with one value
    changed in its committed file is caught, with the size of the change."""
    from rankrepro.pipeline.verify import run

    name, cell = "harrington2003/fig2", "widrow_hoff-eta0.1"
    exp = load_experiment(name, "paper")
    root, parquet = _scratch_root(tmp_path, name, cell)
    lines = []
    checks = run({name: exp}, root=root, echo=lines.append)
    assert [(c.cell, c.identical) for c in checks] == [(cell, True)]
    assert (root / "runs/verify/results/harrington2003/fig2/cells" / f"{cell}.parquet").is_file()
    df = pd.read_parquet(parquet)
    k = df.index[df["metric"] != "wall_seconds"][5]
    df.loc[k, "value"] = df.loc[k, "value"] + 1e-3
    df.to_parquet(parquet)
    checks = run({name: exp}, root=root, echo=lines.append)
    assert not checks[0].identical and checks[0].differing == 1 and checks[0].max_abs == pytest.approx(1e-3)
    assert f"| {name} | 1 | 0 | 1 |" in lines[-1]


def test_verify_record_refreshes_the_fingerprint_and_says_so(tmp_path):
    from rankrepro.pipeline.freshness import fingerprint_text
    from rankrepro.pipeline.verify import run

    name, cell = "crammer_singer2005/fig6", "widrow_hoff-eta0.2"
    exp = load_experiment(name, "paper")
    root, parquet = _scratch_root(tmp_path, name, cell)
    fp = parquet.with_suffix(".fingerprint")
    fp.write_text("made by other code\n")
    run({name: exp}, root=root, record=True, echo=lambda s: None)
    assert fp.read_text() == fingerprint_text(exp, cell, "", hashlib.sha256(parquet.read_bytes()).hexdigest())
    r = json.loads((root / "results" / f"{name}.json").read_text())
    assert r["verified"]["cells"] == 1 and r["verified"]["identical"] == 1 and r["verified"]["date"]


def test_verify_against_a_run_of_this_code_compares_its_cells(tmp_path):
    """--against: a cell another results tree holds as this code made it (its fingerprint file
    current) is compared as it is there, nothing recomputed, and a changed value there is
    caught; a cell whose fingerprint there is not current is recomputed here."""
    from rankrepro.pipeline.freshness import write_fingerprint
    from rankrepro.pipeline.verify import run

    name, cell = "harrington2003/fig2", "widrow_hoff-eta0.1"
    exp = load_experiment(name, "paper")
    root, parquet = _scratch_root(tmp_path, name, cell)
    other = tmp_path / "other" / "results"
    od = other / "harrington2003" / "fig2" / "cells"
    od.mkdir(parents=True)
    shutil.copy(parquet, od / f"{cell}.parquet")
    write_fingerprint(exp, cell, None, od / f"{cell}.fingerprint")
    lines = []
    checks = run({name: exp}, root=root, echo=lines.append, against=other)
    assert [(c.cell, c.identical, c.source) for c in checks] == [(cell, True, str(other))]
    assert not (root / "runs/verify").exists()  # nothing recomputed
    assert "1 of 1 cell(s) compared as computed in" in lines[-1]
    df = pd.read_parquet(od / f"{cell}.parquet")
    k = df.index[df["metric"] != "wall_seconds"][3]
    df.loc[k, "value"] = df.loc[k, "value"] + 1e-3
    df.to_parquet(od / f"{cell}.parquet")
    write_fingerprint(exp, cell, None, od / f"{cell}.fingerprint")
    checks = run({name: exp}, root=root, echo=lines.append, against=other)
    assert checks[0].source and not checks[0].identical and checks[0].differing == 1
    # made by other code there: recomputed here
    (od / f"{cell}.fingerprint").write_text("made by other code\n")
    checks = run({name: exp}, root=root, echo=lines.append, against=other)
    assert checks[0].source == "" and checks[0].identical
    assert (root / "runs/verify/results/harrington2003/fig2/cells" / f"{cell}.parquet").is_file()


def test_verify_cli_names_an_unknown_experiment():
    from rankrepro.cli import main

    assert main(["verify", "harrington2003/tabel1"]) == 2
