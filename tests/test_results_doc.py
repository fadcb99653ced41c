"""docs/results.md's numbers come from the records: the committed page equals the page
refilled from the committed records, and a changed record changes the page."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rankrepro.report.results_doc import MARK, DocError, Records, fill

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "results.md"


@pytest.fixture(scope="module")
def records():
    return Records(ROOT / "results")


def test_committed_results_page_matches_the_records(records):
    text = DOC.read_text()
    assert len(MARK.findall(text)) >= 30  # the page's numbers are marked, not typed
    new = fill(text, records)
    assert new == text, "docs/results.md differs from the records: run python scripts/results_doc.py"


def test_check_script_agrees(tmp_path):
    doc = tmp_path / "results.md"
    doc.write_text(DOC.read_text().replace("3<!--=d consistent()-->", "4<!--=d consistent()-->", 1))
    cmd = [sys.executable, str(ROOT / "scripts" / "results_doc.py"), "--doc", str(doc), "--results", str(ROOT / "results")]
    r = subprocess.run(cmd + ["--check"], capture_output=True, text=True)
    assert r.returncode == 1 and "-  and 4<!--=d consistent()-->" in r.stdout
    assert subprocess.run(cmd, capture_output=True, text=True).returncode == 0
    assert doc.read_text() == DOC.read_text()


def _copy_results(tmp_path, name):
    """results/<name>.json and .csv copied into a scratch results/ folder."""
    out = tmp_path / "results"
    (out / name).parent.mkdir(parents=True)
    for ext in (".json", ".csv"):
        shutil.copy(ROOT / "results" / f"{name}{ext}", out / f"{name}{ext}")
    return out


def test_a_changed_record_changes_the_page(tmp_path):
    name = "harrington2003/table1"
    out = _copy_results(tmp_path, name)
    text = ("<!-- scorecard: generated from results/*/*.json by scripts/results_doc.py, do not edit -->\n"
            "<!-- end scorecard -->\n"
            "* **T1**<!--@harrington2003/table1 test_rank_loss--> BPM 0.19<!--=.2f min(vs(\"oap_bpm\"))-->, "
            "held 2<!--=d held()--> of 3<!--=d claims()-->, 12<!--=d compared()--> compared\n")
    assert fill(text, Records(out)).endswith(text.split("end scorecard -->\n")[1])
    rec = json.loads((out / f"{name}.json").read_text())
    rec["claims"][1]["verdict"] = "not held"  # bpm_beats_wh, held
    (out / f"{name}.json").write_text(json.dumps(rec))
    csv = out / f"{name}.csv"
    lines = csv.read_text().splitlines()
    lines = [ln.replace(",0.1941,", ",0.1741,") if ln.startswith("oap_bpm-tau0.3,") and ",test_rank_loss," in ln
             else ln for ln in lines]
    csv.write_text("\n".join(lines) + "\n")
    new = fill(text, Records(out))
    assert "BPM 0.17<!--" in new and "held 1<!--" in new
    assert "| `harrington2003/table1` | original | 3 / 12 | 1 / 3 | 1 | 1 |" in new
    assert "**1 / 3**" in new


def test_bad_marker_names_its_line(records):
    with pytest.raises(DocError, match=r"line 2: .*no summary row for cell 'ghost'"):
        fill("<!--@harrington2003/table1 test_rank_loss-->\nx 0.1<!--=.2f v(\"ghost\")-->\n", records)
    with pytest.raises(DocError, match="no artefact"):
        fill("x 0.1<!--=.2f v(\"prank\")-->\n", records)
    with pytest.raises(DocError, match="no record"):
        fill("<!--@nobody/nothing m-->x 1<!--=d n_trials()-->\n", records)
