"""A fresh clone with the committed paper-scale results recomputes nothing (reruns follow the
cells' fingerprints, not file times); adding docs/configs.md's example experiment and editing one
grid value plan exactly the new cells; and a change to the code plans exactly the cells
computed by that code (issue 26): a real change to PRank's module does, a comment-only change
to another learner's module and a change to the report's code plan nothing.  All on one
clone, whose workflow imports the clone's own package (edits included); each test's edits
are made together and checked with one dry run of the whole workflow (~10-20 s each).  These need the data mirror (the
data-backed cells are current only when their data are there) and are skipped, saying so,
without it."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import NO_MIRROR, ROOT, data_env, data_mirror, make_fresh_clone
from rankrepro.pipeline.freshness import stale_mark

#: the workflow or the command line end to end over minutes: `make test-long` (run by CI), not `make test`
pytestmark = pytest.mark.long

SNAKEMAKE = Path(sys.executable).parent / "snakemake"
#: the learners defined in algorithms/prank.py (written out by hand: what the imports must give)
PRANK_MODULE = {"prank", "si_prank", "no_prank", "mu_prank", "voted_prank"}

# docs/configs.md's example (section "Example: OAP-BPM with tau = 0.05 (a new artefact)"), as written there
CONFIGS_EXAMPLE = re.search(r"Create `config/experiment/harrington2003/bpm_tau005.yaml`:\n\n```yaml\n(.*?)```",
                           (ROOT / "docs" / "configs.md").read_text(), re.S)


def _env(clone: Path) -> dict:
    env = data_env()
    # the clone's workflow imports the clone's package, edits included
    env["PYTHONPATH"] = os.pathsep.join([str(clone / "src"), env.get("PYTHONPATH", "")])
    return env


@pytest.fixture(scope="module")
def clone(tmp_path_factory, repo_data):
    if data_mirror() is None:
        pytest.skip(NO_MIRROR)
    c = tmp_path_factory.mktemp("fresh") / "rankrepro"
    return make_fresh_clone(c, repo_data, _env(c))


def _dry_run(clone: Path) -> str:
    r = subprocess.run([str(SNAKEMAKE), "--cores", "2", "--dry-run"], cwd=clone, env=_env(clone),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout + r.stderr


def _planned(clone: Path) -> dict[str, int]:
    """Rule -> number of planned jobs."""
    out = _dry_run(clone)
    if "Nothing to be done" in out:
        return {}
    stats = out.split("Job stats:")[1].split("\n\n")[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", stats, re.M)}


def _planned_cells(clone: Path) -> tuple[set[tuple[str, str]], set[str]]:
    """(experiment, cell) of every cell a planned job computes, and the experiments of the
    planned aggregate jobs (their records).  A pack's job (rule cells_<paper>_<artefact>_<k>)
    computes those of its cells that are not current: whose fingerprint file is absent, or that
    the dry run marked stale (rankrepro.jobs.job_run_cells keeps the others)."""
    out = _dry_run(clone)
    cells, records = set(), set()
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", out):
        if block.startswith("rule run_cell:"):
            m = re.search(r"output: results/(\w+/\w+)/cells/(\S+?)\.parquet", block)
            assert m, block
            cells.add((m.group(1), m.group(2)))
        elif block.startswith("rule cells_"):
            found = re.findall(r"results/(\w+/\w+)/cells/([^,\s]+?)\.parquet", block.split("log:")[0])
            assert found, block
            # (a dry run keeps a stale cell's fingerprint file and marks the cell, freshness.stale_mark)
            cells |= {(e, c) for e, c in found if not (clone / "results" / e / "cells" / f"{c}.fingerprint").exists()
                      or (clone / stale_mark(e, c)).exists()}
        elif block.startswith(("rule aggregate:", "localrule aggregate:")):
            m = re.search(r"output: results/(\w+/\w+)\.\w+,", block)
            assert m, block
            records.add(m.group(1))
    return cells, records


def _prank_cells(clone: Path) -> set[tuple[str, str]]:
    """The cells of the runnable experiments whose learner is defined in PRank's module (from
    the unedited package's catalog, as the workflow's first dry run kept it)."""
    from rankrepro.data.status import data_status
    from rankrepro.pipeline.catalog import default_cache_dir, load_catalog

    out = set()
    for name, exp in load_catalog("paper", config_dir=clone / "config", cache_dir=default_cache_dir()).items():
        src = exp.cfg.dataset.source
        if src is not None and not data_status(src, probe=False).runnable:
            continue
        out |= {(name, c.id) for c in exp.all_cells if c.estimator in PRANK_MODULE}
    return out


def _current_copies(clone: Path) -> set[tuple[str, str]]:
    """The cells the workflow copies from a twin (pipeline.cells.twin_cells) whose fingerprint file
    is current in the clone."""
    from rankrepro.data.status import data_status
    from rankrepro.pipeline.catalog import default_cache_dir, load_catalog
    from rankrepro.pipeline.cells import twin_cells

    cat = load_catalog("paper", config_dir=clone / "config", cache_dir=default_cache_dir())
    used = {n: s.used for n, e in cat.items() for s in [data_status(e.cfg.dataset.source, probe=False)]
            if s.runnable}
    return {(n, c) for (n, c) in twin_cells(cat, used)
            if (clone / "results" / n / "cells" / f"{c}.fingerprint").exists() and not (clone / stale_mark(n, c)).exists()}


def test_fresh_clone_plans_no_cell(clone):
    jobs = _planned(clone)
    # no cell, no figure and no arena comparison (their inputs are current)
    assert not {k: n for k, n in jobs.items() if k not in ("aggregate", "report", "all")}, jobs
    # at most the records of the artefacts whose data cannot be had are rewritten (cheap)
    assert jobs.get("aggregate", 0) <= 2, jobs


def test_new_experiment_and_edited_grid_run_exactly_their_cells(clone):
    """docs/configs.md's example experiment added and one grid value of Table 1 edited, in one dry
    run: the example's two cells and the edited cell (with its sensitivity twin), nothing else."""
    assert CONFIGS_EXAMPLE, "docs/configs.md's example experiment is gone"
    path = clone / "config/experiment/harrington2003/bpm_tau005.yaml"
    t1 = clone / "config/experiment/harrington2003/table1.yaml"
    orig = t1.read_text()
    edited = orig.replace("grid: {eta: [0.2, 0.1, 0.05, 0.01]}", "grid: {eta: [0.2, 0.1, 0.05, 0.02]}")
    assert edited != orig, "Table 1's WH grid is not the one this test edits"
    path.write_text(CONFIGS_EXAMPLE.group(1))
    t1.write_text(edited)
    try:
        cells, records = _planned_cells(clone)
    finally:
        path.unlink()
        t1.write_text(orig)
    # PRank and OAP-BPM (tau = 0.05) of the new artefact
    assert {c for e, c in cells if e == "harrington2003/bpm_tau005"} == {"prank", "oap_bpm-tau0.05"}, cells
    # WH eta = 0.02, its twin of the training_rounds choice, and the multiverse's readings of it
    # (copies of that twin: WH reads no vote choice)
    t1_cells = {c for e, c in cells if e == "harrington2003/table1"}
    assert {"widrow_hoff-eta0.02", "widrow_hoff-eta0.02~training_rounds=5000"} <= t1_cells, cells
    assert all(c.startswith("widrow_hoff-eta0.02~multiverse=") and c.endswith(".5000")
               for c in t1_cells - {"widrow_hoff-eta0.02", "widrow_hoff-eta0.02~training_rounds=5000"}), cells
    assert {e for e, _ in cells} == {"harrington2003/bpm_tau005", "harrington2003/table1"}, cells
    # their records; the other records are Harrington's (one claim family: its claims are
    # adjusted together) and at most the two not-run records
    assert {"harrington2003/bpm_tau005", "harrington2003/table1"} <= records, records
    assert len({r for r in records if not r.startswith("harrington2003/")}) <= 2, records


