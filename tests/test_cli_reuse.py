"""One cache of cells for every entry point: `rankrepro run` and `rankrepro arena` take any cell
whose fingerprint file matches (pipeline/reuse.py, pipeline/freshness.is_current) from their own
output folder or from the workflow's outputs of the scale (the committed results/ at paper
scale), and compute only the others; the arena's `enter:` is checked before any cell runs.

Each test runs in a repository of its own (config/ linked to this checkout's, data/ copied, the
committed cells it needs copied), so what is "committed" is under the test's control; cells are
counted by a spy on the runner's run_cell, which the command line calls for every cell it
computes."""
import json
import os
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

import rankrepro.pipeline.runner as runner
from conftest import ROOT
from rankrepro.cli import main
from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.cells import reread_of

#: the command line or the workflow end to end over minutes: `make test-long` (run by CI), not `make test`
pytestmark = pytest.mark.long


@pytest.fixture
def repo(tmp_path, monkeypatch, repo_data):
    """A repository whose config/ and data/ are this checkout's and whose results/ holds only
    what a test copies there."""
    r = tmp_path / "repo"
    r.mkdir()
    (r / "config").symlink_to(ROOT / "config")
    # data/ hard-linked file by file, not a symbolic link: a run refuses data folders that lead
    # out of its checkout (hard links cost nothing; copied where the two cannot share a disk)
    def link(src, dst):
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    for sub in ("raw", "processed"):
        (r / "data" / sub).mkdir(parents=True)
        for ds in sorted((repo_data / sub).iterdir()):
            if ds.is_dir():
                shutil.copytree(ds, r / "data" / sub / ds.name, copy_function=link)
    monkeypatch.chdir(r)
    return r


@pytest.fixture
def calls(monkeypatch):
    """(experiment, cell) of every cell computed, in order; the cells run as they would."""
    seen: list[tuple[str, str]] = []
    real = runner.run_cell

    def spy(exp, cell_id, *a, **kw):
        seen.append((exp.name, cell_id))
        return real(exp, cell_id, *a, **kw)

    monkeypatch.setattr(runner, "run_cell", spy)
    return seen


def _commit(repo: Path, paper: str, artefact: str) -> Path:
    """Copy this checkout's committed cells of one artefact into ``repo``'s results/."""
    src = ROOT / "results" / paper / artefact / "cells"
    dest = repo / "results" / paper / artefact / "cells"
    shutil.copytree(src, dest)
    return dest


def _summary(err: str, name: str) -> str:
    lines = [ln for ln in err.splitlines() if re.match(rf"{re.escape(name)} \[\w+\]: \d+ cells: ", ln)]
    assert len(lines) == 1, err
    return lines[0]


def test_a_second_run_into_the_same_folder_reuses_every_cell(repo, calls, tmp_path, capsys):
    out = tmp_path / "out"
    name = "harrington2003/table1"
    exp = load_experiment(name, "smoke")
    n = len(exp.all_cells)
    # the vote_output=rank cells are read off their main cells' runs, in those cells' run_cell
    read = {c.id for c in exp.sensitivity_cells if reread_of(exp, c)}
    # (and the multiverse's readings with rounded votes, read off the same reading with mean votes)
    assert read and all(c.endswith("~vote_output=rank") or "~multiverse=rank." in c for c in read)
    assert main(["run", name, "--out", str(out)]) == 0
    # nothing made before: every cell computed, the readers with the cells they read
    assert sorted(c for _, c in calls) == sorted(c.id for c in exp.all_cells if c.id not in read)
    assert _summary(capsys.readouterr().err, name) == f"{name} [smoke]: {n} cells: 0 reused, {n} computed: " + \
        ", ".join(c for _, c in calls[:8]) + f" and {n - 8} more"
    res = out / "results/harrington2003"
    first = {p: p.read_bytes() for p in (res / "table1/cells").iterdir()}
    assert len(first) == 2 * n  # each results file with its fingerprint file
    csv, rec = (res / "table1.csv").read_bytes(), json.loads((res / "table1.json").read_text())
    calls.clear()
    assert main(["run", name, "--out", str(out)]) == 0
    assert calls == []
    assert _summary(capsys.readouterr().err, name) == f"{name} [smoke]: {n} cells: {n} reused ({out}), 0 computed"
    # the cells untouched, the numbers of the table and the verdicts as they were
    assert {p: p.read_bytes() for p in (res / "table1/cells").iterdir()} == first
    assert (res / "table1.csv").read_bytes() == csv
    again = json.loads((res / "table1.json").read_text())
    assert again["table"] == rec["table"] and again["claims"] == rec["claims"]

    # one more tau: only the cells that were not there before are computed (its main cell and
    # the sensitivity cells of the choices that rerun it), the rest reused
    more = ["algorithms.oap_bpm.grid.tau=[0.3,0.6,0.9,0.05]"]
    new = ({c.id for c in load_experiment(name, "smoke", overrides=more).all_cells}
           - {c.id for c in load_experiment(name, "smoke").all_cells})
    assert "oap_bpm-tau0.05" in new
    calls.clear()
    assert main(["run", name, *more, "--out", str(out)]) == 0
    assert sorted(c for _, c in calls) == sorted(new)
    assert f": {n + len(new)} cells: {n} reused ({out}), {len(new)} computed: " in capsys.readouterr().err


