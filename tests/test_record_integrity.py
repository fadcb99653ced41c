"""Every number's chain checked (issue 41, item 1): a committed record names the sha256 of each
cell it was aggregated from, each cell's fingerprint file the sha256 of its results;
`rankrepro verify --records` aggregates each record again from its cells and compares it byte
for byte; the report refuses a record that is not what was written or whose cells changed; the
workflow reruns a cell whose bytes are not those its fingerprint file names.

In scratch copies of small committed artefacts: Shivaswamy & Joachims Fig. 4 (its claim family's
cells are ~200 kB; aggregating it again takes under a second) for the records check and the
report, Elsas et al. Sec. 3 (no data: the workflow plans its cells without any data set) for the
workflow's dry run."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import committed_catalog, scratch_workflow

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
NAME = "shivaswamy2012/fig4"
FAMILY = ["shivaswamy2012/fig2", "shivaswamy2012/fig3", "shivaswamy2012/fig4", "shivaswamy2012/fig5"]


def _copy_artefact(name: str, dest: Path) -> None:
    for ext in (".json", ".csv", ".md", ".config.yaml"):
        src = ROOT / "results" / f"{name}{ext}"
        if src.is_file():
            (dest / "results" / f"{name}{ext}").parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dest / "results" / f"{name}{ext}")
    shutil.copytree(ROOT / "results" / name, dest / "results" / name)
    ff = json.loads((ROOT / "results" / f"{name}.json").read_text()).get("figure_file")
    for src in sorted((ROOT / "figures" / name.split("/")[0]).glob(f"{ff}.*")) if ff else []:
        # its figure, whose bytes the record names (figures_sha256)
        (dest / src.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dest / src.relative_to(ROOT))


@pytest.fixture
def scratch(tmp_path):
    """A checkout's results/ with Fig. 4 and the cells of its claim family (Holm over the paper)."""
    for name in FAMILY:
        _copy_artefact(name, tmp_path)
    # the records' platform sections are read from it (pipeline/platforms.py)
    shutil.copy(ROOT / "results" / "platform_spread.json", tmp_path / "results" / "platform_spread.json")
    return tmp_path


def _check(root: Path) -> list:
    from rankrepro.records_check import check

    lines: list[str] = []
    problems = check(committed_catalog(), root=root, scratch=root / "runs" / "verify-records", names=[NAME],
                     echo=lines.append)
    return problems


def _report(root: Path):
    from rankrepro.report.html import build_report

    build_report([str(root / "results" / f"{NAME}.json")], {}, root / "results" / "report" / "index.html", "paper")


def _edit_record(root: Path, edit, reseal: bool) -> Path:
    """Edit the record's parsed content and write it as the project writes records; ``reseal``:
    with its record_sha256 made again (as someone who knows the scheme would)."""
    from rankrepro.io import dumps
    from rankrepro.pipeline.integrity import seal

    path = root / "results" / f"{NAME}.json"
    rec = json.loads(path.read_text())
    edit(rec)
    path.write_text(dumps(seal(rec) if reseal else rec))
    return path


def _bump_mean(rec):
    rec["table"][1]["mean"] += 0.01


def _flip_verdict(rec):
    assert rec["claims"][0]["verdict"] == "held"
    rec["claims"][0]["verdict"] = "not held"


def test_the_committed_record_names_its_cells_hashes_and_passes(scratch):
    rec = json.loads((scratch / "results" / f"{NAME}.json").read_text())
    cells = sorted((scratch / "results" / NAME / "cells").glob("*.parquet"))
    # an independent computation of each file's sha256
    assert rec["cells_sha256"] == {p.stem: hashlib.sha256(p.read_bytes()).hexdigest() for p in cells}
    assert list(rec["cells_sha256"]) == sorted(rec["cells_sha256"])
    for p in cells:
        assert json.loads(p.with_suffix(".fingerprint").read_text())["sha256"] == rec["cells_sha256"][p.stem]
    assert _check(scratch) == []
    _report(scratch)  # no complaint
    assert (scratch / "results" / "report" / "index.html").is_file()


