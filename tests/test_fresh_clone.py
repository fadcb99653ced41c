"""A fresh clone with the committed paper-scale results recomputes nothing (reruns follow the
cells' fingerprints, not file times), and adding the README's example experiment plans
exactly its new cells.  These need the data mirror (the data-backed cells are current only
when their data are there) and are skipped, saying so, without it."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import NO_MIRROR, data_mirror, make_fresh_clone

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"

# the README's example (section "Example: OAP-BPM with tau = 0.05"), as written there
README_EXAMPLE = re.search(r"Create `config/experiment/harrington2003/bpm_tau005.yaml`:\n\n```yaml\n(.*?)```",
                           (ROOT / "README.md").read_text(), re.S)


def _env():
    env = dict(os.environ)
    mirror = ROOT.parent / "shared" / "datasets"
    if "RANKREPRO_DATA_MIRROR" not in env and mirror.is_dir():
        env["RANKREPRO_DATA_MIRROR"] = str(mirror)
    return env


def _planned(clone, *args) -> dict[str, int]:
    r = subprocess.run([str(SNAKEMAKE), "--cores", "2", "--dry-run", *args], cwd=clone, env=_env(),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout + r.stderr
    if "Nothing to be done" in out:
        return {}
    stats = out.split("Job stats:")[1].split("\n\n")[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", stats, re.M)}


@pytest.fixture(scope="module")
def clone(tmp_path_factory, repo_data):
    if data_mirror() is None:
        pytest.skip(NO_MIRROR)
    c = tmp_path_factory.mktemp("fresh") / "rankrepro"
    return make_fresh_clone(c, repo_data, _env())


def test_fresh_clone_plans_no_cell(clone):
    jobs = _planned(clone)
    assert jobs.get("run_cell", 0) == 0 and jobs.get("run_all_cells", 0) == 0, jobs
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
