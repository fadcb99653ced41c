"""A run interrupted midway -- Ctrl-C (SIGINT), SIGTERM, or SIGKILL to Snakemake and its jobs --
leaves no partial output, and the same command (after `snakemake --unlock` for a hard kill)
finishes the work without recomputing the cells that were done, to outputs identical to an
uninterrupted run's (the workflow profile reruns jobs marked incomplete; stale temporaries are
removed)."""
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


def _workdir(tmp_path: Path, name: str) -> Path:
    w = tmp_path / name
    w.mkdir()
    for item in ("Snakefile", "rules", "scripts", "environment.yml", "profiles"):
        src = ROOT / item
        (shutil.copytree if src.is_dir() else shutil.copy)(src, w / item)
    shutil.copytree(ROOT / "config", w / "config", ignore=shutil.ignore_patterns("experiment"))
    (w / "config/experiment/crammer_singer2005").mkdir(parents=True)
    shutil.copy(ROOT / "config/experiment/crammer_singer2005/fig6.yaml", w / "config/experiment/crammer_singer2005/")
    return w


def _identity(p: Path) -> tuple[int, bytes]:
    """(inode, bytes): an output rewritten (temporary file renamed over it) gets a new inode;
    the workflow's freshness check may touch a finished cell's time, never its inode."""
    return p.stat().st_ino, p.read_bytes()


WALL_TIME = ("seconds", "wall", "elapsed")


def _frames_equal(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Equal row for row (in a canonical order), apart from wall-time columns."""
    drop = [c for c in a.columns if any(w in c for w in WALL_TIME)]
    keys = ["cell", "trial", "metric", "round"]
    a, b = (x.drop(columns=drop).sort_values(keys).reset_index(drop=True) for x in (a, b))
    assert sorted(a["cell"].unique()) == sorted(b["cell"].unique())
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_interrupted_by_any_signal_resumes_to_the_same_outputs(tmp_path):
    """SIGINT (Ctrl-C, to the whole process group), SIGTERM (to Snakemake) and SIGKILL (to the
    group: a power cut), each at a seeded random point of a smoke run, one after the other on
    the same folder; then the same command finishes.  No partial file is ever left, no cell
    finished before a signal is recomputed (same inode and bytes), and every output equals an
    uninterrupted run's (one batch job), apart from wall-time columns."""
    import random

    env = {k: v for k, v in os.environ.items() if k != "RANKREPRO_DATA_MIRROR"}
    env["RANKREPRO_OFFLINE"] = "1"
    cmd = [str(SNAKEMAKE), "--cores", "1", "--config", "scale=smoke"]
    rel_cells = Path("runs/smoke/results/crammer_singer2005/fig6/cells")
    ref, w = _workdir(tmp_path, "reference"), _workdir(tmp_path, "interrupted")
    # the uninterrupted reference runs the artefact's cells in one job (the same numbers, less start-up)
    r = subprocess.run(cmd + ["batch_cells=true"], cwd=ref, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    reference = pd.read_parquet(ref / rel_cells.parent / "all_cells.parquet")
    n_cells = reference["cell"].nunique()
    assert n_cells >= 5

    rng = random.Random(18)
    finished: dict[str, tuple[int, bytes]] = {}
    for sig, group in ((signal.SIGINT, True), (signal.SIGTERM, False), (signal.SIGKILL, True)):
        target = min(n_cells - 1, len(finished) + rng.randint(1, 2))
        proc = subprocess.Popen(cmd, cwd=w, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        deadline = time.time() + 300
        while time.time() < deadline and proc.poll() is None and len(list((w / rel_cells).glob("*.parquet"))) < target:
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 0.5))  # somewhere inside the next job
        assert proc.poll() is None, f"the run before {sig.name} ended by itself (locked?): {proc.stderr.read()[-2000:]}"
        (os.killpg if group else os.kill)(proc.pid, sig)
        _, err = proc.communicate(timeout=120)
        # nothing partial: every output present is whole, no temporary is left behind
        for p in (w / rel_cells).glob("*.parquet"):
            assert not pd.read_parquet(p).empty
        assert not list((w / "runs").rglob("*.tmp")), sig
        for name, ident in finished.items():
            assert _identity(w / rel_cells / name) == ident, f"{name} recomputed after {sig.name}"
        if sig == signal.SIGKILL:  # a lock left by kill -9 is named, and --unlock is the documented recovery
            r = subprocess.run(cmd + ["--dry-run"], cwd=w, env=env, capture_output=True, text=True, timeout=300)
            if r.returncode != 0:
                assert "--unlock" in r.stderr, r.stderr[-2000:]
                subprocess.run(cmd + ["--unlock"], cwd=w, env=env, capture_output=True, timeout=300, check=True)
        # finished: every cell with its fingerprint (written after the results) except the newest
        # one of this run, whose job may have been stopped before Snakemake recorded it complete
        # (the profile then reruns it, as documented)
        new = [p for p in (w / rel_cells).glob("*.parquet") if p.name not in finished]
        newest = max(new, key=lambda p: p.stat().st_mtime_ns).name if new else None
        finished = {p.name: _identity(p) for p in (w / rel_cells).glob("*.parquet")
                    if p.with_suffix(".fingerprint").is_file() and p.name != newest}

    r = subprocess.run(cmd, cwd=w, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    for name, ident in finished.items():
        assert _identity(w / rel_cells / name) == ident, f"{name} recomputed on resuming"
    done = pd.concat([pd.read_parquet(p) for p in (w / rel_cells).glob("*.parquet")])
    _frames_equal(done, reference)
    out = Path("runs/smoke/results/crammer_singer2005/fig6")
    for suffix in (".csv", ".md"):
        assert (w / out.with_suffix(suffix)).read_text() == (ref / out.with_suffix(suffix)).read_text()
    assert not list((w / "runs").rglob("*.tmp"))
    r = subprocess.run(cmd + ["--dry-run"], cwd=w, env=env, capture_output=True, text=True, timeout=300)
    assert "Nothing to be done" in r.stdout + r.stderr