@pytest.mark.parametrize("edit", [_bump_mean, _flip_verdict], ids=["edited mean", "flipped verdict"])
def test_an_edited_record_is_caught_by_the_check_and_the_report(scratch, edit):
    from rankrepro.report.html import RecordMismatch

    path = _edit_record(scratch, edit, reseal=False)
    problems = _check(scratch)
    assert [p.path for p in problems] == [f"results/{NAME}.json"], problems
    where = ".table[1].mean" if edit is _bump_mean else ".claims[0].verdict"
    assert problems[0].what.startswith(where + ": committed"), problems[0].what
    with pytest.raises(RecordMismatch, match="record_sha256 does not match") as e:
        _report(scratch)
    assert str(path) in str(e.value)


@pytest.mark.parametrize("edit", [_bump_mean, _flip_verdict], ids=["edited mean", "flipped verdict"])
def test_an_edited_record_sealed_again_is_caught_by_aggregating_it_again(scratch, edit, monkeypatch, tmp_path):
    """The seal is no secret: the report's cheap checks cannot tell a record edited and sealed
    again with the package's own seal() (issue 58, item 3); aggregating it again can.  Every
    report page says plainly that it does not aggregate again, and `rankrepro report` names the
    records this machine has not aggregated from their cells (all before `rankrepro verify
    --records`, none after it, the edited one once it is sealed again)."""
    from rankrepro.report.html import build_report

    committed_catalog()  # composed before the cache folder moves (the notes go there)
    monkeypatch.setenv("RANKREPRO_CACHE_DIR", str(tmp_path / "cache"))
    page = scratch / "results" / "report" / "index.html"

    def report() -> list[str]:
        return build_report([str(scratch / "results" / f"{NAME}.json")], {}, page, "paper")

    assert report() == [NAME]  # not aggregated on this machine yet
    assert "It does not aggregate the records again from their cells" in page.read_text()  # said on every page
    assert _check(scratch) == []  # aggregated again here, identical
    assert report() == []
    _edit_record(scratch, edit, reseal=True)
    assert report() == [NAME]  # not refused (its seal and cells' bytes are right), but named ...
    problems = _check(scratch)  # ... and aggregating the record again from its cells catches it
    assert len(problems) == 1 and problems[0].path == f"results/{NAME}.json", problems
    assert problems[0].what.startswith(".table[1].mean" if edit is _bump_mean else ".claims[0].verdict")
    assert report() == [NAME]


def test_an_edited_markdown_table_is_caught(scratch):
    md = scratch / "results" / f"{NAME}.md"
    text = md.read_text()
    assert "- **held**" in text
    md.write_text(text.replace("- **held**", "- **not held**", 1))
    problems = _check(scratch)
    assert [p.path for p in problems] == [f"results/{NAME}.md"] and problems[0].what.startswith("line "), problems


def _edit_cell(path: Path) -> None:
    df = pd.read_parquet(path)
    df.loc[df.index[0], "value"] += 1e-6
    df.to_parquet(path)


def test_an_edited_cell_is_caught_by_the_check_and_the_report(scratch):
    from rankrepro.report.html import RecordMismatch

    cell = sorted((scratch / "results" / NAME / "cells").glob("*.parquet"))[0]
    _edit_cell(cell)
    problems = _check(scratch)
    rel = str(cell.relative_to(scratch))
    assert {p.path for p in problems} >= {rel}
    whats = [p.what for p in problems if p.path == rel]
    assert any("fingerprint file" in w for w in whats) and any("its record names" in w for w in whats), whats
    with pytest.raises(RecordMismatch, match="not those .* was aggregated from") as e:
        _report(scratch)
    assert str(cell) in str(e.value)


def test_an_edited_cell_whose_fingerprint_file_the_workflow_removed_is_named_without_none(scratch):
    """Issue 58, item 3: after the workflow removed a stale cell's fingerprint file, the records
    check says so, never "(None)"."""
    cell = sorted((scratch / "results" / NAME / "cells").glob("*.parquet"))[0]
    _edit_cell(cell)
    cell.with_suffix(".fingerprint").unlink()
    whats = [p.what for p in _check(scratch) if p.path == str(cell.relative_to(scratch))]
    assert any(f"its fingerprint file {cell.stem}.fingerprint is missing" in w for w in whats), whats
    assert not any("None" in w for w in whats), whats


