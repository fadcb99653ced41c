"""Files stay in the checkout (issue 41, item 7): data folders and report inputs that resolve
outside it are refused naming the path; processed data are built from the bytes that were
hashed; a run refuses a processed file that is not the one its manifest names; a raw edit that
keeps size and modification time is not reported *verified*; an OS error of preprocessing is
one line naming the file.  Each case failed on the code before this work."""
from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import ROOT
from rankrepro.checkout import OutsideCheckout
from rankrepro.data import fetch as F
from rankrepro.data import preprocess as P
from rankrepro.data.processed_check import ProcessedDataRefused, check_processed
from rankrepro.data.readers import read_movielens_100k
from rankrepro.files import WriteFailed

from test_data_fetch import toy  # noqa: F401 - the toy data set fixture (u.data: two ratings)

QUIET = dict(log=lambda m: None)
SILENT = dict(progress=lambda m: None)
OTHER = b"1\t2\t1\t4\n2\t2\t1\t5\n"  # the same size as the toy's u.data, other scores


def _fetched(toy):
    entry, mirror, paths = toy
    F.fetch("toy", paths=paths, mirror=mirror, **QUIET)
    return entry, mirror, paths


def _scores(npz: Path) -> list:
    with np.load(npz) as z:
        return z["score"].tolist()


# -- data folders linked outside the checkout --------------------------------------------------
def test_processed_folder_linked_outside_is_refused_by_preprocess(toy, tmp_path_factory):
    entry, mirror, paths = _fetched(toy)
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    paths.processed.mkdir(parents=True, exist_ok=True)
    (paths.processed / "toy").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(OutsideCheckout) as err:
        P.preprocess("toy", paths=paths, **SILENT)
    assert str(paths.processed / "toy") in str(err.value) and str(elsewhere) in str(err.value)
    assert list(elsewhere.iterdir()) == []  # nothing written through the link


def test_raw_folder_linked_outside_is_refused_by_fetch_and_preprocess(toy, tmp_path_factory):
    entry, mirror, paths = toy
    elsewhere = tmp_path_factory.mktemp("elsewhere-raw")
    paths.raw.mkdir(parents=True)
    (paths.raw / "toy").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(OutsideCheckout, match="raw data folder of toy"):
        F.fetch("toy", paths=paths, mirror=mirror, **QUIET)
    assert list(elsewhere.iterdir()) == []
    with pytest.raises(OutsideCheckout, match=str(paths.raw / "toy")):
        P.preprocess("toy", paths=paths, **SILENT)


def test_processed_data_linked_outside_is_refused_before_a_run(toy, tmp_path, tmp_path_factory, monkeypatch):
    """default_data_path (every run: run_cell, verify, runfiles) refuses data/processed/<ds>
    that leads out of the checkout, though the file there is a perfectly good one."""
    entry, mirror, paths = _fetched(toy)
    npz = P.preprocess("toy", paths=paths, **SILENT)
    elsewhere = tmp_path_factory.mktemp("elsewhere-processed") / "toy"
    os.rename(npz.parent, elsewhere)
    npz.parent.symlink_to(elsewhere, target_is_directory=True)
    monkeypatch.chdir(tmp_path)  # data/ here
    monkeypatch.setenv(F.MIRROR_ENV, str(mirror))
    from rankrepro.pipeline.runner import default_data_path

    with pytest.raises(OutsideCheckout) as err:
        default_data_path(SimpleNamespace(cfg=SimpleNamespace(dataset=SimpleNamespace(source="toy")), name="toy-exp"))
    assert "data/processed/toy" in str(err.value) and str(elsewhere) in str(err.value)


# -- report inputs linked outside --------------------------------------------------------------
RECORD = "results/harrington2003/table1.json"


