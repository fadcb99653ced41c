"""In a fresh clone, a change to the code plans exactly the cells computed by that code
(issue 26): the dry run of the workflow, with the clone's own package on the path, after a
real code change to PRank's module, after a comment-only change to it, and after a change to
the report's code."""
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
    c = tmp_path_factory.mktemp("coderuns") / "rankrepro"
    return make_fresh_clone(c, repo_data, _env(c))


def _planned_cells(clone: Path) -> tuple[set[tuple[str, str]], int]:
    """(experiment, cell) of every planned cell job, and the number of aggregate jobs."""
    r = subprocess.run([str(SNAKEMAKE), "--cores", "2", "--dry-run"], cwd=clone, env=_env(clone),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout + r.stderr
    cells = set()
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", out):
        if block.startswith("rule run_cell:"):
            m = re.search(r"output: results/(\w+/\w+)/cells/(\S+?)\.parquet", block)
            assert m, block
            cells.add((m.group(1), m.group(2)))
    agg = re.search(r"^aggregate\s+(\d+)$", out, re.M)
    return cells, int(agg.group(1)) if agg else 0


def _prank_cells(clone: Path) -> set[tuple[str, str]]:
    from rankrepro.data.status import data_status
    from rankrepro.config_files import list_experiments
    from rankrepro.pipeline.catalog import load_experiment

    out = set()
    for name in list_experiments(clone / "config"):
        exp = load_experiment(name, "paper", config_dir=clone / "config")
        src = exp.cfg.dataset.source
        if src is not None and not data_status(src, probe=False).runnable:
            continue
        out |= {(name, c.id) for c in exp.all_cells if c.estimator in PRANK_MODULE}
    return out


def test_code_changes_plan_exactly_the_cells_they_compute(clone):
    prank = clone / "src/rankrepro/algorithms/prank.py"
    html = clone / "src/rankrepro/report/html.py"
    orig_prank, orig_html = prank.read_text(), html.read_text()
    try:
        assert _planned_cells(clone)[0] == set()  # the committed results are today's code's
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
