"""The rule for a change that moves numbers (issue 31), on small constructed result trees:
``rankrepro.pipeline.compare`` and ``scripts/compare_results.py``."""
import copy
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT
from rankrepro.pipeline.compare import Rule, compare_trees, main, report
from rankrepro.stats import t_interval

MAE = [0.70, 0.71, 0.69, 0.72, 0.70]  # 95% half-width ~0.0146


def _cell(cell: str, mae=MAE, seconds=(1.0, 2.0, 3.0, 4.0, 5.0)) -> pd.DataFrame:
    rows = []
    for t, (m, s) in enumerate(zip(mae, seconds)):
        for metric, v in (("mae", m), ("em_iterations", 10.0), ("fit_seconds", s)):
            rows.append({"paper": "p", "artefact": "a", "cell": cell, "algorithm": "gp_model", "params": "{}",
                         "trial": t, "metric": metric, "round": pd.NA, "value": float(v)})
    df = pd.DataFrame(rows)
    df["round"] = df["round"].astype("Int64")
    return df


RECORD = {
    "status": "ran",
    "table": [{"cell": "x", "metric": "mae", "round": None, "source": "Table 1", "verdict": "consistent",
               "marks": "", "diagnosis": None}],
    "claims": [{"id": "x_beats_y", "verdict": "held", "fraction": 1.0, "diagnosis": None, "depends_on": None,
                "evidence": "x 0.704 vs y 0.800"}],
    "sensitivity": [{"choice": "draws", "flips": [], "values": [
        {"value": "5", "consistent": 1, "compared": 1, "claims": [{"id": "x_beats_y", "verdict": "held"}],
         "headline": [{"cell": "x", "metric": "mae", "verdict": "consistent"}]}]}],
}


def _tree(root, cells: dict[str, pd.DataFrame], record=RECORD):
    (root / "p" / "a" / "cells").mkdir(parents=True)
    (root / "p" / "a.json").write_text(json.dumps(record))
    for cid, df in cells.items():
        df.to_parquet(root / "p" / "a" / "cells" / f"{cid}.parquet")
    return root


@pytest.fixture
def old(tmp_path):
    return _tree(tmp_path / "old", {"x": _cell("x"), "y": _cell("y", [0.8] * 5)})


def _new(tmp_path, mae_x=MAE, record=RECORD, seconds=(9.0, 9.0, 9.0, 9.0, 9.0)):
    # new timings everywhere: never compared
    return _tree(tmp_path / "new", {"x": _cell("x", mae_x, seconds), "y": _cell("y", [0.8] * 5, seconds)}, record)


def _moved(delta: float) -> list[float]:
    return [MAE[0] + delta] + MAE[1:]


def test_identical_trees_and_new_timings_pass(tmp_path, old):
    (a,) = compare_trees(old, _new(tmp_path))
    assert a.ok and not a.changes() and [c.values for c in a.cells] == [10, 10]


def test_a_change_inside_the_rule_passes(tmp_path, old):
    new = _new(tmp_path, _moved(0.70 * 5e-10))  # 5e-10 relative
    (a,) = compare_trees(old, new)
    assert a.ok
    (ch,) = a.changes()
    assert ch.cell == "x" and ch.metric == "mae" and ch.trial == 0 and 4e-10 < ch.rel < 6e-10
    assert main([str(old), str(new)]) == 0


def test_a_change_outside_the_rule_fails(tmp_path, old, capsys):
    new = _new(tmp_path, _moved(1e-6))  # ~1.4e-6 relative, 7e-5 of the half-width
    (a,) = compare_trees(old, new)
    assert not a.ok
    (ch,) = a.changes()
    half = t_interval(MAE).half_width
    assert ch.ci_share == pytest.approx(1e-6 / half, rel=1e-6) and ch.ci_share < 0.01
    assert main([str(old), str(new)]) == 1
    out = capsys.readouterr().out
    assert "BREAKS THE RULE: p/a/x mae trial 0" in out and "not named as a different path" in out


def test_a_named_different_path_may_move_by_a_share_of_its_interval(tmp_path, old):
    half = t_interval(MAE).half_width
    inside = _new(tmp_path, _moved(0.005 * half))
    assert not compare_trees(old, inside)[0].ok  # not named: 1e-9 applies
    assert compare_trees(old, inside, Rule(different_path=("p/a/x",)))[0].ok
    assert not compare_trees(old, inside, Rule(different_path=("p/a/y",)))[0].ok  # another cell named
    assert main([str(old), str(inside), "--different-path", "p/a/*"]) == 0
    outside = _new(tmp_path / "2", _moved(0.02 * half))
    assert not compare_trees(old, outside, Rule(different_path=("p/a/*",)))[0].ok


