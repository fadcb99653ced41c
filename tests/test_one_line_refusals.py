"""Damage said in one line (issue 58, item 6): a reader's error in `rankrepro preprocess` and in
the data rule's job, `scripts/results_doc.py --results <outside>`, `rankrepro runfiles` of an
artefact without per-query values, and a checkout whose compiled-code cache cannot be written
(numba's "no locator available")."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import make_fixtures  # noqa: E402

RANKREPRO = Path(sys.executable).parent / "rankrepro"


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "RANKREPRO_DATA_MIRROR"}
    return {**env, "RANKREPRO_OFFLINE": "1", **extra}


@pytest.fixture
def damaged_letor3(tmp_path):
    """A checkout-like folder with LETOR 3.0 TD2003 placed by hand, fetched (hashed), then one line of
    a training file losing its 64th feature, fetched again: what preprocessing reads."""
    make_fixtures.make(tmp_path / "fx", ["letor3-td2003"])
    raw = tmp_path / "data/raw/letor3-td2003"
    shutil.copytree(tmp_path / "fx/letor3-td2003", raw)
    p = raw / "Fold1/trainingset.txt"
    lines = p.read_text().splitlines(True)
    lines[3] = re.sub(r" 64:\S+", "", lines[3])
    p.write_text("".join(lines))
    r = subprocess.run([str(RANKREPRO), "fetch", "letor3-td2003"], cwd=tmp_path, env=_env(), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return tmp_path


def test_a_reader_error_of_rankrepro_preprocess_is_one_line(damaged_letor3):
    r = subprocess.run([str(RANKREPRO), "preprocess", "letor3-td2003"], cwd=damaged_letor3, env=_env(),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1
    errors = [x for x in r.stderr.splitlines() if not x.startswith("preprocessing ")]
    assert errors == [f"rankrepro: error: data/raw/letor3-td2003/Fold1/trainingset.txt:4: 63 of the "
                      "64 features listed: this format lists every feature (1:v ... 64:v), and a missing one would "
                      "be read as 0"], r.stderr
    assert not (damaged_letor3 / "data/processed/letor3-td2003/data.npz").exists()
    assert not list((damaged_letor3 / "data/processed").glob(".preprocess-*"))


def test_a_reader_error_of_the_data_rule_ends_the_job_with_one_line(damaged_letor3, monkeypatch):
    from rankrepro.jobs import job_preprocess

    monkeypatch.chdir(damaged_letor3)
    monkeypatch.setenv("RANKREPRO_OFFLINE", "1")
    log = damaged_letor3 / "preprocess.log"
    with pytest.raises(SystemExit) as done:
        job_preprocess("letor3-td2003", {"scaling": "query_minmax"}, log=str(log))
    assert done.value.code == 1
    last = log.read_text().splitlines()[-1]
    assert re.fullmatch(r"error: .*Fold1/trainingset\.txt:4: 63 of the 64 features listed.*", last), last


def test_results_doc_refuses_records_outside_the_checkout_in_one_line(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "scripts/results_doc.py"), "--check", "--results", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "outside" in r.stderr and "Traceback" not in r.stderr


def test_results_doc_through_a_link_to_the_checkouts_results_renders_them_as_they_are(tmp_path):
    """--results given as a link from outside into the checkout's results/ (accepted: it resolves
    inside) rendered the committed articles without their figures (found beside the link, not
    beside the records), and would have written them so; it now reads the folder the link leads to."""
    (tmp_path / "res").symlink_to(ROOT / "results")
    r = subprocess.run([sys.executable, str(ROOT / "scripts/results_doc.py"), "--check", "--results",
                        str(tmp_path / "res")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]


def test_runfiles_of_an_artefact_without_per_query_values_fails_in_one_line(tmp_path):
    r = subprocess.run([str(RANKREPRO), "runfiles", "harrington2003/table1", "--out", str(tmp_path / "rf")], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode != 0
    assert r.stderr.strip().splitlines() == [r.stderr.strip()] and "keeps no per-query test values" in r.stderr
    assert not (tmp_path / "rf").exists()


def test_a_checkout_whose_cache_folder_cannot_be_written_still_imports_the_compiled_learners(tmp_path):
    """The package copied with algorithms/__pycache__ a file (as unwritable as another user's folder)
    and no home cache: numba's own locators all fail; the package gives it a folder of the user's."""
    shutil.copytree(ROOT / "src" / "rankrepro", tmp_path / "rankrepro", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "rankrepro/algorithms/__pycache__").write_text("not a folder")
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(HOME="/proc/nohome", PYTHONPATH=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", "import numpy as np; from rankrepro.algorithms._compiled import rank_of; "
                        "print(rank_of(0.5, np.array([0.0, 1.0])))"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0 and "no locator" not in r.stderr, r.stderr


def test_results_doc_refuses_an_edited_record_in_one_line():
    """Before: `make report` (its first step, scripts/results_doc.py) on a hand-edited record ended in a
    KeyError's traceback; now the record's seal is checked first, and nothing is written."""
    base = ROOT / "runs" / f"test-results-doc-{os.getpid()}"
    try:
        rec = base / "results/harrington2003/table1.json"
        rec.parent.mkdir(parents=True)
        text = (ROOT / "results/harrington2003/table1.json").read_text()
        rec.write_text(text.replace('"status": "', '"status": "X', 1))
        doc = base / "results.md"
        r = subprocess.run([sys.executable, str(ROOT / "scripts/results_doc.py"), "--results", str(base / "results"),
                            "--doc", str(doc), "--readme", str(base / "README.md"), "--no-articles"],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 2
        assert r.stderr.strip().splitlines() == [r.stderr.strip()] and "record_sha256 does not match" in r.stderr
        assert not doc.exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)
