"""One run per output folder (issue 41, item 3): a second `rankrepro run` or `rankrepro arena`
into a folder another run writes into stops at once, naming the first's pid (before: both
exited 0 and one run's results silently replaced the other's); a killed run leaves no lock; the
start-up clean-up removes only the project's own temporaries, and none while a run writes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from rankrepro.cli import main
from rankrepro.pipeline.outlock import LOCK_NAME, in_use, is_own_temporary, output_lock, remove_own_temporaries

HOLD = ("import sys, time\nfrom rankrepro.pipeline.outlock import output_lock\n"
        "with output_lock(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(120)\n")


@pytest.fixture
def holder(tmp_path):
    """Another process holding ``tmp_path/out`` as a run does."""
    out = tmp_path / "out"
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert p.stdout.readline().strip() == "held"
    yield out, p
    p.kill()
    p.wait()


def test_a_second_run_into_the_same_folder_stops_naming_the_first(holder, capsys):
    out, p = holder
    t0 = time.perf_counter()
    assert main(["run", "crammer_singer2005/fig6", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"in use by another run (pid {p.pid})" in err and str(out) in err, err
    assert time.perf_counter() - t0 < 60
    assert not (out / "results").exists()  # nothing written


def test_a_second_arena_run_stops_too(holder, capsys):
    out, p = holder
    assert main(["arena", "online", "--out", str(out)]) == 2
    assert f"pid {p.pid}" in capsys.readouterr().err
    assert not (out / "results").exists()


def test_a_killed_run_leaves_no_lock(holder):
    out, p = holder
    assert in_use(out) == str(p.pid)
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert in_use(out) is None
    with output_lock(out):
        assert (out / LOCK_NAME).read_text().strip() == str(os.getpid())


def test_the_clean_up_removes_only_the_projects_own_temporaries(tmp_path):
    res = tmp_path / "results" / "p"
    res.mkdir(parents=True)
    own = [res / ".fig6.json.k2x_9abq.tmp", res / ".cell-a~x=1.parquet.0a1b2c3d.tmp", res / ".fig6.config.yaml.tmp",
           res / ".manifest.json.12345.tmp"]
    mine = [res / ".mynotes.tmp", res / ".notes.txt.abcdefgh.tmp", res / ".draft.tmp", res / "notes.json.tmp"]
    for f in own + mine:
        f.write_text("x")
    assert [is_own_temporary(f.name) for f in own] == [True] * 4
    assert [is_own_temporary(f.name) for f in mine] == [False] * 4
    # a run writes into the folder now (another process): its temporaries are live, nothing removed
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert p.stdout.readline().strip() == "held"
        assert remove_own_temporaries([tmp_path / "results"], root=tmp_path) == []
    finally:
        p.kill()
        p.wait()
    assert sorted(remove_own_temporaries([tmp_path / "results"], root=tmp_path)) == sorted(own)
    assert all(f.is_file() for f in mine) and not any(f.exists() for f in own)
