"""docs/results.md's numbers come from the records: the committed page equals the page
rendered from its template and the committed records, and a changed record changes the page."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rankrepro.report.results_doc import TEMPLATE, Artefact, DocError, render

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "results.md"


def test_committed_results_page_matches_the_records():
    assert TEMPLATE == ROOT / "docs" / "results.md.j2"
    assert len(re.findall(r"\{\{ \w+\.[\w.]+ (?:\| (?:fmt|span)|\}\})", TEMPLATE.read_text())) >= 60  # not typed in
    assert render(ROOT / "results") == DOC.read_text(), "docs/results.md differs from the records: run python scripts/results_doc.py"


def test_check_script_agrees(tmp_path):
    doc = tmp_path / "results.md"
    doc.write_text(DOC.read_text().replace("  and 3 of 12 published", "  and 4 of 12 published", 1))
    cmd = [sys.executable, str(ROOT / "scripts" / "results_doc.py"), "--doc", str(doc), "--results", str(ROOT / "results")]
    r = subprocess.run(cmd + ["--check"], capture_output=True, text=True)
    assert r.returncode == 1 and "-  and 4 of 12 published" in r.stdout and "+  and 3 of 12 published" in r.stdout
    assert subprocess.run(cmd, capture_output=True, text=True).returncode == 0
    assert doc.read_text() == DOC.read_text()


def test_a_changed_record_changes_the_page(tmp_path):
    out = tmp_path / "results"
    # the records and summary tables, the arena's comparisons (results/arena/comparison/) and the
    # evidence records a page quotes (results/yu2006/tables/fit_cap.json)
    for p in [*(ROOT / "results").glob("*/*.json"), *(ROOT / "results").glob("*/*.csv"),
              *(ROOT / "results").glob("*/comparison/*.json"), ROOT / "results/yu2006/tables/fit_cap.json"]:
        dest = out / p.relative_to(ROOT / "results")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(p, dest)
    name = "harrington2003/table1"
    rec = json.loads((out / f"{name}.json").read_text())
    assert [c["verdict"] for c in rec["claims"]] == ["inconclusive", "held", "held"]
    rec["claims"][1]["verdict"] = "not held"  # bpm_beats_wh
    (out / f"{name}.json").write_text(json.dumps(rec))
    csv = out / f"{name}.csv"
    lines = csv.read_text().splitlines()
    lines = [ln.replace(",0.1941,", ",0.1741,") if ln.startswith("oap_bpm-tau0.3,") and ",test_rank_loss," in ln
             else ln for ln in lines]
    csv.write_text("\n".join(lines) + "\n")
    old, new = DOC.read_text(), render(out)
    assert "(OAP-BPM 0.19-0.23 against" in old and "(OAP-BPM 0.17-0.23 against" in new
    row = ("| [`harrington2003/table1`](../results/harrington2003/table1.md) | differs (p = 6.2e-21) | 3 / 9 | "
           "0 / 7 / 5 (5) |")
    assert f"{row} 1 / 0 / 1 | 1 / 1 | partly reproduced |" in old
    assert f"{row} 0 / 1 / 1 | 1 / 1 | partly reproduced |" in new
    tot = re.search(r"^\| \*\*all 8\*\* \| [^|]+\| [^|]+\| [^|]+\| (\d+) / (\d+) / (\d+) \|", old, re.M)
    held, not_held = int(tot.group(1)), int(tot.group(2))
    assert f"| {held - 1} / {not_held + 1} / " in new.split("| **all 8** |")[1].split("\n")[0]
    assert len(new.splitlines()) == len(old.splitlines())


def test_errors_name_the_record_cell_or_template_line(tmp_path):
    with pytest.raises(DocError, match=r"harrington2003/table1: no summary row for cell 'ghost'"):
        Artefact(ROOT / "results", "harrington2003/table1", "test_rank_loss").v("ghost")
    with pytest.raises(DocError, match="no record .*nobody/nothing.json"):
        Artefact(ROOT / "results", "nobody/nothing", "m")
    bad = tmp_path / "page.md.j2"
    bad.write_text("# Page\n\nHarrington Table 1: {{ t1.trials }} trials, {{ t1.nothing | fmt('.2f') }}.\n")
    with pytest.raises(DocError, match=r"page.md.j2 line 3: UndefinedError: .*'nothing'"):
        render(ROOT / "results", bad)
