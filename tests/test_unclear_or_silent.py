"""Unclear or silent (issue 58, item 7): a private copy left by a preprocessing run killed with
SIGTERM is removed by a later run; the kept catalog's secret replaced is said as such; a cache
folder others may write is said once; a cache path that is a file is refused in one line."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rankrepro.data.fetch import Paths
from rankrepro.data.preprocess import preprocess

ROOT = Path(__file__).resolve().parents[1]
NAME = "cystic-fibrosis"


def test_a_copy_left_by_a_killed_preprocessing_is_removed_by_the_next_run(tmp_path, monkeypatch):
    src = ROOT / "data/raw" / NAME
    if not (src / "MANIFEST.json").is_file():
        pytest.skip(f"{src} is not fetched here")
    monkeypatch.setenv("RANKREPRO_CACHE_DIR", str(tmp_path / "cache"))
    shutil.copytree(src, tmp_path / "data/raw" / NAME)
    work = tmp_path / "data/processed"
    work.mkdir(parents=True)
    # a process killed with SIGTERM while it held its private copy
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    stale = work / f".preprocess-{NAME}-{p.pid}-abc123_x"
    (stale / "cfquery").parent.mkdir(parents=True)
    (stale / "cfquery").write_text("a half copy")
    p.send_signal(signal.SIGTERM)
    p.wait()
    running = work / f".preprocess-{NAME}-{os.getpid()}-zzz999_y"  # a live one's (this process's) is left
    running.mkdir()
    preprocess(NAME, paths=Paths.under(tmp_path / "data"), progress=lambda m: None)
    assert not stale.exists() and running.is_dir()
    assert (work / NAME / "data.npz").is_file()


@pytest.fixture(scope="module")
def one_experiment(tmp_path_factory):
    from test_cache_mac import _one_experiment

    tmp = tmp_path_factory.mktemp("one")
    return _one_experiment(tmp, ROOT / "config")


@pytest.mark.parametrize("mode", [0o1777, 0o777])
def test_a_cache_folder_others_may_write_is_said_once(tmp_path, one_experiment, capfd, mode):
    from rankrepro.pipeline import cache
    from rankrepro.pipeline.catalog import load_catalog

    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(mode)
    cache._SAID.clear()
    load_catalog("smoke", config_dir=one_experiment, cache_dir=d)
    load_catalog("smoke", config_dir=one_experiment, cache_dir=d)
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "may be written by others" in err[0] and f"{mode:04o}" in err[0], err
    assert not list(d.iterdir())  # no secret, no catalog kept where others could replace them


def test_a_cache_path_that_is_a_file_is_refused_in_one_line(tmp_path, one_experiment, capfd):
    from rankrepro.pipeline import cache
    from rankrepro.pipeline.catalog import load_catalog

    f = tmp_path / "cachefile"
    f.write_text("mine")
    cache._SAID.clear()
    cat = load_catalog("smoke", config_dir=one_experiment, cache_dir=f)
    assert list(cat) == ["harrington2003/table1"]
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is a file, not a folder" in err[0], err
    assert f.read_text() == "mine"
