"""Raw data edited after verification (issue 30, item 4): noticed by the status, refused by
preprocessing (naming the file); an unpinned file is never *verified*; a corrupt processed
file names itself when read."""
from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

from rankrepro.data import fetch as F
from rankrepro.data import registry
from rankrepro.data.preprocess import CorruptData, load, preprocess
from rankrepro.data.registry import DatasetEntry

from test_data_fetch import HAVE_MIRROR, MIRROR, toy  # noqa: F401 - the toy data set fixture

QUIET = dict(log=lambda m: None)


def _edit_keeping_size(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert old in data and len(old) == len(new)
    path.write_bytes(data.replace(old, new, 1))


def test_a_raw_file_edited_after_verification_is_noticed_and_refused(toy):
    entry, mirror, paths = toy
    F.fetch("toy", paths=paths, mirror=mirror, **QUIET)
    assert F.availability("toy", paths, mirror).state == "verified"
    raw = paths.raw / "toy" / "u.data"
    _edit_keeping_size(raw, b"\t3\t", b"\t4\t")  # one score changed, same size
    a = F.availability("toy", paths, mirror)
    assert a.state == "changed" and not a.usable and str(raw) in a.reason
    row = next(r for r in F.status_table(paths, mirror, probe=False).splitlines() if r.startswith("toy "))
    assert row.split()[1] == "changed" and "u.data" in row
    with pytest.raises(F.ChecksumError) as err:
        preprocess("toy", paths=paths, progress=lambda m: None)
    assert str(raw) in str(err.value)
    assert not (paths.processed / "toy").exists()
    # fetching again quarantines the edited file and takes the mirror's
    F.fetch("toy", paths=paths, mirror=mirror, **QUIET)
    assert F.availability("toy", paths, mirror).state == "verified"
    assert preprocess("toy", paths=paths, progress=lambda m: None).is_file()


def test_an_edit_that_keeps_size_and_time_is_refused_by_preprocessing(toy):
    """The status trusts a stamp of size and modification time; preprocessing hashes in full."""
    entry, mirror, paths = toy
    F.fetch("toy", paths=paths, mirror=mirror, **QUIET)
    raw = paths.raw / "toy" / "u.data"
    st = raw.stat()
    _edit_keeping_size(raw, b"\t5\t", b"\t1\t")
    os.utime(raw, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(F.ChecksumError, match="u.data changed after it was verified"):
        preprocess("toy", paths=paths, progress=lambda m: None)


def test_a_new_time_alone_is_hashed_again_and_still_verified(toy):
    entry, mirror, paths = toy
    F.fetch("toy", paths=paths, mirror=mirror, **QUIET)
    raw = paths.raw / "toy" / "u.data"
    stamps = json.loads((paths.raw / "toy" / F.STAMPS).read_text())
    assert stamps["u.data"]["sha256"] == entry.files["u.data"]
    os.utime(raw, ns=(raw.stat().st_atime_ns, raw.stat().st_mtime_ns + 10**9))
    assert F.availability("toy", paths, mirror).state == "verified"
    assert json.loads((paths.raw / "toy" / F.STAMPS).read_text())["u.data"]["stamp"][1] == raw.stat().st_mtime_ns


def test_a_forged_stamp_does_not_pass_preprocessing(toy):
    entry, mirror, paths = toy
    F.fetch("toy", paths=paths, mirror=mirror, **QUIET)
    raw = paths.raw / "toy" / "u.data"
    raw.write_text("1\t2\t3\t4\n9\t9\t1\t1\n")
    st = paths.raw / "toy" / F.STAMPS
    stamps = json.loads(st.read_text())
    stamps["u.data"]["stamp"] = [raw.stat().st_size, raw.stat().st_mtime_ns]
    st.write_text(json.dumps(stamps))
    with pytest.raises(F.ChecksumError, match="u.data"):
        preprocess("toy", paths=paths, progress=lambda m: None)


def test_an_unpinned_file_is_never_reported_verified(toy, monkeypatch):
    entry, mirror, paths = toy
    monkeypatch.setitem(registry.DATASETS, "toy", DatasetEntry(**{**entry.__dict__, "files": {"u.data": None,
                                                                                              "README": None}}))
    logged = []
    with pytest.warns(UserWarning, match="not verified"):
        F.fetch("toy", paths=paths, mirror=mirror, log=logged.append)
    assert logged and not any("verified (" in m and "not verified" not in m for m in logged), logged
    a = F.availability("toy", paths, mirror)
    assert a.state == "unpinned" and a.usable and "not verified" in a.reason and "u.data" in a.reason
    row = next(r for r in F.status_table(paths, mirror, probe=False).splitlines() if r.startswith("toy "))
    assert "verified" not in row.replace("not verified", "")
    # its recorded sum still guards it
    _edit_keeping_size(paths.raw / "toy" / "u.data", b"\t3\t", b"\t4\t")
    assert F.availability("toy", paths, mirror).state == "changed"
    with pytest.raises(F.ChecksumError, match="recorded when it was fetched"):
        preprocess("toy", paths=paths, progress=lambda m: None)
    # and fetching again does not take the edited file as the one fetched before
    with pytest.warns(UserWarning):
        F.fetch("toy", paths=paths, mirror=mirror, **QUIET)
    assert F.sha256(paths.raw / "toy" / "u.data") == F.sha256(mirror / "toy" / "u.data")


def test_data_status_of_an_experiment_says_changed(toy, monkeypatch, tmp_path):
    entry, mirror, paths = toy
    monkeypatch.chdir(tmp_path)  # data/ here
    F.fetch("toy", paths=F.Paths(), mirror=mirror, **QUIET)
    _edit_keeping_size(Path("data/raw/toy/u.data"), b"\t3\t", b"\t4\t")
    monkeypatch.setenv(F.MIRROR_ENV, str(mirror))
    from rankrepro.data.status import data_status

    st = data_status("toy", probe=False)
    assert not st.runnable and "changed after it was verified" in st.reason and "u.data" in st.reason


@pytest.mark.parametrize("damage", ["truncate", "garbage", "member"])
def test_a_corrupt_processed_file_names_itself(toy, damage):
    entry, mirror, paths = toy
    F.fetch("toy", paths=paths, mirror=mirror, **QUIET)
    npz = preprocess("toy", paths=paths, progress=lambda m: None)
    data = npz.read_bytes()
    if damage == "truncate":
        npz.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        npz.write_bytes(b"not a zip file at all" * 10)
    else:  # a stored array's bytes damaged inside an intact zip
        i = data.index(b"\x93NUMPY")
        npz.write_bytes(data[:i + 8] + b"\xff" * 40 + data[i + 48:])
    with pytest.raises(CorruptData) as err:
        load("toy", paths=paths)
    assert str(npz) in str(err.value)


@pytest.mark.skipif(not HAVE_MIRROR, reason="no data mirror on this machine")
def test_cystic_fibrosis_with_one_score_changed(tmp_path):
    """The issue's case: one score changed in a verified data/raw/cystic-fibrosis/cfquery."""
    paths = F.Paths.under(tmp_path / "data")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.fetch("cystic-fibrosis", paths=paths, mirror=MIRROR, allow_network=False, **QUIET)
    assert F.availability("cystic-fibrosis", paths, Path("/nonexistent"), probe=False).state == "verified"
    cfq = paths.raw / "cystic-fibrosis" / "cfquery"
    text = cfq.read_bytes()
    i = text.index(b"RD") + 2  # the first query's judgements: doc number, then its four judges' scores
    j = next(k for k in range(i, len(text)) if text[k:k + 1] in b"012" and text[k - 1:k] in b" \n" and
             text[k + 1:k + 2] in b"012")
    cfq.write_bytes(text[:j] + (b"1" if text[j:j + 1] != b"1" else b"2") + text[j + 1:])
    a = F.availability("cystic-fibrosis", paths, Path("/nonexistent"), probe=False)
    assert a.state == "changed" and "cfquery" in a.reason
    assert "verified  " not in F.status_table(paths, Path("/nonexistent"), probe=False).split("cystic-fibrosis")[1][:60]
    with pytest.raises(F.ChecksumError) as err:
        preprocess("cystic-fibrosis", paths=paths, progress=lambda m: None)
    assert str(cfq) in str(err.value)
