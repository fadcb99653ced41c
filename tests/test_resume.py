"""A run killed midway (SIGKILL to Snakemake and its jobs) leaves no partial output, and after
`snakemake --unlock` the same command finishes the work without recomputing the cells that were
done (the workflow profile reruns jobs marked incomplete; stale temporaries are removed)."""
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"


def test_killed_run_resumes_without_recomputing(tmp_path):
    w = tmp_path / "wf"
    w.mkdir()
    for item in ("Snakefile", "rules", "scripts", "environment.yml", "profiles"):
        src = ROOT / item
        (shutil.copytree if src.is_dir() else shutil.copy)(src, w / item)
    shutil.copytree(ROOT / "config", w / "config", ignore=shutil.ignore_patterns("experiment"))
    (w / "config/experiment/crammer_singer2005").mkdir(parents=True)
    shutil.copy(ROOT / "config/experiment/crammer_singer2005/fig6.yaml", w / "config/experiment/crammer_singer2005/")
    env = {k: v for k, v in os.environ.items() if k != "RANKREPRO_DATA_MIRROR"}
    env["RANKREPRO_OFFLINE"] = "1"
    cmd = [str(SNAKEMAKE), "--cores", "1", "--config", "scale=smoke"]
    cells = w / "runs/smoke/results/crammer_singer2005/fig6/cells"

    proc = subprocess.Popen(cmd, cwd=w, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.time() + 300
    while time.time() < deadline and not (cells.is_dir() and len(list(cells.glob("*.parquet"))) >= 2):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # Snakemake and the job it is running, at once
    proc.wait(timeout=60)
    done = {p.name: p.stat().st_mtime_ns for p in cells.glob("*.parquet")}
    assert len(done) >= 2, "fewer than two cells finished before the kill"
    from rankrepro.pipeline import load_experiment

    n_cells = len(load_experiment("crammer_singer2005/fig6", "smoke").cells)
    assert len(done) < n_cells, "the run finished before it could be killed"
    for name in done:  # whatever is at an output path is complete
        assert not pd.read_parquet(cells / name).empty
    assert not (w / "runs/smoke/results/crammer_singer2005/fig6.json").exists()

    # Snakemake keeps its lock after a kill -9: the documented recovery is --unlock, then
    # the same command again (an interrupt with Ctrl-C releases the lock by itself)
    r = subprocess.run(cmd, cwd=w, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode != 0 and "--unlock" in r.stderr
    subprocess.run(cmd + ["--unlock"], cwd=w, env=env, capture_output=True, text=True, timeout=300, check=True)
    r = subprocess.run(cmd, cwd=w, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    after = {p.name: p.stat().st_mtime_ns for p in cells.glob("*.parquet")}
    assert len(after) == n_cells
    # with one core the jobs run one after another, so every cell but the newest had its
    # completion recorded before the kill (the newest may be rerun: Snakemake saw it unfinished)
    recorded = sorted(done, key=done.get)[:-1]
    assert all(after[n] == done[n] for n in recorded), "a finished cell was recomputed"
    assert (w / "runs/smoke/results/crammer_singer2005/fig6.json").exists()
    leftovers = [p for p in (w / "runs").rglob("*.tmp")]
    assert not leftovers, leftovers
    # and the same command once more does nothing
    r = subprocess.run(cmd + ["--dry-run"], cwd=w, env=env, capture_output=True, text=True, timeout=300)
    assert "Nothing to be done" in r.stdout + r.stderr
