"""The processed data checked against their manifest before a run uses them (issue 41, item 7).

``rankrepro preprocess`` writes the sha256 of ``data/processed/<name>/data.npz`` into its
``manifest.json``.  Before any trial runs on it (:func:`rankrepro.pipeline.runner.default_data_path`,
the cell jobs of :mod:`rankrepro.jobs`, ``rankrepro run``), :func:`check_processed` refuses,
naming the file and how to rebuild it:

* a data folder or file that resolves outside the checkout (a symbolic link);
* a manifest whose sums are absent, zeroed or not sha256 digests (a manifest written before
  the sum was kept, or edited);
* a ``data.npz`` whose bytes are not those its manifest names (a valid npz altered after it
  was built).

Cheaply, as the raw files are checked (:func:`rankrepro.data.fetch.check_local`): a stamp of
the file's size, modification time, inode and change time (``data/processed/<name>/.stamps.json``),
written only after a real hash matched, lets later runs skip the hash; any write to the file
changes its change time, which no user can set back, so an edit is always hashed again.

Not imported by the data builders or protocols on purpose: checking a file is not making
the numbers, and nothing here is in a cell's code fingerprint
(:mod:`rankrepro.pipeline.codeprint`).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..checkout import refuse_outside
from ..files import read_json

PROCESSED = "data.npz"
PROCESSED_MANIFEST = "manifest.json"
#: (size, mtime, inode, ctime) of the processed file when its sha256 last matched the manifest's
STAMPS = ".stamps.json"

_SHA256 = re.compile(r"[0-9a-f]{64}")


class ProcessedDataRefused(ValueError):
    """Processed data a run must not use; the message names the file and how to rebuild it."""


def file_stamp(path: str | os.PathLike) -> list[int]:
    """What a stamp compares: size, modification time, inode and change time (ns)."""
    st = os.stat(path)
    return [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]


def valid_sha256(value) -> bool:
    """A sha256 digest in hex that is not all zeros."""
    return isinstance(value, str) and bool(_SHA256.fullmatch(value)) and value.strip("0") != ""


def _rebuild(name: str) -> str:
    return (f"rebuild it: `rankrepro preprocess {name}` (or delete data/processed/{name}/ and run `make data`)")


def _sha256(path: Path) -> str:
    from .fetch import sha256

    return sha256(path)


def check_processed(data_path: str | os.PathLike, root: str | os.PathLike | None = None) -> Path:
    """``data_path`` (a ``data/processed/<name>/data.npz``) when it is the file its manifest
    names; raises :class:`ProcessedDataRefused` (or :class:`~rankrepro.checkout.OutsideCheckout`,
    :class:`FileNotFoundError`, :class:`~rankrepro.files.DamagedFile`), naming the file, otherwise.
    ``root``: the checkout it must stay in (default: the current folder)."""
    p = Path(data_path)
    folder, name = p.parent, p.parent.name
    root = Path.cwd() if root is None else Path(root)
    refuse_outside(folder, root, f"the processed data folder of {name}")
    refuse_outside(p, root, f"the processed data of {name}")
    if not p.is_file():
        raise FileNotFoundError(f"{p}: the processed data of {name} are absent; run `make data` "
                                f"(or `rankrepro preprocess {name}`)")
    manifest = folder / PROCESSED_MANIFEST
    refuse_outside(manifest, root, f"the processed data manifest of {name}")
    m = read_json(manifest, "processed-data manifest")
    want = m.get("sha256")
    if not valid_sha256(want):
        what = "no sha256" if want is None else f"sha256 {str(want)[:80]!r}, which is not a sha256 digest"
        raise ProcessedDataRefused(f"{manifest}: names {what} of {p} (a manifest written before the processed file's "
                                   f"sum was kept, or edited), so {p} cannot be checked; {_rebuild(name)}")
    sources = m.get("sources")
    bad = ([f"{rel}: {v!r}" for rel, v in sources.items() if not valid_sha256(v)] if isinstance(sources, dict)
           and sources else ["none listed"])
    if bad:
        raise ProcessedDataRefused(f"{manifest}: the source files' sums are absent, zeroed or not sha256 digests "
                                   f"({'; '.join(bad[:3])}); {_rebuild(name)}")
    stamps_file = folder / STAMPS
    try:
        stamps = json.loads(stamps_file.read_text())
    except (OSError, ValueError):
        stamps = {}
    st = stamps.get(PROCESSED) if isinstance(stamps, dict) else None
    if isinstance(st, dict) and st.get("sha256") == want and st.get("stamp") == file_stamp(p):
        return _vouched(p, m, name, root)
    before = file_stamp(p)  # taken before hashing: a write during the hash changes the change time
    got = _sha256(p)
    if got != want:
        raise ProcessedDataRefused(f"{p}: sha256 {got} is not the {want} its manifest {manifest} records (altered "
                                   f"after it was built?); refused; {_rebuild(name)}")
    tmp = folder / f".{STAMPS}.{os.getpid()}.tmp"
    try:  # only a real hash that matched writes a stamp
        tmp.write_text(json.dumps({PROCESSED: {"sha256": got, "stamp": before}}, indent=1))
        os.replace(tmp, stamps_file)
    except OSError:  # a read-only copy: hashed again next time
        tmp.unlink(missing_ok=True)
    return _vouched(p, m, name, root)


def _vouched(p: Path, manifest: dict, name: str, root: Path) -> Path:
    """``p`` when its manifest is sealed under this user's secret, or (once, then sealed) when the
    verified raw files give the same arrays; else :class:`ProcessedDataRefused`
    (:mod:`.processed_seal`: a forged npz with its manifest's sum updated is not used)."""
    from . import processed_seal

    if processed_seal.sealed(p.parent, manifest):
        return p
    from .preprocess import rederived_problem

    why = rederived_problem(name, p, p.parent.parent.parent)  # <checkout>/data
    if why is not None:
        raise ProcessedDataRefused(f"{p}: not sealed by this user's preprocessing and not what data/raw/{name} gives: "
                                   f"{why}; refused; {_rebuild(name)}")
    processed_seal.seal(p.parent, manifest)
    return p
