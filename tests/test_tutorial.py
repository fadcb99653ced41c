"""The tutorial of docs/own_learner.md (its section "Tutorial"), run as written: its Python block is the learner file, written to a
temporary home folder, and its shell blocks are run in order from the checkout (smoke scale),
so the tutorial and the code cannot drift apart."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import NO_MIRROR, data_mirror

#: the workflow or the command line end to end over minutes: `make test-long` (run by CI), not `make test`
pytestmark = pytest.mark.long

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "own_learner.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def blocks() -> list[tuple[str, str]]:
    """The code blocks of the page's tutorial (the reference after it shows config and shell
    fragments that are not steps to run)."""
    text = DOC.read_text()
    assert "\n## Tutorial\n" in text and "\n## Reference\n" in text, "docs/own_learner.md lost its Tutorial or Reference"
    return BLOCK.findall(text.split("\n## Tutorial\n", 1)[1].split("\n## Reference\n", 1)[0])


def test_the_tutorial_has_its_steps():
    kinds = [k for k, _ in blocks()]
    assert kinds.count("python") == 1
    sh = "\n".join(b for k, b in blocks() if k == "sh")
    for step in ("rankrepro check-learner", "rankrepro run ", "rankrepro arena online", "comparison/online.md"):
        assert step in sh, f"docs/own_learner.md no longer shows `{step}`"
    # each run writes to a folder of its own: a second run into one folder replaces the first's report
    outs = re.findall(r"--out\s+(\S+)", sh)
    assert len(outs) == sh.count("--out") >= 2 and len(set(outs)) == len(outs), outs
    first = next(b for k, b in blocks() if k == "python").splitlines()[0]
    assert re.fullmatch(r"# ~/\S+\.py", first), "the Python block must start with '# ~/<path>.py', its file"


@pytest.mark.skipif(data_mirror() is None, reason=NO_MIRROR)
def test_the_tutorial_runs_as_written(tmp_path, repo_data):
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    env.pop("RANKREPRO_CONFIG_DIR", None)
    env.pop("PYTHONPATH", None)
    outputs = []
    for kind, body in blocks():
        if kind == "python":
            path = home / body.splitlines()[0][len("# ~/"):]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(body)
            continue
        assert kind == "sh", f"docs/own_learner.md: a code block of kind {kind!r} the test cannot run"
        r = subprocess.run(["bash", "-euo", "pipefail", "-c", body], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0, f"docs/own_learner.md block failed:\n{body}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
        outputs.append(r.stdout)
    # step 2: every check passed
    assert "averaged_prank.AveragedPRank:" in outputs[0] and "FAIL" not in outputs[0]
    # step 3: the learner is a row of the paper's experiment, beside the paper's learners
    rec = json.loads((home / "runs" / "fig6" / "results" / "crammer_singer2005" / "fig6.json").read_text())
    assert {"averaged_prank", "prank", "si_prank", "mcp"} <= {c["id"].split("-")[0] for c in rec["cells"]}
    assert rec["cells"][-1]["estimator"] == "averaged_prank.AveragedPRank"
    # step 4: the learner entered the comparison on every data set of the family, with a rank
    cmp_ = json.loads((home / "runs" / "arena" / "results" / "arena" / "comparison" / "online.json").read_text())
    mine = [r for r in cmp_["learners"] if r["key"] == "averaged_prank"]
    assert len(mine) == 1 and set(mine[0]["values"]) == {e["name"] for e in cmp_["experiments"]}
    assert len(cmp_["learners"]) == 11 and cmp_["friedman"]["k"] == 11 and cmp_["friedman"]["n"] == 5
    assert 1.0 <= mine[0]["avg_rank"] <= 11.0
    # step 5: the table read is the one written, and names the learner
    assert "| averaged PRank |" in outputs[-1]
    assert (home / "runs" / "arena" / "figures" / "arena" / "comparison" / "cd_online.png").stat().st_size > 0
    # step 3's report is still step 3's after step 4 ran
    fig6_report = (home / "runs" / "fig6" / "results" / "report" / "index.html").read_text()
    assert "fig6" in fig6_report and not (home / "runs" / "fig6" / "results" / "arena").exists()
