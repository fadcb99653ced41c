"""One run per output folder (issue 41, item 3): a second `rankrepro run` or `rankrepro arena`
into a folder another run writes into stops at once, naming the first's pid (before: both
exited 0 and one run's results silently replaced the other's); a killed run leaves no lock; the
start-up clean-up removes only the project's own temporaries, and none while a run writes."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time

import pytest

from rankrepro.cli import main
from rankrepro.pipeline.outlock import (LOCK_NAME, OutputRefused, in_use, is_own_temporary, output_lock,
                                       remove_own_temporaries)

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


# -- the lock file as a user may find it planted (issue "Reliability IV", item 1) ------------------------
def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("rankrepro: error: ") and "\n" not in err and "Traceback" not in err, err
    return err


def test_a_planted_lock_link_does_not_empty_the_file_it_leads_to(tmp_path, capsys):
    """Before: `ln -s <file outside> <out>/.rankrepro.lock; rankrepro run ... --out <out>` exited 0
    and the file outside was now 0 bytes (the lock followed the link and truncated it)."""
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_NAME).symlink_to(outside)
    assert main(["run", "harrington2003/table1", "experiment.seed=777", "--out", str(out)]) == 2
    err = _one_line_error(capsys)
    assert str(out / LOCK_NAME) in err and "symbolic link" in err
    assert outside.read_text() == "precious\n"
    assert not (out / "results").exists()  # nothing run, nothing written


def _fifo(p):
    os.mkfifo(p)


def _folder(p):
    p.mkdir()


def _hard_link(p):
    (p.parent.parent / "other.txt").write_text("123\n")
    os.link(p.parent.parent / "other.txt", p)


def _notes(p):
    p.write_text("my notes, not a pid\n")


@pytest.mark.parametrize("plant,why", [(_folder, "a folder"), (_fifo, "a FIFO"), (_hard_link, "hard links"),
                                       (_notes, "something other than a run's pid")])
def test_a_lock_path_that_is_not_our_own_lock_file_is_refused_untouched(tmp_path, plant, why):
    out = tmp_path / "out"
    out.mkdir()
    plant(out / LOCK_NAME)
    before = (out / LOCK_NAME).read_bytes() if (out / LOCK_NAME).is_file() else None
    with pytest.raises(OutputRefused, match=why) as e:
        with output_lock(out):
            pytest.fail("held a planted lock")
    assert str(out / LOCK_NAME) in str(e.value) and "\n" not in str(e.value)
    if before is not None:
        assert (out / LOCK_NAME).read_bytes() == before


def test_a_lock_file_of_another_user_is_refused(tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_NAME).write_text("")
    uid = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: uid + 1)  # the file is then another user's
    with pytest.raises(OutputRefused, match="belongs to another user"):
        with output_lock(out):
            pytest.fail("held another user's lock")


def test_an_earlier_runs_lock_file_is_taken_again(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_NAME).write_text("4242\n")  # a run that ended (killed: its pid left)
    with output_lock(out):
        assert (out / LOCK_NAME).read_text() == f"{os.getpid()}\n"
    assert (out / LOCK_NAME).read_text() == ""


@pytest.mark.parametrize("target", ["/dev/null", "file"])
def test_an_out_that_is_not_a_folder_is_one_line(tmp_path, capsys, target):
    out = "/dev/null" if target == "/dev/null" else str(tmp_path / "notes.txt")
    if target == "file":
        (tmp_path / "notes.txt").write_text("mine\n")
    assert main(["run", "harrington2003/table1", "--out", out]) == 2
    assert f"--out {out}: not a folder" in _one_line_error(capsys)
    if target == "file":
        assert (tmp_path / "notes.txt").read_text() == "mine\n"


def test_a_full_disk_while_taking_the_lock_is_one_line(tmp_path, capsys, monkeypatch):
    def full(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "pwrite", full)
    out = tmp_path / "out"
    assert main(["run", "harrington2003/table1", "--out", str(out)]) == 1
    err = _one_line_error(capsys)
    assert f"cannot write {out / LOCK_NAME}: No space left on device" in err


def test_a_full_disk_while_the_run_writes_its_cells_is_one_line(tmp_path, capsys, monkeypatch):
    """Before: the run's traceback ended in OSError: [Errno 28] No space left on device."""
    import pandas as pd

    def full(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(pd.DataFrame, "to_parquet", full)
    out = tmp_path / "out"
    assert main(["run", "harrington2003/table1", "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]  # after the run's progress lines
    assert err == f"rankrepro: error: cannot write {out}: No space left on device", err
    assert in_use(out) is None  # the lock released
