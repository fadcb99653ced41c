"""The tidy export read back: Harrington (2003) Table 1 computed again from it (mean and 95%
Student-t half-width over trials, with scipy's t quantile) equals the committed record's table;
the CSV and the parquet hold the same rows and values, and every committed value is there."""
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rankrepro.report.export import COLUMNS, export, read_export

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "results" / "harrington2003" / "table1.json"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("export")
    paths = export(out, root=ROOT, only=["harrington2003/table1"])
    assert sorted(p.name for p in paths) == ["DATA_DICTIONARY.md", "harrington2003.csv.gz", "harrington2003.parquet"]
    return out


def test_table1_recomputed_from_the_export_equals_the_record(exported):
    rec = json.loads(RECORD.read_text())
    for name in ("harrington2003.parquet", "harrington2003.csv.gz"):
        df = read_export(exported / name)
        main = df[df["sensitivity_choice"].isna()]
        compared = 0
        for row in rec["table"]:
            sel = main[(main["cell"] == row["cell"]) & (main["metric"] == row["metric"])]
            sel = sel[sel["round"].isna()] if row["round"] is None else sel[sel["round"] == row["round"]]
            x = sel["value"].to_numpy(np.float64)
            assert x.size == row["n"] == rec["n_trials"]
            assert sorted(sel["trial"]) == list(range(x.size))
            half = stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size)
            assert x.mean() == pytest.approx(row["mean"], abs=1e-12, rel=0)
            assert half == pytest.approx(row["ci"], abs=1e-12, rel=0)
            assert sel["label"].unique().tolist() == [row["label"]]
            compared += 1
        # the 15 main cells (PRank, voted PRank, Widrow-Hoff at 4 steps, OAP-BPM/Bagg/VP at 3 taus) x the
        # record's 6 metrics (the paper's online and test rank loss, AMAE and kappa of each)
        assert len({r["metric"] for r in rec["table"]}) == 6
        assert compared == len(rec["table"]) == 15 * 6


def test_every_committed_value_is_exported_once(exported):
    pq = read_export(exported / "harrington2003.parquet")
    csv = read_export(exported / "harrington2003.csv.gz")
    assert len(pq) == len(csv)
    assert np.array_equal(pq["value"].to_numpy(np.float64), csv["value"].to_numpy(np.float64), equal_nan=True)
    assert (pq["cell"].to_numpy() == csv["cell"].to_numpy()).all()
    cells = sorted((ROOT / "results" / "harrington2003" / "table1" / "cells").glob("*.parquet"))
    committed = pd.concat([pd.read_parquet(f) for f in cells], ignore_index=True)
    key = ["cell", "trial", "metric", "round"]
    m = committed.merge(pq, on=key, how="outer", suffixes=("_c", "_e"), indicator=True)
    assert (m["_merge"] == "both").all() and len(m) == len(committed)
    assert np.array_equal(m["value_c"].to_numpy(np.float64), m["value_e"].to_numpy(np.float64), equal_nan=True)
    assert (m["params_c"] == m["params_e"]).all()


def test_columns_sensitivity_and_grid(exported):
    df = read_export(exported / "harrington2003.parquet")
    documented = [c for c in COLUMNS if c != "param_<name>"]
    assert [c for c in df.columns if not c.startswith("param_")] == documented
    assert sorted(c for c in df.columns if c.startswith("param_")) == ["param_eta", "param_tau"]
    rec = json.loads(RECORD.read_text())
    for s in rec["sensitivity_cells"]:
        sel = df[df["cell"] == s["id"]]
        assert len(sel) and set(sel["sensitivity_choice"]) == {s["choice"]}
        assert set(sel["sensitivity_value"]) == {str(s["value"])} and set(sel["base_cell"]) == {s["base"]}
    bpm = df[df["cell"] == "oap_bpm-tau0.6"]
    assert set(bpm["param_tau"]) == {0.6} and bpm["param_eta"].isna().all()
    assert set(bpm["grid"]) == {json.dumps({"tau": 0.6})}
    text = (exported / "DATA_DICTIONARY.md").read_text()
    assert all(f"`{c}`" in text for c in COLUMNS)