@pytest.mark.parametrize("edit", [
    lambda r: r["claims"][0].update(verdict="not held"),
    lambda r: r["claims"][0].update(fraction=0.5),
    lambda r: r["table"][0].update(verdict="differs"),
    lambda r: r["table"][0].update(diagnosis={"kind": "open protocol choice", "choice": "draws", "text": "t"}),
    lambda r: r["sensitivity"][0].update(flips=["x_beats_y"]),
    lambda r: r["sensitivity"][0]["values"][0]["claims"][0].update(verdict="inconclusive"),
], ids=["claim verdict", "claim fraction", "table verdict", "diagnosis", "flip", "verdict under a value"])
def test_an_outcome_change_fails_even_with_identical_numbers(tmp_path, old, capsys, edit):
    rec = copy.deepcopy(RECORD)
    edit(rec)
    new = _new(tmp_path, record=rec)
    (a,) = compare_trees(old, new)
    assert not a.changes() and len(a.outcome_changes) == 1 and not a.ok
    assert main([str(old), str(new)]) == 1
    assert "OUTCOME CHANGED: p/a:" in capsys.readouterr().out


def test_evidence_text_is_reported_not_a_break(tmp_path, old):
    rec = copy.deepcopy(RECORD)
    rec["claims"][0]["evidence"] = "x 0.705 vs y 0.800"
    (a,) = compare_trees(old, _new(tmp_path, record=rec))
    assert a.ok and a.notes == ["claim x_beats_y: evidence text changed"]


def test_missing_rows_or_cells_fail(tmp_path, old):
    new = _new(tmp_path)
    df = pd.read_parquet(new / "p" / "a" / "cells" / "x.parquet")
    df[~((df["trial"] == 4) & (df["metric"] == "mae"))].to_parquet(new / "p" / "a" / "cells" / "x.parquet")
    (new / "p" / "a" / "cells" / "y.parquet").unlink()
    (a,) = compare_trees(old, new)
    problems = {c.name: c.problem for c in a.cells}
    assert problems == {"p/a/x": "1 row(s) only in the old tree, 0 only in the new one",
                        "p/a/y": "only in the old tree"}
    assert not a.ok and "BREAKS THE RULE: p/a/y: only in the old tree" in report([a])


def test_the_script_on_a_checkout_and_a_results_folder(tmp_path, old):
    checkout = tmp_path / "checkout"
    _tree(checkout / "results", {"x": _cell("x", _moved(1e-3)), "y": _cell("y", [0.8] * 5)})
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "compare_results.py"), str(old), str(checkout)],
                         capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    assert "| p/a | 2 | 1 | 1 |" in run.stdout and "1 cell(s) outside the rule" in run.stdout
    assert np.isfinite(float(run.stdout.split("| p/a | 2 | 1 | 1 | ")[1].split(" ")[0]))


def test_added_cells_and_outcomes_are_reported_not_a_break(tmp_path, old):
    rec = copy.deepcopy(RECORD)
    rec["sensitivity"].append({"choice": "step", "flips": [], "values": [
        {"value": "unchecked", "consistent": 1, "compared": 1, "claims": [{"id": "x_beats_y", "verdict": "held"}],
         "headline": []}]})
    new = _new(tmp_path, record=rec)
    _cell("x~step=unchecked").to_parquet(new / "p" / "a" / "cells" / "x~step=unchecked.parquet")
    (a,) = compare_trees(old, new)
    assert a.ok and not a.outcome_changes
    assert "1 cell(s) only in the new tree (added, not compared): x~step=unchecked" in a.notes
    assert "sensitivity step=unchecked: 2 outcomes (added)" in a.notes
    assert "sensitivity step: flips: [] (added)" in a.notes
    assert "| p/a | 2 (+1 added) | 2 | 0 |" in report([a])
    # a claim whose verdict now depends on the added choice: a change
    rec["claims"][0]["depends_on"] = [{"choice": "step", "verdicts": {"checked": "held", "unchecked": "not held"}}]
    (a,) = compare_trees(old, _new(tmp_path / "2", record=rec))
    assert not a.ok and a.outcome_changes[0].startswith("claim x_beats_y: depends on:")


def test_a_move_within_the_cell_s_platform_spread_passes_and_one_beyond_fails(tmp_path, old):
    # issue 60: a value may move by up to the largest difference the old code shows between CPU
    # kernels for that cell and metric; measured by --measure-spread from trees of the same code
    kernel_a = _new(tmp_path / "a", _moved(3e-4))
    kernel_b = _new(tmp_path / "b", [MAE[0], MAE[1] - 5e-4] + MAE[2:])
    out = tmp_path / "spread.json"
    assert main([str(old), str(kernel_a), "--also", str(kernel_b), "--measure-spread", str(out)]) == 0
    cells = json.loads(out.read_text())["cells"]
    assert list(cells) == ["p/a/x"] and list(cells["p/a/x"]) == ["mae"]  # y identical; timings apart
    assert cells["p/a/x"]["mae"]["abs"] == pytest.approx(5e-4)
    inside = _new(tmp_path / "in", _moved(4e-4))
    assert not compare_trees(old, inside)[0].ok  # the 1e-9 rule alone
    assert compare_trees(old, inside, Rule(spread=cells))[0].ok
    assert main([str(old), str(inside), "--spread", str(out)]) == 0
    beyond = _new(tmp_path / "out", _moved(6e-4))
    assert not compare_trees(old, beyond, Rule(spread=cells))[0].ok
    assert main([str(old), str(beyond), "--spread", str(out)]) == 1
    # another cell's spread does not cover this one
    assert not compare_trees(old, inside, Rule(spread={"p/a/y": cells["p/a/x"]}))[0].ok
