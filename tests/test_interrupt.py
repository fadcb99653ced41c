"""Ctrl-C stops a running cell within a few seconds, even when a trial is inside one long
compiled call (a Ranking SVM's solver runs 11 s in one numba call; here a C loop that never
returns to the interpreter stands in for it), and leaves no partial output."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import ROOT, as_from_a_terminal

SLOW_PROTOCOL = '''
import sys
from rankrepro.protocols import PROTOCOLS


class SlowSpec:
    """A trial spec; unpickling it in a joblib worker imports this module there too."""


def slow_trial(spec):
    print("trial running", file=sys.stderr, flush=True)
    sum(range(10 ** 12))  # one C call of minutes that never checks for signals
    return [("online_rank_loss", 1, 0.0)]


PROTOCOLS["online"].run = slow_trial  # the online protocol, validated as usual, runs this trial
'''

JOB = '''
import sys
import slowproto
from rankrepro.io import write_parquet
from rankrepro.pipeline import runner
from rankrepro.pipeline.catalog import load_experiment

exp = load_experiment("crammer_singer2005/fig6", "smoke", config_dir=sys.argv[3])
runner.trial_spec = lambda *a, **k: slowproto.SlowSpec()
df = runner.run_cell(exp, "prank", n_jobs=int(sys.argv[2]), data_path=None)
write_parquet(df, sys.argv[1])
'''


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("n_jobs, sig, group", [(1, signal.SIGINT, True), (2, signal.SIGTERM, False)],
                         ids=["ctrl-c, trials in the job", "sigterm to the job, trials in 2 joblib workers"])
def test_signal_stops_a_running_cell_at_once(tmp_path, n_jobs, sig, group):
    """SIGINT to the process group (Ctrl-C in a terminal) or SIGTERM to the job (a scheduler):
    the job and its joblib workers are gone within 5 s, and no result file exists.  The job
    starts as from a terminal (SIGINT at its default action): a suite run in the background of
    a non-interactive shell hands its children SIGINT ignored, and an ignored Ctrl-C is not
    what this tests."""
    (tmp_path / "slowproto.py").write_text(SLOW_PROTOCOL)
    (tmp_path / "job.py").write_text(textwrap.dedent(JOB))
    out = tmp_path / "cell.parquet"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.Popen([sys.executable, str(tmp_path / "job.py"), str(out), str(n_jobs), str(ROOT / "config")],
                         cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True, start_new_session=True,
                         preexec_fn=as_from_a_terminal)
    try:
        deadline = time.monotonic() + 90
        while "trial running" not in p.stderr.readline():
            assert p.poll() is None and time.monotonic() < deadline, "the job never started its trial"
        # the line is printed inside the trial, where both signals end the process: from here on
        # the signal meets the uninterruptible call whenever it arrives (no race to win)
        time.sleep(0.2)
        (os.killpg if group else os.kill)(p.pid, sig)
        t0 = time.monotonic()
        p.wait(timeout=5)
        while _group_alive(p.pid) and time.monotonic() - t0 < 5:  # the workers too
            time.sleep(0.1)
        assert not _group_alive(p.pid), "a joblib worker runs on"
        print(f"stopped {time.monotonic() - t0:.2f} s after the signal")
    finally:
        if _group_alive(p.pid):
            os.killpg(p.pid, signal.SIGKILL)
        p.stderr.close()
    assert p.returncode != 0
    assert not out.exists() and not list(tmp_path.glob(".cell.parquet.*"))  # no partial output


def test_trial_progress_gives_an_eta():
    """Each progress line: trials done, time elapsed and the ETA (mean time per trial so far
    times the trials left), the last one 'done'."""
    import re

    from rankrepro.data.preprocess import eta_text
    from rankrepro.pipeline.catalog import load_experiment
    from rankrepro.pipeline.runner import run_cell

    exp = load_experiment("harrington2003/table1", "smoke")
    lines = []
    run_cell(exp, "prank", trials=range(10), progress=lines.append)
    assert len(lines) == 10
    for k, line in enumerate(lines, start=1):
        m = re.fullmatch(r"harrington2003/table1 \[smoke\] prank: (\d+)/10 trials, ([\d.]+)s elapsed, (ETA (\S+)|done)",
                         line)
        assert m and int(m.group(1)) == k, line
        if k < 10:
            el = float(m.group(2))
            lo, hi = eta_text((el - 0.05) / k * (10 - k)), eta_text((el + 0.05) / k * (10 - k))
            assert m.group(4) in (lo, hi), line
        else:
            assert m.group(3) == "done"
    assert [eta_text(s) for s in (0.4, 42, 185, 3725)] == ["0s", "42s", "3m05s", "1h02m"]


def test_preprocessing_reports_progress(tmp_path, monkeypatch):
    """Preprocessing a data set of several files (LETOR: 15, about 35 s) says how far it is,
    file by file, with an ETA; here on a two-fold LETOR data set written for the test (its
    files are not the registry's, so the raw files' check against the registry's sums, tested
    in test_data_integrity.py and test_files_in_checkout.py, is passed over here)."""
    import json
    from types import SimpleNamespace

    import rankrepro.data.preprocess as pp

    monkeypatch.setattr(pp, "check_local", lambda *a, **k: SimpleNamespace(ok=True, problem=None))

    from rankrepro.data.fetch import MANIFEST, Paths
    from rankrepro.data.preprocess import preprocess
    from rankrepro.data.registry import get

    entry = get("letor4-mq2008")
    raw = tmp_path / "raw" / entry.name
    raw.mkdir(parents=True)
    files = {}
    for k, rel in enumerate(entry.data_files):
        (raw / rel).parent.mkdir(parents=True, exist_ok=True)
        # each part its own queries (a query in two parts of a split is refused)
        rows = [f"{(i + q) % 3} qid:{q} " + " ".join(f"{j}:{(i * j % 7) / 7:.3f}" for j in range(1, 47))
                + f" #docid = d{q}_{i}" for q in range(10 * k + 1, 10 * k + 4) for i in range(5)]
        (raw / rel).write_text("\n".join(rows) + "\n")
        files[rel] = {"sha256": "0" * 64}
    (raw / MANIFEST).write_text(json.dumps({"files": files}))
    # and the hash made while reading them expects their own sums
    from rankrepro.data.fetch import sha256

    monkeypatch.setattr(pp, "_expected_sums", lambda e, m: {rel: sha256(raw / rel) for rel in e.data_files})
    lines = []
    preprocess(entry.name, paths=Paths.under(tmp_path), progress=lines.append)
    n = len(entry.data_files)
    reads = [ln for ln in lines if "files read" in ln]
    assert len(reads) == n > 1
    assert all(f"{k}/{n} files read" in ln and "elapsed, ETA" in ln for k, ln in enumerate(reads, start=1))
    assert lines[0].startswith(f"preprocessing {entry.name}") and "done in" in lines[-1]
