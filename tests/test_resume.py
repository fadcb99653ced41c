"""A run interrupted midway leaves no partial output, and the same command finishes the work
without recomputing the cells that were done (the workflow profile reruns jobs marked
incomplete; stale temporaries are removed): Ctrl-C (SIGINT) and SIGTERM at a random point, then
SIGKILL (after which `snakemake --unlock` is needed); the resumed run's cells equal an
uninterrupted computation of the same cells.

Nothing here races the machine's speed: in the test's copy of the workflow each cell job waits
at its start for a token the test hands out (a file one job renames to claim it), and says when
it has finished.  Each interrupted run gets one token: one cell job runs to its end, the next
one waits at the gate, and the signal comes at a random moment after the first ended: for
Ctrl-C anywhere from there (while Snakemake records the job, starts the next one, or the next
one waits), for SIGTERM and SIGKILL once the next job waits (the first is then recorded).  So
the run is still going when the signal comes, and the interrupted runs finish at least two
cells between them, however fast or slow the machine."""
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import as_from_a_terminal, scratch_workflow  # noqa: E402
SNAKEMAKE = Path(sys.executable).parent / "snakemake"

#: the workflow or the command line end to end over minutes: `make test-long` (run by CI), not `make test`
pytestmark = pytest.mark.long


#: columns that hold wall time, the only values allowed to differ between two runs
WALL_TIME_COLUMNS = ("seconds", "wall_time", "elapsed")


def _finished(cells: Path) -> dict[str, int]:
    """Cells whose job completed (parquet and, written last, its fingerprint), by mtime."""
    return {p.name: p.stat().st_mtime_ns for p in cells.glob("*.parquet") if p.with_suffix(".fingerprint").is_file()}


def _runs(w: Path) -> dict[str, int]:
    """How many times each cell's job started: its log gains one header line per run (file
    times say nothing here: the workflow re-dates current outputs when it starts)."""
    logs = w / "runs/smoke/logs/crammer_singer2005/fig6"
    return {p.stem + ".parquet": sum("worker(s)" in line for line in p.read_text().splitlines())
            for p in logs.glob("*.log")} if logs.is_dir() else {}


def _no_partial_files(w: Path, cells: Path) -> None:
    for p in cells.glob("*.parquet"):  # whatever is at an output path is complete
        assert not pd.read_parquet(p).empty, p
    assert not (w / "runs/smoke/results/crammer_singer2005/fig6.json").exists()


#: prepended to the test's copy of scripts/run_cell.py: wait for a token (or an open gate),
#: and say when the job's work is done
GATE = """
import os as _os, time as _time
_gate = _os.environ["RANKREPRO_TEST_GATE"]
open(_os.path.join(_gate, f"waiting-{_os.getpid()}"), "w").close()
while not _os.path.exists(_os.path.join(_gate, "open")):
    try:
        _os.rename(_os.path.join(_gate, "token"), _os.path.join(_gate, f"taken-{_os.getpid()}"))
        break
    except FileNotFoundError:
        _time.sleep(0.02)
"""
GATE_END = """
open(_os.path.join(_gate, f"done-{_os.getpid()}"), "w").close()
"""


def _give_token(gate: Path) -> None:
    tmp = gate / ".token"
    tmp.write_text("")
    os.replace(tmp, gate / "token")


def _interrupt(cmd, w, env, cells, sig, rng, gate: Path, settle: bool) -> tuple[dict[str, int], dict[str, int]]:
    """Start the workflow, let exactly one cell job run to its end (one token), wait a random
    moment, send ``sig`` to Snakemake and its jobs, and return the cells finished before the
    signal (with their mtimes) and each cell's number of runs.  Without ``settle`` the moment
    falls anywhere after the job's work ended (Snakemake may not have recorded it yet: it is
    then rerun); with ``settle`` after Snakemake has recorded it and started the next job,
    which waits at the gate (so the run has made progress that survives)."""
    err = w / f"snakemake.{sig.name}.err"
    taken_before = {p.name for p in gate.glob("taken-*")}
    waiting_before = {p.name for p in gate.glob("waiting-*")}
    with open(err, "w") as fh:
        proc = subprocess.Popen(cmd, cwd=w, env=env, stdout=subprocess.DEVNULL, stderr=fh, start_new_session=True,
                                preexec_fn=as_from_a_terminal)
        _give_token(gate)
        deadline = time.time() + 300
        done_marker = None
        while done_marker is None or not done_marker.exists():
            assert proc.poll() is None, f"the run before {sig.name} ended by itself: {err.read_text()[-2000:]}"
            assert time.time() < deadline, f"no cell job finished before {sig.name}: {err.read_text()[-2000:]}"
            taken = [p for p in gate.glob("taken-*") if p.name not in taken_before]
            if taken:
                done_marker = gate / taken[0].name.replace("taken-", "done-")
            time.sleep(0.02)
        if settle:
            # Snakemake has recorded the finished job once it starts the next one (which waits)
            mine = done_marker.name.replace("done-", "waiting-")
            while not [p for p in gate.glob("waiting-*") if p.name not in waiting_before and p.name != mine]:
                assert proc.poll() is None, f"the run before {sig.name} ended by itself: {err.read_text()[-2000:]}"
                assert time.time() < deadline, f"no next job started before {sig.name}: {err.read_text()[-2000:]}"
                time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 0.6))
        assert proc.poll() is None, f"the run before {sig.name} ended by itself: {err.read_text()[-2000:]}"
        done = (_finished(cells), _runs(w))
        os.killpg(proc.pid, sig)  # as Ctrl-C, a scheduler's TERM or kill -9: Snakemake and the job it runs
        proc.wait(timeout=120)
    return done


