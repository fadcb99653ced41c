"""One job per paper (batch mode, `make smoke`): the records, tables and figures it writes are
byte for byte what the per-artefact aggregate and figure jobs write from the same cells, and the
workflow plans it in place of those jobs."""
import subprocess
import sys
from pathlib import Path

import pytest

from rankrepro.jobs import job_aggregate, job_figure, job_run_all_cells, job_summarise

#: the command line or the workflow end to end over minutes: `make test-long` (run by CI), not `make test`
pytestmark = pytest.mark.long

ROOT = Path(__file__).resolve().parents[1]
PAPER = ("crammer_singer2005/fig6", "crammer_singer2005/fig7_min100")  # one claim family: each the other's sibling


@pytest.fixture(scope="module")
def cells(tmp_path_factory, repo_data):
    d = tmp_path_factory.mktemp("cells")
    paths = {}
    for name in PAPER:
        paths[name] = str(d / name / "all_cells.parquet")  # the workflow's layout: the experiment named by it
        job_run_all_cells(name, "smoke", str(ROOT / "config"), paths[name])
    return paths


def _outputs(d: Path, name: str) -> dict:
    stem = str(d / name.replace("/", "__"))
    return {"csv": stem + ".csv", "md": stem + ".md", "json": stem + ".json", "png": stem + ".png",
            "pdf": stem + ".pdf"}


def _apart(cells: dict, config: str, apart: Path, together: Path, figures: bool) -> list[dict]:
    """Each artefact's record (and figure) by its own jobs into ``apart``; returns the parts a
    paper's job is given to write the same files into ``together``."""
    parts = []
    for name in PAPER:
        siblings = [p for n, p in cells.items() if n != name]
        o = _outputs(apart, name)
        job_aggregate(name, "smoke", config, [cells[name]], o["csv"], o["md"], o["json"], status={"runnable": True},
                      siblings=siblings)
        if figures:
            job_figure(name, "smoke", config, o["csv"], o["png"], o["pdf"], record=o["json"])
        outs = {k: v for k, v in _outputs(together, name).items() if figures or k in ("csv", "md", "json")}
        parts.append({"experiment": name, "cells": [cells[name]], "siblings": siblings, "status": {"runnable": True},
                      **outs})
    return parts


def test_one_job_per_paper_writes_what_the_per_artefact_jobs_write(cells, tmp_path):
    # (both read the experiments as the jobs do: the resolved file a workflow run left, else composed)
    config = str(ROOT / "config")
    apart, together = tmp_path / "apart", tmp_path / "together"
    apart.mkdir()
    together.mkdir()
    parts = _apart(cells, config, apart, together, figures=True)
    job_summarise("smoke", config, parts)
    made = sorted(p.name for p in together.iterdir())
    assert made == sorted(p.name for p in apart.iterdir()) and len(made) == 10
    for f in made:
        assert (together / f).read_bytes() == (apart / f).read_bytes(), f
    # the family was adjusted over both artefacts' claims, as the separate jobs do
    import json

    rec = json.loads((together / "crammer_singer2005__fig6.json").read_text())
    assert rec["claim_family"]["artefacts"] == sorted(PAPER)


def test_a_paper_job_reads_each_experiment_once(cells, tmp_path, monkeypatch):
    """scripts/summarise.py runs an artefact's cells, then writes its record, under
    jobs.loads_shared(): each experiment is read once, and the records are the same bytes as
    those of the per-artefact jobs (which read it anew each)."""
    import shutil

    from rankrepro import jobs
    from rankrepro.pipeline import loads

    config = str(ROOT / "config")
    reads = []
    real_resolved, real_composed = loads.load_resolved, loads.load_experiment
    monkeypatch.setattr(loads, "load_resolved", lambda path, name, *a, **k: reads.append(name)
                        or real_resolved(path, name, *a, **k))
    monkeypatch.setattr(loads, "load_experiment", lambda name, *a, **k: reads.append(name)
                        or real_composed(name, *a, **k))
    apart, shared = tmp_path / "apart", tmp_path / "shared"
    apart.mkdir()
    parts = _apart(cells, config, apart, shared, figures=False)
    assert sorted(reads) == sorted(PAPER * 2)  # each job_aggregate: its experiment, then its sibling
    reads.clear()
    kept = {n: str(tmp_path / n.replace("/", "__") / "all_cells.parquet") for n in PAPER}
    for n in PAPER:  # the cells the fixture computed: taken from the file, as an unchanged paper's job does
        Path(kept[n]).parent.mkdir(parents=True)
        for f in Path(cells[n]).parent.iterdir():
            shutil.copy(f, Path(kept[n]).parent / f.name)
    shared.mkdir()
    with jobs.loads_shared():
        for n in PAPER:
            job_run_all_cells(n, "smoke", config, kept[n])
        job_summarise("smoke", config, parts)
    assert sorted(reads) == sorted(PAPER)
    for name in PAPER:
        for k in ("csv", "md", "json"):
            assert Path(parts[PAPER.index(name)][k]).read_bytes() == Path(_outputs(apart, name)[k]).read_bytes()
    reads.clear()
    jobs._load(PAPER[0], "smoke", config)  # outside it, a job reads anew
    assert reads == [PAPER[0]]


def test_the_workflow_plans_one_job_per_paper(tmp_path):
    """batch_cells=paper: a paper's cells, records and figures are one job (no run_all_cells,
    aggregate or figure job); batch_cells=true keeps a cell job per artefact and one job for
    the paper's records and figures (without it, a job per cell, record and figure:
    tests/test_workflow.py)."""
    import shutil

    from conftest import scratch_workflow

    w = scratch_workflow(tmp_path)
    (w / "config/experiment/crammer_singer2005").mkdir(parents=True)
    for f in ("fig6.yaml", "_fig7_common.yaml", "fig7_min100.yaml"):
        shutil.copy(ROOT / "config/experiment/crammer_singer2005" / f, w / "config/experiment/crammer_singer2005")
    snakemake = Path(sys.executable).parent / "snakemake"

    def plan(*mode):
        r = subprocess.run([str(snakemake), "-n", "--cores", "2", "--config", "scale=smoke", *mode], cwd=w,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        table = r.stdout.split("Job stats:")[1].split("\ntotal")[0]
        return {ln.split()[0]: int(ln.split()[1]) for ln in table.splitlines()[3:] if ln.strip()}

    data_rules = {"data", "fetch_data", "preprocess_data", "keep_arrays", "compile_kernels", "keep_smoke_catalog"}
    papers = plan("batch_cells=paper")
    assert papers.pop("summarise_crammer_singer2005") == 1 and set(papers) <= {"report", "all"} | data_rules, papers
    artefacts = plan("batch_cells=true")
    assert artefacts.pop("summarise_crammer_singer2005") == 1 and artefacts.pop("run_all_cells") >= 1, artefacts
    assert set(artefacts) <= {"report", "all"} | data_rules, artefacts
