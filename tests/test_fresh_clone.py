"""A fresh clone with the committed paper-scale results recomputes nothing (reruns follow the
cells' fingerprints, not file times); adding the README's example experiment, or editing one
grid value, plans exactly the new cells; and a change to the code plans exactly the cells
computed by that code (issue 26): after a real change to PRank's module, after a
comment-only change to it, and after a change to the report's code.  All on one clone, whose
workflow imports the clone's own package (edits included).  These need the data mirror (the
data-backed cells are current only when their data are there) and are skipped, saying so,
without it."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import NO_MIRROR, ROOT, data_mirror, make_fresh_clone

SNAKEMAKE = Path(sys.executable).parent / "snakemake"
#: the learners defined in algorithms/prank.py (written out by hand: what the imports must give)
PRANK_MODULE = {"prank", "si_prank", "no_prank", "mu_prank", "voted_prank"}

# the README's example (section "Example: OAP-BPM with tau = 0.05"), as written there
README_EXAMPLE = re.search(r"Create `config/experiment/harrington2003/bpm_tau005.yaml`:\n\n```yaml\n(.*?)```",
                           (ROOT / "README.md").read_text(), re.S)


def _env(clone: Path) -> dict:
    env = dict(os.environ)
    if "RANKREPRO_DATA_MIRROR" not in env and data_mirror() is not None:
        env["RANKREPRO_DATA_MIRROR"] = str(data_mirror())
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


def _planned_cells(clone: Path) -> tuple[set[tuple[str, str]], int]:
    """(experiment, cell) of every planned cell job, and the number of aggregate jobs."""
    out = _dry_run(clone)
    cells = set()
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", out):
        if block.startswith("rule run_cell:"):
            m = re.search(r"output: results/(\w+/\w+)/cells/(\S+?)\.parquet", block)
            assert m, block
            cells.add((m.group(1), m.group(2)))
    agg = re.search(r"^aggregate\s+(\d+)$", out, re.M)
    return cells, int(agg.group(1)) if agg else 0


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


def test_fresh_clone_plans_no_cell(clone):
    jobs = _planned(clone)
    # no cell, no figure and no arena comparison (their inputs are current)
    assert not {k: n for k, n in jobs.items() if k not in ("aggregate", "report", "all")}, jobs
    # at most the records of the artefacts whose data cannot be had are rewritten (cheap)
    assert jobs.get("aggregate", 0) <= 2, jobs


def test_readme_example_runs_exactly_its_new_cells(clone):
    assert README_EXAMPLE, "the README's example experiment is gone"
    path = clone / "config/experiment/harrington2003/bpm_tau005.yaml"
    path.write_text(README_EXAMPLE.group(1))
    try:
        jobs = _planned(clone)
        assert jobs.get("run_cell") == 2, jobs  # PRank and OAP-BPM (tau = 0.05)
        assert 1 <= jobs.get("aggregate", 0) <= 3, jobs  # the new artefact (and at most the not-run records)
    finally:
        path.unlink()
    # an edit that changes one cell reruns that cell only (and its sensitivity twin)
    t1 = clone / "config/experiment/harrington2003/table1.yaml"
    orig = t1.read_text()
    t1.write_text(orig.replace("grid: {eta: [0.2, 0.1, 0.05, 0.01]}", "grid: {eta: [0.2, 0.1, 0.05, 0.02]}"))
    try:
        jobs = _planned(clone)
        assert jobs.get("run_cell") == 2, jobs  # WH eta = 0.02, and its twin of the training_rounds choice
    finally:
        t1.write_text(orig)


def test_code_changes_plan_exactly_the_cells_they_compute(clone):
    # (that the committed results are today's code's: test_fresh_clone_plans_no_cell)
    prank = clone / "src/rankrepro/algorithms/prank.py"
    html = clone / "src/rankrepro/report/html.py"
    orig_prank, orig_html = prank.read_text(), html.read_text()
    try:
        # a comment and a docstring of PRank's module edited (no code changed), and the report's
        # code changed (no cell computes with it): nothing planned
        prank.write_text(orig_prank.replace('"""', '"""Edited. ', 1) + "\n# a comment\n")
        html.write_text(orig_html + "\n\ndef _unused_helper():\n    return 1\n")
        assert _planned_cells(clone)[0] == set()
        html.write_text(orig_html)
        # a real change to PRank's module: exactly the cells of its learners, and their records
        prank.write_text(orig_prank + "\n\n_EDITED = 1\n")
        cells, n_agg = _planned_cells(clone)
        want = _prank_cells(clone)
        assert want and cells == want
        assert n_agg >= len({e for e, _ in want})
    finally:
        prank.write_text(orig_prank)
        html.write_text(orig_html)
