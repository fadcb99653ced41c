"""The evidence records the diagnoses quote (docs/reproducibility.md, "Evidence scripts") are
kept in step with the code and cells they describe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_gp_fit_cap_record_describes_the_committed_cells():
    """scripts/gp_fit_cap.py's record names each cell's fingerprint: it must be the committed
    cell's (else the code or config changed since and the record is stale: rerun the script)."""
    from rankrepro.pipeline.catalog import load_experiment
    from rankrepro.pipeline.cells import cell_fingerprint

    rec = json.loads((ROOT / "results/yu2006/tables/fit_cap.json").read_text())
    exp = load_experiment("yu2006/tables")
    ordinal = [c.id for c in exp.cells if c.params.get("likelihood") == "ordinal"]
    assert sorted(rec["cells"]) == sorted(ordinal)
    for cid, c in rec["cells"].items():
        committed = json.loads((ROOT / f"results/yu2006/tables/cells/{cid}.fingerprint").read_text())["fingerprint"]
        assert c["fingerprint"] == cell_fingerprint(exp, exp.cell(cid)) == committed, \
            f"{cid}: results/yu2006/tables/fit_cap.json is stale: python scripts/gp_fit_cap.py"
        assert 0 <= c["capped"] <= c["searches"] == sum(d["searches"] for d in c["per_draw"])
        assert len(c["per_draw"]) == exp.n_trials


def test_the_svmlight_record_has_every_run_the_table5_diagnosis_cites():
    rec = json.loads((ROOT / "results/elsas2008/table5/svmlight.json").read_text())
    assert rec["svm_learn_version"].startswith("SVM-light V6.02")
    assert [r["C"] for r in rec["runs"]] == ["0.001", "0.01", "SVM-Light default"]
    for r in rec["runs"]:
        light = r["svm_learn"]
        # a run that stopped at the CPU cap used (about) the cap; a finished one no more than it
        assert light["finished"] or light["cpu_seconds"] >= 0.9 * rec["cpu_cap"]
        assert light["cpu_seconds"] <= 1.1 * rec["cpu_cap"] + 5
        assert r["ours_passes"] >= 1


@pytest.mark.parametrize("path", ["results/yu2006/tables/fit_cap.json", "results/elsas2008/table5/svmlight.json"])
def test_an_evidence_record_names_the_command_that_writes_it(path):
    rec = json.loads((ROOT / path).read_text())
    script = rec["command"].split("python ")[-1].split()[0]
    assert (ROOT / script).is_file(), f"{path}: its command names {script}, which does not exist"