def test_code_changes_plan_exactly_the_cells_they_compute(clone):
    """In one dry run: a real change to PRank's module, a comment and a docstring of the OAP
    ensembles' module edited (no code changed), and the report's code changed (no cell
    computes with it): exactly the cells of PRank's module's learners are planned."""
    # (that the committed results are today's code's: test_fresh_clone_plans_no_cell)
    prank = clone / "src/rankrepro/algorithms/prank.py"
    oap = clone / "src/rankrepro/algorithms/oap.py"
    html = clone / "src/rankrepro/report/html.py"
    originals = {f: f.read_text() for f in (prank, oap, html)}
    try:
        oap.write_text(originals[oap].replace('"""', '"""Edited. ', 1) + "\n# a comment\n")
        html.write_text(originals[html] + "\n\ndef _unused_helper():\n    return 1\n")
        prank.write_text(originals[prank] + "\n\n_EDITED = 1\n")
        cells, records = _planned_cells(clone)
    finally:
        for f, text in originals.items():
            f.write_text(text)
    want = _prank_cells(clone)
    # a copy of a twin whose source shares a pack with a planned cell is planned after it (the pack's
    # outputs are rewritten), but computes nothing: its fingerprint is current and it takes the
    # source's results (the multiverse's readings are copies of the one-at-a-time readings' cells)
    copies = _current_copies(clone)
    assert want and cells - copies == want
    assert records >= {e for e, _ in want}