def test_a_png_linked_outside_is_not_embedded(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    from rankrepro.report.html import build_report

    secret = Path("/etc/passwd") if Path("/etc/passwd").is_file() else None
    if secret is None:
        secret = Path(os.path.realpath(tmp_path.parent)) / f"secret-{os.getpid()}.txt"
        secret.write_text("root:x:0:0\n")
    link = tmp_path / "figures" / "harrington2003" / "table1.png"
    link.parent.mkdir(parents=True)
    link.symlink_to(secret)
    out = tmp_path / "results" / "report" / "index.html"
    with pytest.raises(OutsideCheckout) as err:
        build_report([RECORD], {"harrington2003/table1": str(link)}, out, "paper")
    assert str(link) in str(err.value) and str(secret) in str(err.value)
    assert not out.exists()
    # a link that stays in the checkout is embedded as before (as the figure of the record that
    # names its bytes: issue 58, a PNG no record names is refused)
    link = link.with_name("fig2.png")
    link.symlink_to(ROOT / "figures" / "harrington2003" / "fig2.png")
    build_report(["results/harrington2003/fig2.json"], {"harrington2003/fig2": str(link)}, out, "paper")
    assert "data:image/png;base64," in out.read_text()


def test_a_cli_report_reads_only_inside_its_out_folder(tmp_path, monkeypatch):
    """rankrepro run's report (roots=[--out]) refuses a record outside its --out folder."""
    monkeypatch.chdir(ROOT)
    from rankrepro.report.html import build_report

    out = tmp_path / "results" / "report" / "index.html"
    with pytest.raises(OutsideCheckout, match="a record the report reads"):
        build_report([str(ROOT / RECORD)], {}, out, "smoke", roots=[tmp_path])
    assert not out.exists()


# -- processed data built from the bytes that were hashed ------------------------------------------
def test_a_raw_file_swapped_after_its_hash_cannot_be_parsed(toy, monkeypatch):
    """The reader is made to swap data/raw's file just before it reads: it must parse the bytes
    that were hashed (the private copy), never the swapped file."""
    entry, mirror, paths = _fetched(toy)
    raw = paths.raw / "toy" / "u.data"
    want = read_movielens_100k(raw).score.tolist()

    def swapping_reader(path):
        raw.write_bytes(OTHER)
        return read_movielens_100k(path)

    monkeypatch.setitem(P._READERS, "movielens_100k", swapping_reader)
    npz = P.preprocess("toy", paths=paths, **SILENT)
    assert _scores(npz) == want != read_movielens_100k(raw).score.tolist()
    man = json.loads((npz.parent / "manifest.json").read_text())
    assert man["sources"]["u.data"] == entry.files["u.data"]


def test_a_raw_file_swapped_between_check_and_read_is_refused(toy, monkeypatch):
    """Swapped after the re-hash of every raw file (the old code then read it again): the bytes
    read are hashed as they are read, so the swap is refused naming the file, nothing built."""
    entry, mirror, paths = _fetched(toy)
    raw = paths.raw / "toy" / "u.data"
    real = P.check_local

    def check_then_swap(*a, **k):
        out = real(*a, **k)
        raw.write_bytes(OTHER)
        return out

    monkeypatch.setattr(P, "check_local", check_then_swap)
    with pytest.raises(F.ChecksumError) as err:
        P.preprocess("toy", paths=paths, **SILENT)
    assert str(raw) in str(err.value) and "changed after it was verified" in str(err.value)
    assert not (paths.processed / "toy" / "data.npz").exists()
    assert not [p for p in paths.processed.rglob("*") if p.is_file()]  # no copy left behind


def test_a_reader_error_names_the_raw_file_not_the_copy(toy, monkeypatch):
    entry, mirror, paths = toy
    bad = b"1\t2\tx\t4\n"
    (mirror / "toy" / "u.data").write_bytes(bad)
    import hashlib

    from rankrepro.data import registry

    monkeypatch.setitem(registry.DATASETS, "toy", registry.DatasetEntry(**{**entry.__dict__, "files": {
        "u.data": hashlib.sha256(bad).hexdigest(), "README": entry.files["README"]}}))
    F.fetch("toy", paths=paths, mirror=mirror, **QUIET)
    with pytest.raises(ValueError) as err:
        P.preprocess("toy", paths=paths, **SILENT)
    assert str(paths.raw / "toy" / "u.data") + ":1:" in str(err.value) and ".preprocess-" not in str(err.value)


# -- the processed file checked against its manifest ---------------------------------------------
def _preprocessed(toy):
    entry, mirror, paths = _fetched(toy)
    npz = P.preprocess("toy", paths=paths, **SILENT)
    root = paths.raw.parent.parent
    return npz, root


def test_the_manifest_names_the_processed_files_sum(toy):
    npz, root = _preprocessed(toy)
    import hashlib

    man = json.loads((npz.parent / "manifest.json").read_text())
    assert man["sha256"] == hashlib.sha256(npz.read_bytes()).hexdigest()
    assert check_processed(npz, root=root) == npz


def test_an_altered_processed_file_is_refused_before_any_trial(toy, tmp_path, monkeypatch):
    npz, root = _preprocessed(toy)
    with np.load(npz) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["score"] = arrays["score"][::-1].copy()  # a valid npz, other numbers
    with open(npz, "wb") as f:
        np.savez(f, **arrays)
    with pytest.raises(ProcessedDataRefused) as err:
        check_processed(npz, root=root)
    assert str(npz) in str(err.value) and "rankrepro preprocess toy" in str(err.value)
    # and through the runner: no trial starts
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(F.MIRROR_ENV, str(toy[1]))
    from rankrepro.pipeline import runner

    def no_trial(*a, **k):
        raise AssertionError("a trial started on altered data")

    monkeypatch.setattr(runner, "trial_spec", no_trial)
    exp = SimpleNamespace(cfg=SimpleNamespace(dataset=SimpleNamespace(source="toy")), name="toy-exp",
                          cell=lambda cid: SimpleNamespace(id=cid))
    with pytest.raises(ProcessedDataRefused, match="data/processed/toy/data.npz"):
        runner.run_cell(exp, "c0")


def test_keeping_arrays_refuses_altered_processed_data(toy, tmp_path, monkeypatch):
    """`make data`'s keep_arrays step reads the processed data too: checked first."""
    npz, root = _preprocessed(toy)
    with open(npz, "ab") as f:
        f.write(b"\0")
    monkeypatch.chdir(tmp_path)
    from rankrepro import jobs

    monkeypatch.setattr(jobs, "kept_array_calls", lambda *a, **k: pytest.fail("arrays built from altered data"))
    monkeypatch.setattr(jobs, "_load", lambda *a, **k: None)
    with pytest.raises(ProcessedDataRefused, match="data/processed/toy/data.npz"):
        jobs.job_keep_arrays(["x"], "smoke", "config", {"x": "data/processed/toy/data.npz"}, str(tmp_path / "k.json"))


def test_an_edit_keeping_size_and_time_of_the_processed_file_is_hashed_again(toy):
    """The stamp (size, mtime, inode, ctime) spares the hash only while the file is untouched."""
    npz, root = _preprocessed(toy)
    check_processed(npz, root=root)  # stamps it
    stamps = json.loads((npz.parent / ".stamps.json").read_text())
    assert stamps["data.npz"]["stamp"][:2] == [npz.stat().st_size, npz.stat().st_mtime_ns]
    st = npz.stat()
    data = bytearray(npz.read_bytes())
    data[-30] ^= 0xFF  # in the zip's directory: same size
    with open(npz, "r+b") as f:
        f.write(bytes(data))
    os.utime(npz, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(ProcessedDataRefused, match="altered"):
        check_processed(npz, root=root)


@pytest.mark.parametrize("damage", ["zeroed", "absent", "not hex", "source zeroed", "sources absent"])
def test_a_manifest_without_real_sums_is_refused(toy, damage, tmp_path, monkeypatch):
    """Refused where a run takes its data (runner.default_data_path), naming the manifest."""
    npz, root = _preprocessed(toy)
    mp = npz.parent / "manifest.json"
    man = json.loads(mp.read_text())
    if damage == "zeroed":
        man["sha256"] = "0" * 64
    elif damage == "absent":
        del man["sha256"]
    elif damage == "not hex":
        man["sha256"] = "z" * 64
    elif damage == "source zeroed":
        man["sources"]["u.data"] = "0" * 64
    else:
        del man["sources"]
    mp.write_text(json.dumps(man))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(F.MIRROR_ENV, str(toy[1]))
    from rankrepro.pipeline.runner import default_data_path

    with pytest.raises(ProcessedDataRefused) as err:
        default_data_path(SimpleNamespace(cfg=SimpleNamespace(dataset=SimpleNamespace(source="toy")), name="toy-exp"))
    assert "data/processed/toy/manifest.json" in str(err.value) and "rankrepro preprocess toy" in str(err.value)


# -- raw stamps: an edit keeping size and modification time -----------------------------------------
def test_a_raw_edit_keeping_size_and_mtime_is_not_reported_verified(toy):
    entry, mirror, paths = _fetched(toy)
    assert F.availability("toy", paths, mirror).state == "verified"
    raw = paths.raw / "toy" / "u.data"
    st = raw.stat()
    assert len(OTHER) == st.st_size
    with open(raw, "r+b") as f:  # in place: the same inode
        f.write(OTHER)
    os.utime(raw, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (raw.stat().st_size, raw.stat().st_mtime_ns, raw.stat().st_ino) == (st.st_size, st.st_mtime_ns, st.st_ino)
    a = F.availability("toy", paths, mirror)
    assert a.state == "changed" and str(raw) in a.reason


# -- OS errors of preprocessing named in one line --------------------------------------------------
def test_a_full_disk_while_preprocessing_is_one_line_naming_the_file(toy, monkeypatch):
    entry, mirror, paths = _fetched(toy)

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(P.np, "savez", full)
    with pytest.raises(WriteFailed) as err:
        P.preprocess("toy", paths=paths, **SILENT)
    msg = str(err.value)
    assert "\n" not in msg and str(paths.processed / "toy" / "data.npz") in msg and "No space left" in msg
    assert not [p for p in paths.processed.rglob("*") if p.is_file()]  # no partial file


def test_an_unreadable_raw_file_is_one_line_naming_it(toy, monkeypatch):
    entry, mirror, paths = _fetched(toy)
    raw = paths.raw / "toy" / "u.data"

    def refusing_open(file, *a, **k):  # preprocessing's own reads (the hash is made elsewhere)
        if Path(file) == raw:
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return open(file, *a, **k)

    monkeypatch.setattr(P, "open", refusing_open, raising=False)
    with pytest.raises(OSError) as err:
        P.preprocess("toy", paths=paths, **SILENT)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(f"cannot read {raw}") and "Permission denied" in msg


# -- data files that are links (issue 58, item 4) -----------------------------------------------
def test_a_data_file_that_is_a_link_is_refused(toy, monkeypatch, tmp_path_factory):
    """A hand-placed data file that is a symbolic link (``Fold5/trainingset.txt -> /etc/passwd``)
    is neither hashed nor read: fetch, the data status and preprocessing refuse it in one line
    naming it, and the link is left as it is."""
    from dataclasses import replace

    from rankrepro.checkout import LinkedFile
    from rankrepro.data import registry

    entry, mirror, paths = toy
    monkeypatch.setitem(registry.DATASETS, "toy", replace(entry, files={"u.data": None, "README": None}))
    secret = tmp_path_factory.mktemp("outside") / "passwd"
    secret.write_text("1\t2\t3\t4\n2\t2\t5\t5\n")  # parses as ratings: it would be read and hashed
    raw = paths.raw / "toy"
    raw.mkdir(parents=True)
    (raw / "README").write_text("toy data\n")
    (raw / "u.data").symlink_to(secret)
    with pytest.raises(LinkedFile) as err:  # hand-placed, first fetch: nothing hashed through it
        F.fetch("toy", paths=paths, mirror=mirror, **QUIET)
    msg = str(err.value)
    assert str(raw / "u.data") in msg and "symbolic link" in msg and "\n" not in msg
    assert (raw / "u.data").is_symlink() and not (raw / F.MANIFEST).exists()
    # fetched as a file, then swapped for a link: the status names it, preprocessing refuses it
    (raw / "u.data").unlink()
    (raw / "u.data").write_text(secret.read_text())
    F.fetch("toy", paths=paths, mirror=mirror, **QUIET)
    (raw / "u.data").unlink()
    (raw / "u.data").symlink_to(secret)
    a = F.availability("toy", paths, mirror)
    assert a.state == "changed" and str(raw / "u.data") in a.reason and "symbolic link" in a.reason
    assert "link" in a.how_to_obtain and "quarantine" not in a.how_to_obtain
    with pytest.raises(LinkedFile, match="symbolic link"):
        F.fetch("toy", paths=paths, mirror=mirror, **QUIET)
    with pytest.raises((LinkedFile, F.ChecksumError), match="symbolic link"):
        P.preprocess("toy", paths=paths, **SILENT)
    assert (raw / "u.data").is_symlink() and secret.read_text().startswith("1\t2")
    assert not (paths.processed / "toy" / "data.npz").exists()