def _fig6_workflow(tmp_path, edit=lambda text: text):
    """A scratch workflow in ``tmp_path/wf`` holding Crammer & Singer's Fig. 6 without its
    sensitivity block (and the diagnoses that name its choices), ``edit`` applied to its text."""
    w = tmp_path / "wf"
    w.mkdir()
    scratch_workflow(w)
    (w / "config/experiment/crammer_singer2005").mkdir(parents=True)
    text = (ROOT / "config/experiment/crammer_singer2005/fig6.yaml").read_text()
    a, b = text.index("  sensitivity:\n"), text.index("  claims:\n")
    text = re.sub(r"(?m)^ +diagnosis: \{.*\}\n", "", edit(text[:a] + text[b:]))
    (w / "config/experiment/crammer_singer2005/fig6.yaml").write_text(text)
    return w


def test_interrupted_run_resumes_without_recomputing(tmp_path):
    seed = int(os.environ.get("RANKREPRO_RESUME_SEED", "18"))
    rng = random.Random(seed)
    # Fig. 6 with five cells (two of WH's four step sizes, no sensitivity block): enough for three
    # interruptions, cheap enough for the suite
    w = _fig6_workflow(tmp_path, lambda t: t.replace("eta: [0.2, 0.1, 0.05, 0.01]", "eta: [0.2, 0.05]"))
    script = w / "scripts/run_cell.py"
    script.write_text(GATE + script.read_text() + GATE_END)
    gate = tmp_path / "gate"
    gate.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "RANKREPRO_DATA_MIRROR"}
    env["RANKREPRO_OFFLINE"] = "1"
    env["RANKREPRO_TEST_GATE"] = str(gate)
    # one job per cell (no packs): the gate counts cell jobs
    cmd = [str(SNAKEMAKE), "--cores", "1", "--config", "scale=smoke", "cell_packs=false"]
    cells = w / "runs/smoke/results/crammer_singer2005/fig6/cells"

    from rankrepro.pipeline.catalog import load_experiment

    exp = load_experiment("crammer_singer2005/fig6", "smoke", config_dir=w / "config")
    n_cells = len(exp.cells) + len(getattr(exp, "sensitivity_cells", []))
    history = []  # (signal, cells finished before it)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        done = _interrupt(cmd, w, env, cells, sig, rng, gate, settle=sig != signal.SIGINT)
        history.append((sig, done))
        _no_partial_files(w, cells)
        assert len(done[0]) < n_cells, f"the run finished before {sig.name} (seed {seed})"
    assert len(history[-1][1][0]) >= 2, "fewer than two cells finished before the interruptions"

    # Snakemake keeps its lock after a kill -9: the documented recovery is --unlock, then
    # the same command again (an interrupt with Ctrl-C releases the lock by itself)
    r = subprocess.run(cmd, cwd=w, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode != 0 and "--unlock" in r.stderr, "the lock after kill -9 was not kept"
    subprocess.run(cmd + ["--unlock"], cwd=w, env=env, capture_output=True, text=True, timeout=300, check=True)
    (gate / "open").write_text("")  # the resumed run goes to its end
    r = subprocess.run(cmd, cwd=w, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    after = {p.name: p.stat().st_mtime_ns for p in cells.glob("*.parquet")}
    assert len(after) == n_cells
    runs_after = _runs(w)
    # with one core the jobs run one after another, so every cell but the newest had its
    # completion recorded before each interruption.  The newest may be rerun later: its job had
    # written its files but not yet exited, and Snakemake marks such a job incomplete (SIGINT) or
    # removes its outputs (SIGTERM); until it is rerun it stays unrecorded.  No other finished
    # cell is recomputed by any later run.
    unrecorded: dict[str, int] = {}  # cell -> its run count when it was left unrecorded
    for sig, (done, runs) in history:
        newest = max(done, key=done.get) if done else None
        recorded = [n for n in done if n != newest and unrecorded.get(n) != runs[n]]
        redone = [n for n in recorded if runs_after[n] != runs[n]]
        assert not redone, (f"cells finished before {sig.name} were recomputed: {redone} "
                            f"(finished then: {sorted(done, key=done.get)}; seed {seed})")
        if newest:
            unrecorded[newest] = runs[newest]
    assert all(runs_after[n] >= 1 for n in after)
    # the resumed outputs are those of an uninterrupted computation of the same cells
    from rankrepro.pipeline.runner import run_cell

    main_cells = sorted(c for c in after if "~" not in c)
    for c in main_cells[:2] + main_cells[-1:]:
        cell_id = c[: -len(".parquet")]
        got = pd.read_parquet(cells / c)
        want = run_cell(exp, cell_id)
        keep = [k for k in want.columns if k not in WALL_TIME_COLUMNS]
        pd.testing.assert_frame_equal(got[keep].reset_index(drop=True), want[keep].reset_index(drop=True),
                                      check_dtype=False)
    assert (w / "runs/smoke/results/crammer_singer2005/fig6.json").exists()
    leftovers = [p for p in (w / "runs").rglob("*.tmp")]
    assert not leftovers, leftovers
    # and the same command once more does nothing
    r = subprocess.run(cmd + ["--dry-run"], cwd=w, env=env, capture_output=True, text=True, timeout=300)
    assert "Nothing to be done" in r.stdout + r.stderr


#: prepended to the test's copy of scripts/run_cells.py: after its third cell a pack job says so
#: and waits to be stopped (the cells are written by rankrepro.jobs._cell_job, one after another)
PACK_GATE = """
import os as _os, time as _time
import rankrepro.jobs as _jobs
_cell_job, _made = _jobs._cell_job, []
def _gated(*a, **k):
    r = _cell_job(*a, **k)
    _made.append(1)
    if len(_made) == 3 and "RANKREPRO_TEST_GATE" in _os.environ:
        open(_os.path.join(_os.environ["RANKREPRO_TEST_GATE"], "three-done"), "w").close()
        _time.sleep(600)
    return r
_jobs._cell_job = _gated
"""


def test_a_pack_stopped_by_sigterm_keeps_its_complete_cells(tmp_path):
    """Issue 58, item 7 ("a resume re-makes three complete outputs"): SIGTERM to the workflow
    while a pack job (several cells in one job) had written three of its cells, each complete
    (results and fingerprint file, written atomically).  Snakemake removed every output of the
    stopped job, those three included, and the resumed run computed them again; with the
    profile's keep-incomplete they stay, marked incomplete, and the pack's job run again keeps
    them (they are current) and computes only the others."""
    w = _fig6_workflow(tmp_path)
    script = w / "scripts/run_cells.py"
    script.write_text(PACK_GATE + script.read_text())
    gate = tmp_path / "gate"
    gate.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("RANKREPRO_DATA_MIRROR", "RANKREPRO_TEST_GATE")}
    env["RANKREPRO_OFFLINE"] = "1"
    cmd = [str(SNAKEMAKE), "--cores", "1", "--config", "scale=smoke"]
    cells = w / "runs/smoke/results/crammer_singer2005/fig6/cells"
    logs = w / "runs/smoke/logs/crammer_singer2005/fig6"
    with open(w / "stopped.err", "w") as fh:
        proc = subprocess.Popen(cmd, cwd=w, env={**env, "RANKREPRO_TEST_GATE": str(gate)}, stdout=subprocess.DEVNULL,
                                stderr=fh, start_new_session=True)
        deadline = time.time() + 300
        while not (gate / "three-done").exists():
            assert proc.poll() is None and time.time() < deadline, (w / "stopped.err").read_text()[-2000:]
            time.sleep(0.05)
        made = sorted(p.stem for p in cells.glob("*.fingerprint"))
        assert len(made) == 3, made
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=120)
    kept = sorted(p.stem for p in cells.glob("*.parquet") if p.with_suffix(".fingerprint").is_file())
    assert kept == made, f"the stopped pack's complete cells were removed: {made} -> {kept}"
    _no_partial_files(w, cells)
    lines = {p.stem: len(p.read_text().splitlines()) for p in logs.glob("*.log")}
    r = subprocess.run(cmd, cwd=w, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    pack_log = next(logs.glob("cells_*.log")).read_text()
    kept_line = [x for x in pack_log.splitlines() if "current, kept: " in x]
    assert kept_line and sorted(kept_line[-1].split("current, kept: ")[1].split(", ")) == made, pack_log
    assert all(len((logs / f"{c}.log").read_text().splitlines()) == lines[c] for c in made)  # not run again
    assert (w / "runs/smoke/results/crammer_singer2005/fig6.json").is_file()