def test_a_swapped_figure_is_refused_by_the_check_and_the_report(scratch):
    """Issue 58, item 3: the figure job names its files' sha256 in the record (figures_sha256);
    ``cp figures/<another>.png figures/shivaswamy2012/fig4.png`` is then caught by the records
    check and refused by the report, in one line naming the file."""
    from rankrepro.pipeline.integrity import FIGURES
    from rankrepro.report.figures import build_figure
    from rankrepro.report.html import RecordMismatch, build_report

    rec_path = scratch / "results" / f"{NAME}.json"
    png = scratch / "figures" / "shivaswamy2012" / "fig4.png"
    before = json.loads(rec_path.read_text())
    build_figure(committed_catalog()[NAME], rec_path.with_suffix(".csv"), png, png.with_suffix(".pdf"), rec_path)
    rec = json.loads(rec_path.read_text())
    assert rec[FIGURES] == {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in (png, png.with_suffix(".pdf"))}
    assert {k: v for k, v in rec.items() if k not in (FIGURES, "record_sha256")} == \
        {k: v for k, v in before.items() if k not in (FIGURES, "record_sha256")}  # nothing else moved
    assert png.stat().st_mtime >= rec_path.stat().st_mtime  # the figure not older than its input
    out = scratch / "results" / "report" / "index.html"
    pngs = {"shivaswamy2012/fig4": str(png)}
    assert _check(scratch) == []
    build_report([str(rec_path)], pngs, out, "paper")  # no complaint
    png.write_bytes((ROOT / "figures" / "arena" / "comparison" / "cd_collab_gp.png").read_bytes())
    problems = _check(scratch)
    assert [p.path for p in problems] == ["figures/shivaswamy2012/fig4.png"], problems
    assert "a figure swapped or edited" in problems[0].what and "\n" not in problems[0].what
    out.unlink()
    with pytest.raises(RecordMismatch, match="fig4.png: its bytes are not those") as e:
        build_report([str(rec_path)], pngs, out, "paper")
    assert str(png) in str(e.value) and not out.exists()
    # a PNG the report would embed for a record without that figure is refused too
    with pytest.raises(RecordMismatch, match="names no such figure"):
        build_report([str(rec_path)], {"shivaswamy2012/fig4": str(png.with_name("other.png"))}, out, "paper")


# ---- the workflow reruns a cell whose bytes changed (a dry run in a scratch copy)

WF_NAME = "elsas2008/sec3_table"


@pytest.fixture(scope="module")
def workflow(tmp_path_factory):
    w = tmp_path_factory.mktemp("integrity_wf")
    scratch_workflow(w)
    (w / "config/experiment/elsas2008").mkdir(parents=True)
    shutil.copy(ROOT / f"config/experiment/{WF_NAME}.yaml", w / "config/experiment/elsas2008/")
    if (ROOT / f"config/diagnoses/{WF_NAME}.yaml").is_file():  # its diagnoses: part of the record's config
        (w / "config/diagnoses/elsas2008").mkdir(parents=True)
        shutil.copy(ROOT / f"config/diagnoses/{WF_NAME}.yaml", w / "config/diagnoses/elsas2008/")
    _copy_artefact(WF_NAME, w)
    return w