def test_a_cell_whose_bytes_changed_is_computed_again(repo, calls, tmp_path, capsys, monkeypatch):
    """The committed cells are copied, not computed, at paper scale; one whose results file was
    edited (its bytes no longer those its fingerprint file names) is computed again, alone."""
    name = "harrington2003/table1"
    cells = _commit(repo, "harrington2003", "table1")
    edited = "prank"
    df = pd.read_parquet(cells / f"{edited}.parquet")
    df.loc[0, "value"] += 1.0
    df.to_parquet(cells / f"{edited}.parquet", index=False)

    def stub(exp, cell_id, *a, **kw):  # the paper-scale cell's numbers without its minutes
        calls.append((exp.name, cell_id))
        return pd.read_parquet(ROOT / "results/harrington2003/table1/cells" / f"{cell_id}.parquet")

    monkeypatch.setattr(runner, "run_cell", stub)
    out = tmp_path / "out"
    assert main(["run", name, "--scale", "paper", "--out", str(out)]) == 0
    assert calls == [(name, edited)]
    n = len(load_experiment(name, "paper").all_cells)
    assert _summary(capsys.readouterr().err, name) == \
        f"{name} [paper]: {n} cells: {n - 1} reused (results/), 1 computed: {edited}"
    got = out / "results/harrington2003/table1/cells"
    for p in cells.glob("*.parquet"):  # copied byte for byte, with their fingerprint files
        if p.stem != edited:
            assert (got / p.name).read_bytes() == p.read_bytes()
            fp = p.with_suffix(".fingerprint")
            assert (got / fp.name).read_bytes() == fp.read_bytes()
    # the computed cell has its fingerprint file: a second run reuses all of them, from its folder
    assert json.loads((got / f"{edited}.fingerprint").read_text())["cell"] == edited
    calls.clear()
    assert main(["run", name, "--scale", "paper", "--out", str(out)]) == 0
    assert calls == []
    assert _summary(capsys.readouterr().err, name) == f"{name} [paper]: {n} cells: {n} reused ({out}), 0 computed"


def _data_ready(names) -> bool:
    from rankrepro.data.status import data_status

    for name in names:
        st = data_status(load_experiment(name, "paper").cfg.dataset.source)
        if st.used and not (ROOT / "data/processed" / st.used / "data.npz").is_file():
            return False
    return True


MINE = "+algorithms.mine={_target_: margin_prank.MarginPRank, label: Mine}"


def test_a_paper_scale_arena_with_one_new_learner_computes_only_its_cells(repo, calls, tmp_path, capsys,
                                                                          monkeypatch):
    """The smallest family at paper scale with a learner of one's own: every package learner's
    cell is copied from the committed results/arena/, only the new learner's are computed (here
    a stub gives them PRank's committed numbers, relabelled: the point is which cells run)."""
    from rankrepro.config_files import find_config_dir
    from rankrepro.report.arena import load_arena

    members = load_arena("online_test", find_config_dir()).experiments
    if not _data_ready(members):
        pytest.skip("needs the processed data sets of the online arena (make data)")
    for m in members:
        _commit(repo, "arena", m.split("/")[1])
    monkeypatch.syspath_prepend(str(ROOT / "examples" / "own_learner"))

    def stub(exp, cell_id, *a, **kw):
        calls.append((exp.name, cell_id))
        cell = exp.cell(cell_id)
        assert cell.algorithm == "mine", f"{exp.name} {cell_id} computed again"
        df = pd.read_parquet(ROOT / "results" / exp.paper / exp.artefact / "cells/prank.parquet")
        return df.assign(cell=cell_id, algorithm="mine", params=json.dumps(cell.params, sort_keys=True))

    monkeypatch.setattr(runner, "run_cell", stub)
    out = tmp_path / "out"
    assert main(["arena", "online_test", MINE, "--scale", "paper", "--out", str(out)]) == 0
    assert sorted(calls) == sorted((m, "mine") for m in members)
    err = capsys.readouterr().err
    for m in members:
        n = len(load_experiment(m, "paper").all_cells)  # the family's own cells, all committed
        assert _summary(err, m) == f"{m} [paper]: {n + 1} cells: {n} reused (results/), 1 computed: mine"
    rec = json.loads((out / "results/arena/comparison/online_test.json").read_text())
    assert "Mine" in {r["label"] for r in rec["learners"]}


def test_the_arena_entry_is_checked_before_any_cell_runs(repo, calls, tmp_path, capsys, monkeypatch):
    """A learner added with a grid but no `enter:` setting stops at once, naming the key, with
    nothing computed and nothing written."""
    monkeypatch.syspath_prepend(str(ROOT / "examples" / "own_learner"))
    out = tmp_path / "out"
    rc = main(["arena", "online_test", MINE[:-1] + ", grid: {margin: [0.25, 0.5]}}", "--out", str(out)])
    assert rc == 2
    err = capsys.readouterr().err
    assert "enter.mine" in err and len(err.strip().splitlines()) == 1, err
    assert calls == [] and not out.exists()
