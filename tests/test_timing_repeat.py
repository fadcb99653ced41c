"""Timing verdicts that repeat (issue "Reliability III", item 4): the same timing artefact run
twice, once on an idle machine and once with two busy processes beside it on every core the
machine has, gives the same verdict for every claim.  The claims about time are decided on CPU
time with a load tolerance (docs/reproducibility.md): machine load may widen an interval into
*inconclusive*, never turn *held* into *not held*, and must not move a verdict between runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, data_env

pytestmark = pytest.mark.long

RANKREPRO = str(Path(sys.executable).parent / "rankrepro")


def _verdicts(out: Path) -> dict[str, str]:
    rec = json.loads((out / "results" / "elsas2008" / "table5.json").read_text())
    timing = {c["id"]: c["verdict"] for c in rec["claims"]}
    assert timing, "Table 5 has no claims"
    return timing


def _run(out: Path) -> dict[str, str]:
    r = subprocess.run([RANKREPRO, "run", "elsas2008/table5", "--out", str(out)], cwd=ROOT, env=data_env(),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return _verdicts(out)


def test_elsas_table5_timing_verdicts_repeat_under_load(repo_data, tmp_path):
    idle = _run(tmp_path / "idle")
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2 * (os.cpu_count() or 1))]
    try:
        loaded = _run(tmp_path / "loaded")
    finally:
        for b in burners:
            b.kill()
            b.wait()
    assert loaded == idle, {k: (idle.get(k), loaded.get(k)) for k in idle.keys() | loaded.keys()
                            if idle.get(k) != loaded.get(k)}