def _dry_run(w: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "RANKREPRO_DATA_MIRROR"}
    env["RANKREPRO_OFFLINE"] = "1"
    r = subprocess.run([str(SNAKEMAKE), "--cores", "1", "--dry-run", f"results/{WF_NAME}.json", "--config",
                        "cell_packs=false"], cwd=w, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return r.stdout + r.stderr


def test_the_workflow_reruns_a_cell_whose_bytes_changed(workflow):
    out = _dry_run(workflow)
    assert "rule run_cell" not in out and "rule aggregate" not in out, out[-3000:]  # all current
    cell = workflow / "results" / WF_NAME / "cells" / "list-rankingRNRNRN.parquet"
    _edit_cell(cell)
    fp = cell.with_suffix(".fingerprint")
    kept = fp.read_bytes()
    # a dry run (issue 58, item 3) removes nothing, yet plans the cell's rerun and names it
    out = _dry_run(workflow)
    assert fp.read_bytes() == kept
    assert "1 stale cell(s) planned here" in out and cell.stem in out, out[-3000:]
    assert "rule run_cell" in out and "rule aggregate" in out, out[-3000:]
    assert f"results/{WF_NAME}/cells/list-rankingRNRNRN.parquet" in out
    # only that cell: the others' bytes are those their fingerprint files name
    assert out.count("rule run_cell:") == 1, out[-3000:]


def test_a_record_whose_content_is_unchanged_is_not_rewritten(tmp_path):
    """Re-aggregating one artefact re-runs its claim family's siblings; a sibling whose content is
    the same keeps its file as it was (the commit and machine that first wrote that content),
    and a sibling whose content moved is written with the new stamps."""
    import json

    from rankrepro.pipeline.integrity import seal_problem, write_sealed

    path = tmp_path / "fig2.json"
    rec = {"name": "p/fig2", "table": [{"mean": 0.25, "ci": float("nan")}], "git_commit": "a" * 40,
           "versions": {"platform": "one"}}
    assert write_sealed(path, rec)
    before = path.read_bytes()
    again = dict(rec, git_commit="b" * 40 + "+dirty", versions={"platform": "another"})
    import os

    os.utime(path, (1, 1))
    assert not write_sealed(path, again)
    assert path.read_bytes() == before
    assert path.stat().st_mtime > 1  # touched: to Snakemake the job wrote its output
    moved = dict(again, table=[{"mean": 0.26, "ci": float("nan")}])
    assert write_sealed(path, moved)
    got = json.loads(path.read_text())
    assert got["git_commit"] == "b" * 40 + "+dirty" and got["table"][0]["mean"] == 0.26
    assert seal_problem(got) is None
    # a file edited by hand (its seal broken) is written again even when the content matches
    path.write_text(path.read_text().replace('"another"', '"edited"'))
    assert write_sealed(path, moved)
    assert seal_problem(json.loads(path.read_text())) is None
    # a modified tree's stamp gives way to a clean commit's for the same content, not the other way
    clean = dict(moved, git_commit="c" * 40)
    assert write_sealed(path, clean)
    assert json.loads(path.read_text())["git_commit"] == "c" * 40
    assert not write_sealed(path, dict(clean, git_commit="d" * 40 + "+dirty"))
    assert json.loads(path.read_text())["git_commit"] == "c" * 40


def test_a_record_the_workflow_removed_comes_back_as_committed_when_its_content_is_the_same(tmp_path):
    """Snakemake removes a job's outputs before the job: the record being aggregated again is
    then compared with its committed version, and written back byte for byte when only its
    stamps would differ."""
    import json
    import subprocess

    from rankrepro.pipeline.integrity import seal_problem, write_sealed

    def git(*a):
        subprocess.run(["git", *a], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@t")
    git("config", "user.name", "t")
    (tmp_path / "results").mkdir()
    path = tmp_path / "results" / "fig2.json"
    rec = {"name": "p/fig2", "table": [{"mean": 0.25}], "git_commit": "a" * 40, "versions": {"platform": "one"}}
    write_sealed(path, rec)
    committed = path.read_bytes()
    git("add", "results")
    git("commit", "-qm", "record")
    path.unlink()  # as Snakemake does before the aggregate job
    assert not write_sealed(path, dict(rec, git_commit="b" * 40, versions={"platform": "two"}))
    assert path.read_bytes() == committed
    path.unlink()
    assert write_sealed(path, dict(rec, table=[{"mean": 0.5}], git_commit="b" * 40))
    got = json.loads(path.read_text())
    assert got["table"][0]["mean"] == 0.5 and got["git_commit"] == "b" * 40 and seal_problem(got) is None