def test_docs_carry_the_data_dictionary():
    from rankrepro.report.export import dictionary_markdown

    # regenerate: python -c "from rankrepro.report.export import dictionary_markdown as d; open('docs/export.md', 'w').write(d())"
    assert (ROOT / "docs" / "export.md").read_text() == dictionary_markdown()


@pytest.mark.parametrize("scale", ["OUTSIDE", "../paper", "a/b", "smoke.", ""])
def test_a_scale_that_is_not_a_plain_name_is_refused(scale, tmp_path, capsys, monkeypatch):
    """Before: `rankrepro export --scale ../../x` read runs/../../x/results, a tree outside the
    checkout, and exported it."""
    import os

    from rankrepro.cli import main

    monkeypatch.chdir(ROOT)
    if scale == "OUTSIDE":  # a results tree outside the checkout, reached from runs/
        (tmp_path / "x" / "results" / "p").mkdir(parents=True)
        (ROOT / "runs").mkdir(exist_ok=True)  # the outputs' folder (ignored by git), as after any run
        scale = os.path.relpath(tmp_path / "x", ROOT / "runs")
    assert main(["export", "--scale", scale, "--out", str(tmp_path / "ex")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"rankrepro: error: export --scale {scale!r}: a scale is a plain name (letters, digits, _ and -: "
                   "paper, smoke, ...), read from runs/<scale>/ (paper: results/), never a path"), err
    assert not (tmp_path / "ex").exists()


def _copy_artefact(dest, name="harrington2003/table1"):
    import shutil

    (dest / "results" / name).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "results" / f"{name}.json", dest / "results" / f"{name}.json")
    shutil.copytree(ROOT / "results" / name / "cells", dest / "results" / name / "cells")


def test_a_cell_value_edited_by_hand_is_refused_in_one_line(tmp_path, capsys, monkeypatch):
    """Before: the export read the cells as they were, an edited value included (issue 58, item 3):
    each record's cells_sha256 is checked first."""
    import pandas as pd

    from rankrepro.cli import main

    _copy_artefact(tmp_path / "mine")
    monkeypatch.chdir(ROOT)
    assert main(["export", "--from", str(tmp_path / "mine"), "--out", str(tmp_path / "ok")]) == 0
    cell = tmp_path / "mine/results/harrington2003/table1/cells/prank.parquet"
    df = pd.read_parquet(cell)
    df.loc[df.index[0], "value"] += 1e-3
    df.to_parquet(cell)
    capsys.readouterr()
    assert main(["export", "--from", str(tmp_path / "mine"), "--out", str(tmp_path / "ex")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "export refused" in err and "prank.parquet" in err, err
    assert not (tmp_path / "ex" / "harrington2003.parquet").exists()


def test_a_run_of_ones_own_is_exported(tmp_path, capsys, monkeypatch):
    """`rankrepro export --from <the --out folder of rankrepro run>` (issue 57, item 5)."""
    from rankrepro.cli import main
    from rankrepro.report.export import read_export

    monkeypatch.chdir(ROOT)
    run = tmp_path / "run"
    assert main(["run", "crammer_singer2005/fig6", "experiment.seed=7", "--out", str(run)]) == 0
    capsys.readouterr()
    assert main(["export", "--from", str(run), "--out", str(tmp_path / "ex")]) == 0
    t = read_export(tmp_path / "ex" / "crammer_singer2005.parquet")
    assert set(t["artefact"]) == {"fig6"} and t["trial"].max() == 1 and len(t) > 0
    assert main(["export", "--from", str(tmp_path / "nothing"), "--out", str(tmp_path / "ex2")]) == 2
    assert "no results/ folder there" in capsys.readouterr().err
