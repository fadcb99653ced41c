"""`rankrepro compare RUN_A RUN_B` (issue 57, item 5): two runs side by side, per artefact and
cell each run's mean and 95% interval and the difference with its Welch interval; the claims'
verdicts side by side; a folder without records refused in one line."""
import json
import math

from scipy import stats

from conftest import ROOT
from rankrepro.cli import main
from rankrepro.report.compare_runs import compare, difference


def _run(root, name, table, claims=()):
    p = root / "results" / f"{name}.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"name": name, "table": table, "claims": list(claims)}))


def _row(cell, mean, ci, n, label=None):
    return {"cell": cell, "label": label or cell, "metric": "test_rank_loss", "round": None,
            "mean": mean, "ci": ci, "n": n}


def test_two_learners_runs_side_by_side(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    _run(a, "harrington2003/table1", [_row("prank", 0.30, 0.02, 20), _row("mine", 0.25, 0.01, 20)],
         [{"id": "c1", "verdict": "held"}])
    _run(b, "harrington2003/table1", [_row("prank", 0.28, 0.03, 10), _row("other", 0.2, 0.01, 10)],
         [{"id": "c1", "verdict": "refuted"}])
    rows, claims, alone = compare(a, b)
    v = {r.cell: r.values() for r in rows}
    assert set(v) == {"prank", "mine", "other"}
    assert math.isclose(v["prank"]["difference"], -0.02) and v["mine"]["b_mean"] is None and v["other"]["a_mean"] is None
    # Welch: the half-widths back to standard errors, Welch-Satterthwaite df
    sa, sb = 0.02 / stats.t.ppf(0.975, 19), 0.03 / stats.t.ppf(0.975, 9)
    df = (sa**2 + sb**2) ** 2 / (sa**4 / 19 + sb**4 / 9)
    assert math.isclose(v["prank"]["difference_ci"], stats.t.ppf(0.975, df) * math.sqrt(sa**2 + sb**2))
    assert claims == [{"artefact": "harrington2003/table1", "claim": "c1", "a": "held", "b": "refuted"}]
    assert main(["compare", str(a), str(b), "--csv", str(tmp_path / "d.csv")]) == 0
    out = capsys.readouterr().out
    assert "## harrington2003/table1" in out and "B - A" in out and "c1: held / refuted (differs)" in out
    assert "BREAKS THE RULE" not in out
    assert (tmp_path / "d.csv").read_text().startswith("artefact,cell,label,metric,round,a_mean")


def test_the_committed_tree_against_itself_differs_by_zero(capsys):
    assert main(["compare", str(ROOT), str(ROOT / "results"), "harrington2003/table1"]) == 0
    rows, _, _ = compare(ROOT, ROOT / "results", ["harrington2003/table1"])
    assert rows and all(r.values()["difference"] == 0 for r in rows)


def test_a_folder_without_records_is_refused_in_one_line(tmp_path, capsys):
    assert main(["compare", str(tmp_path), str(ROOT)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no results/ folder there" in err
